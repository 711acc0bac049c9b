import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

extension ManagedObjectModel {
    /// Loads a model written by Xcode: an `.xcdatamodeld` bundle (its current version, from
    /// `.xccurrentversion`, or the version named `version`), a single `.xcdatamodel`, a compiled
    /// `.momd` bundle (its current version from `VersionInfo.plist`, or `version`) or a `.mom`.
    /// Entities, attributes (types, optionality, defaults, transient, indexed, external storage,
    /// preserve-after-deletion), relationships (to-one/to-many, ordered, min/max, delete rules,
    /// inverses), inheritance and abstract entities, uniqueness constraints, user info, renaming
    /// identifiers and version-hash modifiers load; the version hashes are Core Data's.
    /// Features not supported yet (composite and derived attributes, fetched properties) are
    /// listed in ``unsupportedFeatures``. Throws a ``CoreDataError`` saying what is wrong with
    /// the file; pass `version: nil` for the current version. Core Data's failable form is
    /// ``init(contentsOf:)``.
    public convenience init(contentsOf url: URL, version: String?) throws {
        let contents: URL
        switch url.pathExtension {
        case "xcdatamodeld":
            let name: String
            if let version {
                name = version.hasSuffix(".xcdatamodel") ? version : version + ".xcdatamodel"
            } else if let data = try? Data(contentsOf: url.appendingPathComponent(".xccurrentversion")),
                      let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any],
                      let current = plist["_XCCurrentVersionName"] as? String {
                name = current
            } else {
                let versions = (try? FileManager.default.contentsOfDirectory(atPath: url.path))?.filter { $0.hasSuffix(".xcdatamodel") }.sorted() ?? []
                guard let only = versions.first else {
                    throw CoreDataError(.coreData, "The model bundle at \(url.path) holds no .xcdatamodel version.")
                }
                name = only
            }
            contents = url.appendingPathComponent(name).appendingPathComponent("contents")
        case "xcdatamodel":
            contents = url.appendingPathComponent("contents")
        case "momd", "mom":
            let file = url.pathExtension == "mom" ? url : try Self.momFile(inBundle: url, version: version)
            guard let data = try? Data(contentsOf: file) else {
                throw CoreDataError(.coreData, "Could not read the compiled model at \(file.path).")
            }
            try self.init(archive: data)
            resolveClassNames()
            return
        default:
            contents = url
        }
        guard let data = try? Data(contentsOf: contents) else {
            throw CoreDataError(.coreData, "Could not read the model at \(contents.path). Pass an .xcdatamodeld or .xcdatamodel folder.")
        }
        let reader = ModelXMLReader()
        let stopped = try XMLInput.parse(data, with: reader, file: contents, what: "model")
        if let failure = reader.failure ?? stopped {
            throw CoreDataError(.coreData, "The model at \(contents.path) is not valid Core Data model XML: \(failure).")
        }
        var byName: [String: EntityDescription] = [:]
        for entity in reader.entities where byName.updateValue(entity, forKey: entity.name) != nil {
            throw CoreDataError(.coreData, "The model at \(contents.path) has two entities named '\(entity.name)'. Entity names must be unique.")
        }
        self.init(entities: reader.entities)
        for (child, parent) in reader.parents {
            guard let parentEntity = byName[parent], let childEntity = byName[child] else {
                throw CoreDataError(.coreData, "The entity \(child) names the parent entity \(parent), which the model does not have.")
            }
            parentEntity.subentities.append(childEntity)
        }
        try checkInheritance()
        configurations = reader.configurations
        fetchRequestTemplatesByName = reader.templates
        unsupportedFeatures = reader.unsupported
        resolveClassNames()
    }
}

