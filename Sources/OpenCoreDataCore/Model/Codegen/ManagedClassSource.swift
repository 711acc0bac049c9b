import Foundation

/// The Swift source of `@Managed` classes that describe a model as its model file does (what
/// `ocd codegen` writes): one file per entity, with Xcode's property types (`String?` for every
/// string, `Int16` for a scalar number, `Set<Tag>` for a to-many) and, where the model says
/// something the Swift type does not, the `@Attribute` / `@Relationship` / `@Managed` arguments
/// that keep the version hashes the model file's (`.required`, `.optional`, `isOptional:`,
/// `hashModifier`, `entityName:`, `unique:`).
///
/// A model whose hashes `@Managed` cannot reproduce (composite and object-ID attributes) is
/// refused with the list of what stands in the way; what the hashes do
/// not cover and `@Managed` does not declare (fetch indexes, configurations, fetch request
/// templates, fetched properties, renaming identifiers, user info) is named in a comment at the
/// top of the class that loses it.
package struct ManagedClassSource {
    /// A generated file: its name (`Note.swift`) and text.
    package struct File: Equatable {
        package var name: String
        package var text: String
    }

    /// Prefixed to every class name (entity names stay as they are): two models' classes in one
    /// module.
    package var classPrefix = ""
    /// The module the files import: `OpenCoreData`, or `CoreData` for code shared with an app
    /// on Apple platforms (the file is then compiled on Linux only, where the `CoreData` product
    /// is this library: on Apple platforms Xcode generates the classes).
    package var moduleName = "OpenCoreData"
    /// Where the model came from, named in each file's header.
    package var sourceName = ""

    package init() {}

    /// One file per entity of `model`, in the model's entity order.
    package func files(for model: ManagedObjectModel) throws(CoreDataError) -> [File] {
        try classes(of: model).map { entity, name, text in
            File(name: "\(name).swift", text: header("\(name).swift: the entity \(entity)") + text + footer)
        }
    }

    /// Every entity's class in one file named `name` (what the build-tool plugin writes: its
    /// output must be named before the model is read).
    package func file(named name: String, for model: ManagedObjectModel) throws(CoreDataError) -> File {
        let classes = try classes(of: model)
        let entities = classes.count == 1 ? "the entity \(classes[0].entity)" : "the entities"
        return File(name: name, text: header("\(name): \(entities)") + classes.map(\.text).joined(separator: "\n") + footer)
    }

    private func header(_ subject: String) -> String {
        """
        // \(subject)\(sourceName.isEmpty ? "" : " of \(sourceName)"), written by `ocd codegen`.
        // Generate it again after changing the model rather than editing it.
        \(linuxOnly ? "\n#if os(Linux)  // On Apple platforms, Xcode generates these classes.\n" : "")
        import \(moduleName)


        """
    }

    /// Whether the file is for Linux only (it imports `CoreData`).
    private var linuxOnly: Bool { moduleName == "CoreData" }

    private var footer: String { linuxOnly ? "\n#endif\n" : "" }

    /// Each entity's name, class name and class declaration (with its notes), in model order.
    private func classes(of model: ManagedObjectModel) throws(CoreDataError) -> [(entity: String, name: String, text: String)] {
        // Both go into the source as they are (`ocd codegen`'s options and `ocd-codegen`'s).
        guard ["OpenCoreData", "CoreData"].contains(moduleName) else {
            throw CoreDataError(.coreData, "The classes import OpenCoreData or CoreData, not \(moduleName).")
        }
        guard classPrefix.unicodeScalars.allSatisfy({ $0.properties.isXIDContinue }) else {
            throw CoreDataError(.coreData, "A class prefix is made of letters, digits and underscores; '\(classPrefix)' is not.")
        }
        var problems: [String] = []
        for entity in model.entities {
            for case let attribute as AttributeDescription in entity.properties where !attribute.isTransient {
                if let reason = Self.unsupported(attribute) { problems.append("\(entity.name).\(attribute.name): \(reason)") }
            }
        }
        // What the model reader left out: an attribute type is hashed (refused), the rest is not.
        var readerNotes: [String: [String]] = [:]
        for feature in model.unsupportedFeatures {
            if feature.contains(": attribute type ") {
                problems.append(feature)
            } else {
                readerNotes[String(feature.prefix { $0 != "." }), default: []].append(feature)
            }
        }
        guard problems.isEmpty else {
            throw CoreDataError(.coreData, """
                The model has what @Managed cannot declare with the same version hashes: \
                \(problems.joined(separator: "; ")). Keep the model file for these entities (load it with \
                ManagedObjectModel(contentsOf:) and write their classes with typed accessors), or change the model.
                """)
        }
        let classNames = Dictionary(uniqueKeysWithValues: model.entities.map { ($0.name, className(of: $0)) })
        try checkNames(of: model, classNames: classNames)
        return model.entities.map { entity in
            (entity.name, classNames[entity.name] ?? entity.name, source(of: entity, classNames: classNames, notes: readerNotes[entity.name] ?? []))
        }
    }

    /// Names the generated code cannot use: a class named like a type the declarations use
    /// (`Date`, `String`, …) would stand for it, and a property named like one of
    /// `ManagedObject`'s (`entity`, `objectID`, `description`, …: Core Data reserves them too)
    /// cannot be declared in a subclass.
    private func checkNames(of model: ManagedObjectModel, classNames: [String: String]) throws(CoreDataError) {
        var problems: [String] = []
        for (entity, name) in classNames.sorted(by: { $0.key < $1.key }) where Self.typesUsed.contains(name) || name == moduleName {
            problems.append("the class of \(entity) would be named \(name), the name of a type the classes use (give a --class-prefix)")
        }
        let entitiesByClass = Dictionary(grouping: classNames.keys, by: { classNames[$0] ?? $0 })
        for (name, entities) in entitiesByClass.sorted(by: { $0.key < $1.key }) where entities.count > 1 {
            problems.append("the entities \(entities.sorted().joined(separator: ", ")) name one class, \(name) (give each its own class name in the model)")
        }
        for entity in model.entities {
            for property in entity.properties where Self.managedObjectProperties.contains(property.name) {
                problems.append("\(entity.name).\(property.name) has the name of a property of every managed object (rename it in the model)")
            }
        }
        guard problems.isEmpty else {
            throw CoreDataError(.coreData, "The classes cannot be written: \(problems.joined(separator: "; ")).")
        }
    }

    private static let typesUsed: Set<String> = [
        "Int16", "Int32", "Int64", "Double", "Float", "Bool", "String", "Date", "Data", "UUID", "URL", "Decimal", "Any", "Set",
        "ManagedObject", "Managed", "Attribute", "Relationship", "Transient", "OpenCoreData", "CoreData",
    ]

    private static let managedObjectProperties: Set<String> = [
        "entity", "objectID", "managedObjectContext", "isInserted", "isUpdated", "isDeleted", "isFault", "hasChanges",
        "hasPersistentChangedValues", "faultingState", "description", "debugDescription", "hash", "hashValue",
    ]

    /// The class of an entity: the model's class name without its module, else the entity's name.
    private func className(of entity: EntityDescription) -> String {
        let named = entity.managedObjectClassName.split(separator: ".").last.map(String.init) ?? ""
        let base = named.isEmpty || named == "NSManagedObject" || !ManagedObjectModel.isIdentifier(Substring(named)) ? Self.identifier(entity.name) : named
        return classPrefix + base
    }

    private func source(of entity: EntityDescription, classNames: [String: String], notes: [String]) -> String {
        let name = classNames[entity.name] ?? entity.name
        var lines: [String] = []
        for note in lostFeatures(of: entity) + notes { lines.append("// Not declared here (the model file keeps it; no version hash covers it): \(note).") }
        if !lines.isEmpty { lines.append("") }
        var managed: [String] = []
        if entity.isAbstract { managed.append("abstract: true") }
        if name != entity.name { managed.append("entityName: \(Self.literal(entity.name))") }
        let constraints = entity.uniquenessConstraints.filter { !$0.isEmpty }
        if !constraints.isEmpty {
            managed.append("unique: [\(constraints.map { "[\($0.map(Self.literal).joined(separator: ", "))]" }.joined(separator: ", "))]")
        }
        if let modifier = entity.versionHashModifier { managed.append("hashModifier: \(Self.literal(modifier))") }
        lines.append(managed.isEmpty ? "@Managed" : "@Managed(\(managed.joined(separator: ", ")))")
        let superclass = entity.superentity.flatMap { classNames[$0.name] } ?? "ManagedObject"
        lines.append("public \(entity.subentities.isEmpty ? "final " : "")class \(name): \(superclass) {")
        for property in entity.properties {
            if let attribute = property as? AttributeDescription {
                lines.append(contentsOf: declaration(of: attribute).map { "    " + $0 })
            } else if let relationship = property as? RelationshipDescription {
                lines.append(contentsOf: declaration(of: relationship, classNames: classNames).map { "    " + $0 })
            }
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: - Attributes

    /// Why `@Managed` cannot declare an attribute with the model's hash, or `nil`.
    private static func unsupported(_ attribute: AttributeDescription) -> String? {
        if attribute.attributeType == .transformable { return nil }
        return swiftType(of: attribute.attributeType) == nil ? "a \(attribute.attributeType) attribute" : nil
    }

    private static func swiftType(of type: AttributeType) -> String? {
        switch type {
        case .integer16: "Int16"
        case .integer32: "Int32"
        case .integer64: "Int64"
        case .decimal: "Decimal"
        case .double: "Double"
        case .float: "Float"
        case .string: "String"
        case .boolean: "Bool"
        case .date: "Date"
        case .binaryData: "Data"
        case .uuid: "UUID"
        case .uri: "URL"
        default: nil
        }
    }

    private func declaration(of attribute: AttributeDescription) -> [String] {
        if attribute.attributeType == .transformable && !attribute.isTransient {
            // The transformer's value, of whatever type it makes (Xcode's `NSObject?`).
            var options = [".transformable(\(attribute.valueTransformerName.map { "by: \(Self.literal($0))" } ?? ""))"]
            if !attribute.isOptional { options.append(".required") }
            if let modifier = attribute.versionHashModifier { options.append(".hashModifier(\(Self.literal(modifier)))") }
            if attribute.preservesValueInHistoryOnDeletion { options.append(".preserveValueOnDeletion") }
            return ["@Attribute(\(options.joined(separator: ", ")))", "public var \(Self.identifier(attribute.name)): Any?"]
        }
        guard let base = Self.swiftType(of: attribute.attributeType) else { return [] }
        let type = attribute.attributeType
        // Xcode's types: numbers and Booleans as scalars when the model says so (else NSNumber?,
        // here the optional scalar), every other type optional.
        let scalar = type.isScalarInXcode && (attribute.usesScalarValueType ?? true)
        let swiftOptional = !scalar
        let defaultText = Self.literal(attribute.storedDefault, type: type)
        if attribute.isTransient {
            let initial = defaultText ?? (swiftOptional ? "nil" : Self.zero(of: type))
            return ["@Transient public var \(Self.identifier(attribute.name)): \(base)\(swiftOptional ? "?" : "") = \(initial)"]
        }
        var options: [String] = []
        if swiftOptional && !attribute.isOptional { options.append(".required") }
        if !swiftOptional && attribute.isOptional { options.append(".optional") }
        if attribute.isIndexed { options.append(".indexed") }
        if attribute.allowsExternalBinaryDataStorage { options.append(".externalStorage") }
        if attribute.preservesValueInHistoryOnDeletion { options.append(".preserveValueOnDeletion") }
        if let minimum = attribute.minimum { options.append(".minimum(\(minimum))") }
        if let maximum = attribute.maximum { options.append(".maximum(\(maximum))") }
        if let earliest = attribute.earliestDate { options.append(".earliest(Date(timeIntervalSinceReferenceDate: \(earliest.timeIntervalSinceReferenceDate)))") }
        if let latest = attribute.latestDate { options.append(".latest(Date(timeIntervalSinceReferenceDate: \(latest.timeIntervalSinceReferenceDate)))") }
        if let pattern = attribute.regularExpression { options.append(".pattern(\(Self.literal(pattern)))") }
        if let modifier = attribute.versionHashModifier { options.append(".hashModifier(\(Self.literal(modifier)))") }
        if let expression = attribute.derivationExpression { options.append(".derived(\(Self.literal(expression)))") }
        let initial = defaultText ?? (swiftOptional ? nil : Self.zero(of: type))
        var lines: [String] = []
        if !options.isEmpty { lines.append("@Attribute(\(options.joined(separator: ", ")))") }
        lines.append("public var \(Self.identifier(attribute.name)): \(base)\(swiftOptional ? "?" : "")\(initial.map { " = \($0)" } ?? "")")
        return lines
    }

    private static func zero(of type: AttributeType) -> String {
        type == .boolean ? "false" : "0"
    }

    /// A default value as Swift source, or `nil` for none.
    private static func literal(_ value: ManagedValue, type: AttributeType) -> String? {
        switch value {
        case .null: nil
        case .integer(let number): String(number)
        case .bool(let flag): flag ? "true" : "false"
        case .double(let number) where number.isFinite: type == .float ? "\(Float(number))" : "\(number)"
        case .decimal(let number): "Decimal(string: \(literal("\(number)")), locale: nil) ?? 0"
        case .string(let text): literal(text)
        case .date(let date): "Date(timeIntervalSinceReferenceDate: \(date.timeIntervalSinceReferenceDate))"
        case .data(let bytes): "Data([\(bytes.map { String($0) }.joined(separator: ", "))])"
        case .uuid(let uuid): "UUID(uuidString: \(literal(uuid.uuidString)))"
        case .url(let url): "URL(string: \(literal(url.absoluteString)))"
        default: nil
        }
    }

    // MARK: - Relationships

    private func declaration(of relationship: RelationshipDescription, classNames: [String: String]) -> [String] {
        let destination = classNames[relationship.destinationEntityName] ?? relationship.destinationEntityName
        let type = relationship.isToMany ? (relationship.isOrdered ? "[\(destination)]" : "Set<\(destination)>") : "\(destination)?"
        var arguments: [String] = []
        switch relationship.deleteRule {
        case .nullify: break
        case .cascade: arguments.append("deleteRule: .cascade")
        case .deny: arguments.append("deleteRule: .deny")
        case .noAction: arguments.append("deleteRule: .noAction")
        }
        // One side names the inverse (both would make each key path depend on the other's
        // declaration); the model completes the other side.
        if let inverse = relationship.inverseName, let source = relationship.entity?.name,
           (source, relationship.name) < (relationship.inverseRelationship?.entity?.name ?? relationship.destinationEntityName, inverse) {
            arguments.append("inverse: \\\(destination).\(Self.identifier(inverse))")
        }
        if relationship.minCount != 0 { arguments.append("minimumCount: \(relationship.minCount)") }
        if relationship.isToMany && relationship.maxCount != 0 { arguments.append("maximumCount: \(relationship.maxCount)") }
        if !relationship.isOptional { arguments.append("isOptional: false") }
        if let modifier = relationship.versionHashModifier { arguments.append("hashModifier: \(Self.literal(modifier))") }
        let initial = relationship.isToMany ? " = []" : ""
        let prefix = relationship.isTransient ? "@Transient " : ""
        var lines: [String] = []
        if !arguments.isEmpty && !relationship.isTransient { lines.append("@Relationship(\(arguments.joined(separator: ", ")))") }
        lines.append("\(prefix)public var \(Self.identifier(relationship.name)): \(type)\(initial)")
        return lines
    }

    // MARK: - What the hashes do not cover

    private func lostFeatures(of entity: EntityDescription) -> [String] {
        var notes: [String] = []
        for index in entity.indexes where !(index.elements.count == 1 && entity.attributesByName[index.elements[0].propertyName]?.isIndexed == true) {
            notes.append("the fetch index \(index.name) (\(index.elements.map(\.propertyName).joined(separator: ", ")))")
        }
        for property in entity.properties {
            if property is FetchedPropertyDescription { notes.append("the fetched property \(property.name)") }
            if let attribute = property as? AttributeDescription, attribute.isTransient, Self.swiftType(of: attribute.attributeType) == nil {
                notes.append("the transient \(attribute.attributeType) attribute \(attribute.name)")
            }
            if let renaming = property.renamingIdentifier, renaming != property.name {
                notes.append("\(property.name)'s renaming identifier \(renaming)")
            }
        }
        if let renaming = entity.renamingIdentifier, renaming != entity.name { notes.append("the entity's renaming identifier \(renaming)") }
        if !entity.userInfo.isEmpty { notes.append("the entity's user info") }
        return notes
    }

    // MARK: - Swift text

    /// A Swift string literal.
    private static func literal(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7f {
                    escaped += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    escaped.unicodeScalars.append(scalar)
                }
            }
        }
        return "\"\(escaped)\""
    }

    /// A name as a Swift identifier: backquoted when it is a keyword, and with characters that
    /// cannot be in one replaced (a model file is input).
    private static func identifier(_ name: String) -> String {
        let cleaned = ManagedObjectModel.isIdentifier(Substring(name)) ? name : "_" + String(name.unicodeScalars.map { $0.properties.isXIDContinue ? Character($0) : "_" })
        return keywords.contains(cleaned) ? "`\(cleaned)`" : cleaned
    }

    private static let keywords: Set<String> = [
        "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import", "init", "inout", "internal",
        "let", "open", "operator", "private", "protocol", "public", "static", "struct", "subscript", "typealias", "var", "break",
        "case", "continue", "default", "defer", "do", "else", "fallthrough", "for", "guard", "if", "in", "repeat", "return",
        "switch", "where", "while", "as", "catch", "false", "is", "nil", "rethrows", "super", "self", "Self", "throw", "throws",
        "true", "try", "Any", "Type", "Protocol",
    ]
}

extension AttributeType {
    /// Numbers and Booleans: the types Xcode declares as Swift scalars when asked to.
    fileprivate var isScalarInXcode: Bool {
        switch self {
        case .integer16, .integer32, .integer64, .double, .float, .boolean: true
        default: false
        }
    }
}
