import Foundation

/// Archives a ``ManagedObjectModel`` as Core Data's compiled form (an NSKeyedArchiver archive of
/// `NSManagedObjectModel`, the `.mom` layout of CoreDataFormat.md §3): what a store keeps in
/// `Z_MODELCACHE`, so that it opens, and migrates, without the model at hand.
///
/// Written: entities (names, classes, abstract, inheritance, user info, renaming identifiers,
/// hash modifiers, uniqueness constraints, fetch indexes), attributes (types, optionality,
/// defaults, transformer names, indexing, storage flags) and relationships (destinations,
/// inverses, counts, delete rules, order), derived attributes whose expression is a key path or
/// a function of key paths (`count:(pages)`). Not written: validation predicates (bounds and
/// patterns) and fetched properties, which would need archived predicates.
package struct CompiledModelWriter {
    private var objects: [PropertyListValue] = [.string("$null")]
    private var classIndexes: [String: Int] = [:]
    private var stringIndexes: [String: Int] = [:]
    private var entityIndexes: [ObjectIdentifier: Int] = [:]
    private var propertyIndexes: [ObjectIdentifier: Int] = [:]

    /// The archive of `model`.
    package static func archive(_ model: ManagedObjectModel) -> Data {
        var writer = CompiledModelWriter()
        let root = writer.encode(model)
        return BinaryPropertyListWriter.data(.dictionary([
            "$version": .integer(100_000),
            "$archiver": .string("NSKeyedArchiver"),
            "$top": .dictionary(["root": .uid(root)]),
            "$objects": .array(writer.objects),
        ]))
    }

    // MARK: - Model

    private mutating func encode(_ model: ManagedObjectModel) -> Int {
        let index = reserve()
        for entity in model.entities { entityIndexes[ObjectIdentifier(entity)] = reserve() }
        for entity in model.entities {
            for property in Self.archived(entity) { propertyIndexes[ObjectIdentifier(property)] = reserve() }
        }
        for entity in model.entities { encode(entity, model: index) }
        var fields: [String: PropertyListValue] = [
            "NSEntities": dictionary(model.entities.map { ($0.name, .uid(entityIndexes[ObjectIdentifier($0)]!)) }),
            "NSVersionIdentifiers": collection("NSSet", model.versionIdentifiers.sorted().map { string($0) }),
        ]
        if !model.configurations.isEmpty {
            let byName = model.entitiesByName
            fields["NSConfigurations"] = dictionary(model.configurations.sorted { $0.key < $1.key }.map { name, members in
                (name,
                 collection("NSSet", members.compactMap { byName[$0].flatMap { entityIndexes[ObjectIdentifier($0)] }.map(PropertyListValue.uid) }))
            }, mutable: true)
        }
        set(index, ["NSManagedObjectModel"], fields)
        return index
    }

    private mutating func encode(_ entity: EntityDescription, model: Int) {
        guard let index = entityIndexes[ObjectIdentifier(entity)] else { return }
        for property in Self.archived(entity) { encode(property, entity: index) }
        var fields: [String: PropertyListValue] = [
            "NSEntityName": string(entity.name),
            "NSManagedObjectModel": .uid(model),
            "NSProperties": dictionary(Self.archived(entity).map { ($0.name, .uid(propertyIndexes[ObjectIdentifier($0)]!)) }, mutable: true),
            "NSSubentities": dictionary(entity.subentities.compactMap { sub in entityIndexes[ObjectIdentifier(sub)].map { (sub.name, .uid($0)) } }),
            "NSRenamingIdentifier": string(entity.renamingIdentifier ?? entity.name),
            "NSUserInfo": userInfo(entity.userInfo),
        ]
        if entity.managedObjectClassName != "NSManagedObject" { fields["NSClassNameForEntity"] = string(entity.managedObjectClassName) }
        if entity.isAbstract { fields["NSIsAbstract"] = .bool(true) }
        if let superentity = entity.superentity, let parent = entityIndexes[ObjectIdentifier(superentity)] { fields["NSSuperentity"] = .uid(parent) }
        if let modifier = entity.versionHashModifier { fields["NSVersionHashModifier"] = string(modifier) }
        if !entity.uniquenessConstraints.isEmpty {
            fields["NSUniqueTuples"] = collection("NSArray", entity.uniquenessConstraints.map { collection("NSArray", $0.map { string($0) }) })
        }
        let indexes = entity.fetchIndexesWithIndexedAttributes
        if !indexes.isEmpty {
            fields["NSFetchIndexDescriptions"] = collection("NSArray", indexes.map { .uid(encode($0, entity: index)) })
            let compound = entity.indexes.filter { $0.elements.count > 1 }
            if !compound.isEmpty {
                fields["NSCompoundIndexes"] = collection("NSArray",
                                                         compound.map { collection("NSArray", $0.elements.map { string($0.propertyName) }) })
            }
        }
        set(index, ["NSEntityDescription"], fields)
    }

    /// The properties written: attributes and relationships (fetched properties would need
    /// archived fetch requests; they do not enter the hashes).
    private static func archived(_ entity: EntityDescription) -> [PropertyDescription] {
        entity.properties.filter { $0 is AttributeDescription || $0 is RelationshipDescription }
    }

    private mutating func encode(_ index: FetchIndexDescription, entity: Int) -> Int {
        let description = reserve()
        let elements = index.elements.map { element in
            add(["NSFetchIndexElementDescription"], [
                "NSPropertyName": string(element.propertyName), "NSFetchIndexElementType": .integer(0),
                "NSAscending": .bool(element.isAscending), "NSFetchIndexDescription": .uid(description),
            ])
        }
        set(description, ["NSFetchIndexDescription"],
            ["NSIndexName": string(index.name), "NSIndexElements": collection("NSArray", elements.map(PropertyListValue.uid)), "NSEntity": .uid(entity)])
        return description
    }

    private mutating func encode(_ property: PropertyDescription, entity: Int) {
        guard let index = propertyIndexes[ObjectIdentifier(property)] else { return }
        var bits: Int64 = 0x1 | 0x10 | 0x20   // present; no validation predicates or warnings
        if property.isOptional { bits |= 0x2 }
        if property.isReadOnly { bits |= 0x4 }
        if property.isTransient { bits |= 0x8 }
        if property.userInfo.isEmpty { bits |= 0x40 }
        if property.versionHashModifier == nil { bits |= 0x80 }
        var fields: [String: PropertyListValue] = [
            "NSPropertyName": string(property.name),
            "NSEntity": .uid(entity),
            "NSRenamingIdentifier": string(property.renamingIdentifier ?? property.name),
        ]
        if property.isOptional { fields["NSIsOptional"] = .bool(true) }
        if property.isReadOnly { fields["NSIsReadOnly"] = .bool(true) }
        if property.isTransient { fields["NSIsTransient"] = .bool(true) }
        if !property.userInfo.isEmpty { fields["NSUserInfo"] = userInfo(property.userInfo) }
        if let modifier = property.versionHashModifier { fields["NSVersionHashModifier"] = string(modifier) }
        let classes: [String]
        switch property {
        case let attribute as AttributeDescription:
            classes = attribute.derivationExpression.flatMap({ expression($0) }).map { derivation in
                fields["NSDerivationExpression"] = .uid(derivation)
                return ["NSDerivedAttributeDescription", "NSAttributeDescription", "NSPropertyDescription"]
            } ?? ["NSAttributeDescription", "NSPropertyDescription"]
            fields["NSAttributeType"] = .integer(Int64(attribute.attributeType.rawValue))
            if attribute.attributeType != .transformable { fields["NSAttributeValueClassName"] = string(attribute.attributeValueClassName) }
            if let name = attribute.valueTransformerName { fields["NSValueTransformerName"] = string(name) }
            if attribute.isIndexed { fields["NSIsIndexed"] = .bool(true) }
            let flags: Int64 = (attribute.allowsExternalBinaryDataStorage ? 0x4 : 0) | (attribute.preservesValueInHistoryOnDeletion ? 0x10 : 0)
            fields["NSFlagsKey"] = .integer(flags)
            if let value = defaultValue(attribute) { fields["NSDefaultValue"] = value }
        case let relationship as RelationshipDescription:
            classes = ["NSRelationshipDescription", "NSPropertyDescription"]
            if relationship.isOrdered { bits |= 0x400; fields["NSIsOrdered"] = .bool(true) }
            fields["_NSDestinationEntityName"] = string(relationship.destinationEntityName)
            if let destination = relationship.destinationEntity, let target = entityIndexes[ObjectIdentifier(destination)] {
                fields["NSDestinationEntity"] = .uid(target)
            }
            if let inverse = relationship.inverseName { fields["_NSInverseRelationshipName"] = string(inverse) }
            if let inverse = relationship.inverseRelationship, let target = propertyIndexes[ObjectIdentifier(inverse)] {
                fields["NSInverseRelationship"] = .uid(target)
            }
            fields["NSMinCount"] = .integer(Int64(relationship.minCount))
            fields["NSMaxCount"] = .integer(Int64(relationship.maxCount))
            fields["NSDeleteRule"] = .integer(Int64(relationship.deleteRule.rawValue))
        default:
            classes = ["NSPropertyDescription"]
        }
        fields["_P"] = .integer(bits)
        set(index, classes, fields)
    }

    /// A default value as Core Data archives it: numbers and strings plain, dates and UUIDs as
    /// objects. Decimal and Transformable defaults are left out.
    private mutating func defaultValue(_ attribute: AttributeDescription) -> PropertyListValue? {
        switch attribute.storedDefault {
        case .integer(let number): .uid(add(.integer(number)))
        case .bool(let flag): .uid(add(.bool(flag)))
        case .double(let number): .uid(add(.real(number)))
        case .string(let text): string(text)
        case .date(let date): .uid(add(["NSDate"], ["NS.time": .real(date.timeIntervalSinceReferenceDate)]))
        case .data(let data): .uid(add(.data(data)))
        case .uuid(let uuid): .uid(add(["NSUUID"], ["NS.uuidbytes": .data(withUnsafeBytes(of: uuid.uuid) { Data($0) })]))
        case .url(let url): .uid(add(["NSURL"], ["NS.base": .uid(0), "NS.relative": string(url.absoluteString)]))
        default: nil
        }
    }

    /// An archived NSExpression for a derivation: a key path (`pages.count`) or a built-in
    /// function of key paths (`count:(pages)`); nil for other forms.
    private mutating func expression(_ text: String) -> Int? {
        let isKeyPath = { (path: Substring) in !path.isEmpty && path.allSatisfy { $0.isLetter || $0.isNumber || "_.@".contains($0) } }
        if isKeyPath(Substring(text)) {
            let specifier = add(["NSKeyPathSpecifierExpression", "NSExpression"], ["NSExpressionType": .integer(10), "NSKeyPath": string(text)])
            let operand = add(["NSSelfExpression", "NSExpression"], ["NSExpressionType": .integer(1)])
            return add(["NSKeyPathExpression", "NSFunctionExpression", "NSExpression"], [
                "NSExpressionType": .integer(3), "NSOperand": .uid(operand), "NSSelectorName": string("valueForKey:"),
                "NSArguments": .uid(add(["NSMutableArray", "NSArray"], ["NS.objects": .array([.uid(specifier)])])),
            ])
        }
        guard text.hasSuffix(")"), let open = text.firstIndex(of: "("), text[..<open].hasSuffix(":") else { return nil }
        let selector = String(text[..<open])
        let arguments = text[text.index(after: open)..<text.index(before: text.endIndex)].split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        guard !arguments.isEmpty, arguments.allSatisfy({ isKeyPath(Substring($0)) }) else { return nil }
        let archived = arguments.compactMap { expression($0) }
        let operand = add(["NSConstantValueExpression", "NSExpression"],
                          ["NSExpressionType": .integer(0), "NSConstantValueClassName": string("_NSPredicateUtilities")])
        return add(["NSFunctionExpression", "NSExpression"], [
            "NSExpressionType": .integer(4), "NSOperand": .uid(operand), "NSSelectorName": string(selector),
            "NSArguments": collection("NSArray", archived.map(PropertyListValue.uid)),
        ])
    }

    // MARK: - Archive primitives

    private mutating func reserve() -> Int {
        objects.append(.null)
        return objects.count - 1
    }

    private mutating func add(_ value: PropertyListValue) -> Int {
        objects.append(value)
        return objects.count - 1
    }

    private mutating func add(_ classes: [String], _ fields: [String: PropertyListValue]) -> Int {
        let index = reserve()
        set(index, classes, fields)
        return index
    }

    private mutating func set(_ index: Int, _ classes: [String], _ fields: [String: PropertyListValue]) {
        var fields = fields
        fields["$class"] = .uid(classIndex(classes))
        objects[index] = .dictionary(fields)
    }

    private mutating func classIndex(_ classes: [String]) -> Int {
        let name = classes[0]
        if let known = classIndexes[name] { return known }
        let index = add(.dictionary(["$classname": .string(name), "$classes": .array((classes + ["NSObject"]).map { .string($0) })]))
        classIndexes[name] = index
        return index
    }

    private mutating func string(_ text: String) -> PropertyListValue {
        if let known = stringIndexes[text] { return .uid(known) }
        let index = add(.string(text))
        stringIndexes[text] = index
        return .uid(index)
    }

    private mutating func collection(_ kind: String, _ members: [PropertyListValue]) -> PropertyListValue {
        .uid(add(kind == "NSSet" ? ["NSSet"] : ["NSArray"], ["NS.objects": .array(members)]))
    }

    private mutating func dictionary(_ entries: [(String, PropertyListValue)], mutable: Bool = false) -> PropertyListValue {
        let keys = entries.map { string($0.0) }
        return .uid(add(mutable ? ["NSMutableDictionary", "NSDictionary"] : ["NSDictionary"],
                        ["NS.keys": .array(keys), "NS.objects": .array(entries.map(\.1))]))
    }

    private mutating func userInfo(_ info: [String: String]) -> PropertyListValue {
        dictionary(info.sorted { $0.key < $1.key }.map { ($0.key, string($0.value)) })
    }
}