/// Reads the `contents` XML of an `.xcdatamodel` into entity descriptions.
// Used on one thread, by one parse.
private final class ModelXMLReader: NSObject, XMLParserDelegate {
    var entities: [EntityDescription] = []
    var parents: [(String, String)] = []
    var unsupported: [String] = []
    var configurations: [String: [String]] = [:]
    var templates: [String: FetchRequestTemplate] = [:]
    var failure: String?
    private var fetchedProperty: (name: String, optional: Bool)?
    private var configuration: String?
    private var fetchIndex: FetchIndexDescription?
    private var fetchIndexes: [FetchIndexDescription] = []
    private var entity: EntityDescription?
    private var property: PropertyDescription?
    private var properties: [PropertyDescription] = []
    private var constraint: [String]?
    private var constraints: [[String]] = []
    private var inUniqueness = false

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        let yes = { (key: String) in attributes[key] == "YES" }
        switch name {
        case "entity":
            guard let entityName = attributes["name"] else { failure = "an entity has no name"; return }
            let entity = EntityDescription(name: entityName)
            entity.managedObjectClassName = attributes["representedClassName"] ?? "NSManagedObject"
            entity.isAbstract = yes("isAbstract")
            entity.versionHashModifier = attributes["versionHashModifier"]
            entity.renamingIdentifier = attributes["elementID"]
            if let parent = attributes["parentEntity"] { parents.append((entityName, parent)) }
            self.entity = entity
            properties = []
            constraints = []
            fetchIndexes = []
        case "attribute":
            guard let entity, let attributeName = attributes["name"] else { return }
            guard let typeName = attributes["attributeType"], let type = Self.types[typeName] else {
                unsupported.append("\(entity.name).\(attributeName): attribute type \(attributes["attributeType"] ?? "none") (left out)")
                property = nil
                return
            }
            let attribute = AttributeDescription(name: attributeName, type: type, isOptional: yes("optional"))
            if yes("derived") {
                attribute.derivationExpression = Self.compiledExpression(attributes["derivationExpression"] ?? "")
                // Counts, now(), canonical:(…) and copies are kept (Derivation); others are read as stored.
                if attribute.derivation == nil {
                    unsupported.append("""
                        \(entity.name).\(attributeName): derived attribute \
                        (\(attributes["derivationExpression"] ?? "")), read from the store and not recomputed
                        """)
                }
            }
            attribute.isTransient = yes("transient")
            attribute.isIndexed = yes("indexed")
            attribute.allowsExternalBinaryDataStorage = yes("allowsExternalBinaryDataStorage")
            attribute.preservesValueInHistoryOnDeletion = yes("preserveAfterDeletion")
            attribute.versionHashModifier = attributes["versionHashModifier"]
            attribute.renamingIdentifier = attributes["elementID"]
            attribute.valueTransformerName = attributes["valueTransformerName"]
            attribute.usesScalarValueType = attributes["usesScalarValueType"].map { $0 == "YES" }
            if let text = attributes["defaultValueString"] { attribute.defaultValue = Self.defaultValue(text, type) }
            if let minimum = attributes["minValueString"].flatMap(Double.init) { attribute.minimum = minimum }
            if let maximum = attributes["maxValueString"].flatMap(Double.init) { attribute.maximum = maximum }
            properties.append(attribute)
            property = attribute
        case "relationship":
            guard entity != nil, let relationshipName = attributes["name"], let destination = attributes["destinationEntity"] else { return }
            let toMany = yes("toMany")
            let rule: DeleteRule = switch attributes["deletionRule"] {
            case "Cascade": .cascade
            case "Deny": .deny
            case "No Action": .noAction
            default: .nullify
            }
            let relationship = RelationshipDescription(name: relationshipName, destination: destination, toMany: toMany, isOptional: yes("optional"),
                                                       inverse: attributes["inverseName"], deleteRule: rule, isOrdered: yes("ordered"))
            relationship.isTransient = yes("transient")
            if let maximum = attributes["maxCount"].flatMap(Int.init) { relationship.maxCount = maximum } else if toMany { relationship.maxCount = 0 }
            if let minimum = attributes["minCount"].flatMap(Int.init) { relationship.minCount = minimum }
            relationship.versionHashModifier = attributes["versionHashModifier"]
            relationship.renamingIdentifier = attributes["elementID"]
            properties.append(relationship)
            property = relationship
        case "fetchRequest":
            guard let target = attributes["entity"] else { return }
            if let fetchedProperty, entity != nil {
                let property = FetchedPropertyDescription(name: fetchedProperty.name, entityName: target, predicate: attributes["predicateString"])
                properties.append(property)
                self.property = property
            } else if let name = attributes["name"] {
                templates[name] = FetchRequestTemplate(entityName: target, predicateFormat: attributes["predicateString"])
            }
        case "fetchedProperty":
            if let name = attributes["name"] { fetchedProperty = (name, yes("optional")) }
        case "fetchIndex":
            fetchIndex = FetchIndexDescription(name: attributes["name"] ?? "", elements: [])
        case "fetchIndexElement":
            if let property = attributes["property"] {
                fetchIndex?.elements.append(.init(property: property, ascending: attributes["order"] != "descending"))
            } else if let entity {
                unsupported.append("\(entity.name).\(fetchIndex?.name ?? "?"): fetch index over an expression, left out")
                fetchIndex = nil
            }
        case "configuration":
            configuration = attributes["name"]
            if let configuration { configurations[configuration] = [] }
        case "memberEntity":
            if let configuration, let member = attributes["name"] { configurations[configuration]?.append(member) }
        case "uniquenessConstraints":
            inUniqueness = true
        case "uniquenessConstraint":
            constraint = []
        case "constraint":
            if inUniqueness, let value = attributes["value"] { constraint?.append(value) }
        case "entry":
            guard let key = attributes["key"], let value = attributes["value"] else { return }
            if let property { property.userInfo[key] = value } else { entity?.userInfo[key] = value }
        default:
            break
        }
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        switch name {
        case "attribute", "relationship":
            property = nil
        case "fetchedProperty":
            fetchedProperty = nil
            property = nil
        case "uniquenessConstraint":
            if let constraint { constraints.append(constraint) }
            constraint = nil
        case "uniquenessConstraints":
            inUniqueness = false
        case "fetchIndex":
            if let fetchIndex { fetchIndexes.append(fetchIndex) }
            fetchIndex = nil
        case "configuration":
            configuration = nil
        case "entity":
            if let entity {
                // As the model compiler does: a one-element fetch index marks its attribute indexed.
                for index in fetchIndexes where index.elements.count == 1 {
                    (properties.first { $0.name == index.elements[0].propertyName } as? AttributeDescription)?.isIndexed = true
                }
                entity.properties = properties
                entity.indexes = fetchIndexes
                entity.uniquenessConstraints = constraints
                entities.append(entity)
            }
            entity = nil
        default:
            break
        }
    }

    private static let types: [String: AttributeType] = [
        "Integer 16": .integer16, "Integer 32": .integer32, "Integer 64": .integer64, "Decimal": .decimal, "Double": .double,
        "Float": .float, "String": .string, "Boolean": .boolean, "Date": .date, "Binary": .binaryData, "UUID": .uuid,
        "URI": .uri, "Transformable": .transformable, "ObjectID": .objectID,
    ]

    /// The model compiler turns a derivation written as `path.@count` into the function form
    /// `count:(path)`, which is what Core Data hashes; other derivations are kept as written.
    private static func compiledExpression(_ text: String) -> String {
        guard text.hasSuffix(".@count") else { return text }
        return "count:(" + text.dropLast(".@count".count) + ")"
    }

    private static func defaultValue(_ text: String, _ type: AttributeType) -> Any? {
        switch type {
        case .integer16, .integer32, .integer64: Int64(text)
        case .double, .float: Double(text)
        case .decimal: Decimal(string: text)
        case .boolean: text == "YES" || text == "1"
        case .string: text
        case .uuid: UUID(uuidString: text)
        case .uri: URL(string: text)
        default: nil
        }
    }
}
