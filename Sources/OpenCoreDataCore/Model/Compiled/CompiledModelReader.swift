import Foundation

/// Builds a ``ManagedObjectModel`` from a keyed archive of `NSManagedObjectModel`: a compiled
/// `.mom` or the model a store caches in `Z_MODELCACHE` (see
/// `docs/CoreDataFormat.md` §2–3 for the keys).
///
/// Cache archives repeat inherited properties in every sub-entity (as copies or proxies); only
/// the properties an entity declares itself are kept, so both forms give the same model.
package struct CompiledModelReader {
    private let archive: KeyedArchive
    private var unsupported: [String] = []

    package init(archive: KeyedArchive) { self.archive = archive }

    /// What the archive's root model holds.
    package struct Contents {
        package var entities: [EntityDescription]
        package var versionIdentifiers: Set<String>
        package var configurations: [String: [String]]
        package var unsupportedFeatures: [String]
    }

    /// Reads the archive's root model.
    package static func contents(of data: Data) throws(CoreDataError) -> Contents {
        var reader = CompiledModelReader(archive: try KeyedArchive(data))
        let contents = try reader.read()
        guard !reader.archive.isExhausted else {
            throw CoreDataError(.coreData, """
                The model archive is malformed: its objects refer to each other so often that reading it would \
                not end (more than \(KeyedArchive.workBudget(objectCount: 0)) steps plus 64 per object).
                """)
        }
        return contents
    }

    private mutating func read() throws(CoreDataError) -> Contents {
        guard let root = archive.object(archive.root), root.isKind(of: "NSManagedObjectModel") else {
            throw CoreDataError(.coreData, """
                The archive does not hold an NSManagedObjectModel; a compiled model (.mom) or a store's model \
                cache was expected.
                """)
        }
        let archivedEntities = archive.entries(root["NSEntities"]).compactMap { archive.object(.uid($0.value)) }
        var entities: [EntityDescription] = []
        var byIndex: [Int: EntityDescription] = [:]
        for archived in archivedEntities {
            let entity = readEntity(archived)
            entities.append(entity)
            byIndex[archived.index] = entity
        }
        // Parents, and each entity's own properties (those its superentity does not have).
        for archived in archivedEntities {
            guard let entity = byIndex[archived.index] else { continue }
            let parent = archive.object(archived["NSSuperentity"])
            if let parent, let parentEntity = byIndex[parent.index] { parentEntity.subentities.append(entity) }
            let inherited = Set(parent.map { archive.entries($0["NSProperties"]).map(\.key) } ?? [])
            var properties: [PropertyDescription] = []
            for (name, index) in archive.entries(archived["NSProperties"]).sorted(by: { $0.key.unicodeScalars.lexicographicallyPrecedes($1.key.unicodeScalars) })
            where !inherited.contains(name) {
                guard let property = archive.object(.uid(index)), !property.isKind(of: "_NSPropertyDescriptionProxy") else { continue }
                if let description = readProperty(property, of: entity.name) { properties.append(description) }
            }
            entity.properties = properties
        }
        var configurations: [String: [String]] = [:]
        for (name, index) in archive.entries(root["NSConfigurations"]) {
            configurations[name] = archive.members(.uid(index)).compactMap { archive.object(.uid($0)).flatMap { archive.string($0["NSEntityName"]) } }.sorted()
        }
        if !archive.entries(root["NSFetchRequestTemplates"]).isEmpty {
            unsupported.append("stored fetch requests (fetch request templates): not loaded")
        }
        return Contents(entities: entities.sorted { $0.name.unicodeScalars.lexicographicallyPrecedes($1.name.unicodeScalars) },
                        versionIdentifiers: Set(archive.members(root["NSVersionIdentifiers"]).compactMap { archive.string(.uid($0)) }),
                        configurations: configurations, unsupportedFeatures: unsupported)
    }

    private func readEntity(_ archived: ArchivedObject) -> EntityDescription {
        let entity = EntityDescription(name: archive.string(archived["NSEntityName"]) ?? "")
        entity.managedObjectClassName = archive.string(archived["NSClassNameForEntity"]) ?? "NSManagedObject"
        entity.isAbstract = archived["NSIsAbstract"]?.bool ?? false
        entity.versionHashModifier = archive.string(archived["NSVersionHashModifier"])
        entity.renamingIdentifier = archive.string(archived["NSRenamingIdentifier"]).flatMap { $0 == entity.name ? nil : $0 }
        entity.userInfo = userInfo(archived["NSUserInfo"])
        entity.uniquenessConstraints = archive.members(archived["NSUniqueTuples"]).map { tuple in
            archive.members(.uid(tuple)).compactMap { archive.string(.uid($0)) }
        }
        entity.indexes = archive.members(archived["NSFetchIndexDescriptions"]).compactMap { index in
            guard let description = archive.object(.uid(index)), let name = archive.string(description["NSIndexName"]) else { return nil }
            let elements = archive.members(description["NSIndexElements"]).compactMap { element -> FetchIndexDescription.Element? in
                guard let element = archive.object(.uid(element)), let property = archive.string(element["NSPropertyName"]) else { return nil }
                return FetchIndexDescription.Element(property: property, ascending: element["NSAscending"]?.bool ?? true)
            }
            return FetchIndexDescription(name: name, elements: elements)
        }
        return entity
    }

    private mutating func readProperty(_ archived: ArchivedObject, of entityName: String) -> PropertyDescription? {
        let name = archive.string(archived["NSPropertyName"]) ?? ""
        let property: PropertyDescription
        if archived.isKind(of: "NSRelationshipDescription") {
            let relationship = RelationshipDescription(name: name, destination: archive.string(archived["_NSDestinationEntityName"]) ?? "",
                                                       inverse: archive.string(archived["_NSInverseRelationshipName"]))
            relationship.maxCount = Int(archived["NSMaxCount"]?.integer ?? 1)
            relationship.minCount = Int(archived["NSMinCount"]?.integer ?? 0)
            relationship.deleteRule = archived["NSDeleteRule"]?.integer.flatMap { UInt(exactly: $0) }.flatMap(DeleteRule.init(rawValue:)) ?? .nullify
            property = relationship
        } else if archived.isKind(of: "NSAttributeDescription") {
            let code = archived["NSAttributeType"]?.integer ?? 0
            guard let type = UInt(exactly: code).flatMap(AttributeType.init(rawValue:)) else {
                unsupported.append("\(entityName).\(name): attribute type \(code) (\(archived.className)), left out")
                return nil
            }
            let attribute = AttributeDescription(name: name, type: type)
            attribute.valueTransformerName = archive.string(archived["NSValueTransformerName"])
            attribute.isIndexed = archived["NSIsIndexed"]?.bool ?? false
            let flags = archived["NSFlagsKey"]?.integer ?? 0
            attribute.allowsExternalBinaryDataStorage = flags & 0x4 != 0
            attribute.preservesValueInHistoryOnDeletion = flags & 0x10 != 0
            if let value = archive.value(archived["NSDefaultValue"]) {
                attribute.defaultValue = Self.defaultValue(value, type)
            } else if let object = archive.object(archived["NSDefaultValue"]) {
                unsupported.append("\(entityName).\(name): default value of class \(object.className) not decoded")
            }
            if archived.isKind(of: "NSDerivedAttributeDescription") {
                attribute.derivationExpression = archive.expressionText(archived["NSDerivationExpression"])
                if attribute.derivation == nil {
                    unsupported.append("""
                        \(entityName).\(name): derived attribute (\(attribute.derivationExpression ?? "")), \
                        read from the store and not recomputed
                        """)
                }
            }
            readValidation(archived, into: attribute, of: entityName)
            property = attribute
        } else if archived.isKind(of: "NSFetchedPropertyDescription") {
            let request = archive.object(archived["NSFetchRequest"])
            let target = archive.string(archived["_NSFetchRequestEntityName"])
                ?? request.flatMap { archive.object($0["NSEntity"]) }.flatMap { archive.string($0["NSEntityName"]) } ?? ""
            let sortKeys: [(key: String, ascending: Bool)] = archive.members(request?["NSSortDescriptors"]).compactMap { index in
                guard let descriptor = archive.object(.uid(index)), let key = archive.string(descriptor["NSKey"]) else { return nil }
                return (key, descriptor["NSAscending"]?.bool ?? true)
            }
            property = FetchedPropertyDescription(name: name, entityName: target, predicate: archive.predicateText(request?["NSPredicate"]),
                                                  sortKeys: sortKeys)
        } else {
            unsupported.append("\(entityName).\(name): \(archived.className), left out")
            return nil
        }
        // `_P` carries the flags; older archives have only the bool keys.
        let bits = archived["_P"]?.integer ?? 0
        if bits & 1 != 0 {
            property.isOptional = bits & 0x2 != 0
            property.isReadOnly = bits & 0x4 != 0
            property.isTransient = bits & 0x8 != 0
            (property as? RelationshipDescription)?.isOrdered = bits & 0x400 != 0
        } else {
            property.isOptional = archived["NSIsOptional"]?.bool ?? false
            property.isReadOnly = archived["NSIsReadOnly"]?.bool ?? false
            property.isTransient = archived["NSIsTransient"]?.bool ?? false
            (property as? RelationshipDescription)?.isOrdered = archived["NSIsOrdered"]?.bool ?? false
        }
        property.versionHashModifier = archive.string(archived["NSVersionHashModifier"])
        property.renamingIdentifier = archive.string(archived["NSRenamingIdentifier"]).flatMap { $0 == name ? nil : $0 }
        property.userInfo = userInfo(archived["NSUserInfo"])
        return property
    }

    /// Xcode compiles an attribute's minimum, maximum and pattern into validation predicates
    /// (`length >= 3`, `SELF <= 10`, `SELF MATCHES "…"`); they are read back into the bounds.
    private mutating func readValidation(_ archived: ArchivedObject, into attribute: AttributeDescription, of entityName: String) {
        var comparisons: [ArchivedObject] = []
        func collect(_ index: Int, depth: Int) {
            // Bounded: a damaged archive may contain itself (depth) or share members (the budget).
            guard depth < 16, archive.charge(1), let predicate = archive.object(.uid(index)) else { return }
            if predicate.className == "NSCompoundPredicate", predicate["NSCompoundPredicateType"]?.integer == 1 {
                archive.members(predicate["NSSubpredicates"]).forEach { collect($0, depth: depth + 1) }
            } else {
                comparisons.append(predicate)
            }
        }
        archive.members(archived["NSValidationPredicates"]).forEach { collect($0, depth: 0) }
        for predicate in comparisons {
            let text = archive.predicateText(.uid(predicate.index)) ?? ""
            let comparison = archive.object(predicate["NSPredicateOperator"])
            let left = archive.expressionText(predicate["NSLeftExpression"])
            let right = archive.object(predicate["NSRightExpression"]).flatMap { archive.value($0["NSConstantValue"]) }
            let number: Double? = switch right {
            case .integer(let value): Double(value)
            case .real(let value): value
            default: nil
            }
            switch (predicate.className, left, comparison?["NSOperatorType"]?.integer, right) {
            case ("NSComparisonPredicate", "length", 3, _) where number != nil, ("NSComparisonPredicate", "SELF", 3, _) where number != nil:
                attribute.minimum = number
            case ("NSComparisonPredicate", "length", 1, _) where number != nil, ("NSComparisonPredicate", "SELF", 1, _) where number != nil:
                attribute.maximum = number
            case ("NSComparisonPredicate", "SELF", 3, .date(let seconds)?):
                attribute.earliestDate = Date(timeIntervalSinceReferenceDate: seconds)
            case ("NSComparisonPredicate", "SELF", 1, .date(let seconds)?):
                attribute.latestDate = Date(timeIntervalSinceReferenceDate: seconds)
            case ("NSComparisonPredicate", "SELF", 6, .string(let pattern)?):
                attribute.regularExpression = pattern
            default:
                unsupported.append("\(entityName).\(attribute.name): validation predicate \(text), not enforced")
            }
        }
    }

    private func userInfo(_ field: PropertyListValue?) -> [String: String] {
        var info: [String: String] = [:]
        for (key, index) in archive.entries(field) {
            switch archive.value(.uid(index)) {
            case .string(let text)?: info[key] = text
            case .integer(let number)?: info[key] = String(number)
            case .real(let number)?: info[key] = String(number)
            case .bool(let flag)?: info[key] = flag ? "YES" : "NO"
            default: break
            }
        }
        return info
    }

    private static func defaultValue(_ value: PropertyListValue, _ type: AttributeType) -> Any? {
        switch (value, type) {
        case (.integer(let number), _): number
        case (.real(let number), .decimal): Decimal(number)
        case (.real(let number), _): number
        case (.bool(let flag), _): flag
        case (.string(let text), .decimal): Decimal(string: text)
        case (.string(let text), .uri): URL(string: text)
        case (.string(let text), _): text
        case (.date(let seconds), _): Date(timeIntervalSinceReferenceDate: seconds)
        case (.data(let bytes), .uuid) where bytes.count == 16: UUID(uuid: bytes.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) })
        case (.data(let bytes), _): bytes
        default: nil
        }
    }
}
