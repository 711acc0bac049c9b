import OpenCoreDataCore
import OpenCoreDataSQL

extension RelationalLayout {
    /// The `Z_DA_…` triggers that keep derived attributes current in the store: the count of a
    /// to-many whose destination rows hold the source's key (`pages.@count`, compiled
    /// `count:(pages)`), with Core Data's SQL and names (read from stores it wrote), so either
    /// framework keeps the other's counts; and a copy of a to-one's attribute (`author.name`),
    /// which follows that attribute and the relationship whichever way the rows change. The
    /// other derivations (`now()`, `canonical:`, copies within the object) are computed when an
    /// object is saved; counts over join tables get no trigger (read as stored).
    func derivedAttributeTriggers(model: ManagedObjectModel) -> [String] {
        var triggers: [String] = []
        for entity in model.entities {
            guard entity.hasDerivedAttributes, let mapping = try? mapping(for: entity) else { continue }
            for (slot, attribute) in entity.storedAttributes.enumerated() where entity.properties.contains(where: { $0 === attribute }) {
                if case .copy(let keys)? = attribute.derivation, keys.count == 2, attribute.derivation?.isComputable(for: attribute, of: entity) == true {
                    triggers += copyTriggers(entity: entity, mapping: mapping, slot: slot, attribute: attribute, relationship: keys[0], key: keys[1])
                    continue
                }
                guard let name = Self.countedRelationship(attribute.derivationExpression),
                      let relationship = entity.relationshipsByName[name], relationship.isToMany,
                      case .inverseForeignKey(let parameterTable, let key, _, _)? = try? storage(of: relationship) else { continue }
                let source = mapping.table
                let column = mapping.columns[slot]
                let prefix = "Z_DA_\(parameterTable)_\(entity.name)_\(attribute.name)"
                func tell(_ function: String, _ row: String) -> String {
                    "SELECT \(function)('\(source)', Z_ENT, Z_PK, '\(attribute.name)', \(column)) FROM \(source) WHERE Z_PK = \(row);"
                }
                let updated = "NSCoreDataDATriggerUpdatedAffectedObjectValue"
                triggers += [
                    "CREATE TRIGGER IF NOT EXISTS \(prefix)_PARAMETER_INSERT AFTER INSERT ON \(parameterTable) FOR EACH ROW WHEN (NEW.\(key) NOT NULL) BEGIN UPDATE \(source) SET \(column) = IFNULL(\(column), 0) + 1 WHERE Z_PK = NEW.\(key); \(tell(updated, "NEW.\(key)")) END",
                    "CREATE TRIGGER IF NOT EXISTS \(prefix)_PARAMETER_UPDATE_INCREMENT AFTER UPDATE OF \(key) ON \(parameterTable) FOR EACH ROW WHEN (NEW.\(key) NOT NULL) BEGIN UPDATE \(source) SET \(column) = \(column) + 1 WHERE Z_PK = NEW.\(key); \(tell(updated, "NEW.\(key)")) END",
                    "CREATE TRIGGER IF NOT EXISTS \(prefix)_PARAMETER_UPDATE_DECREMENT AFTER UPDATE OF \(key) ON \(parameterTable) FOR EACH ROW WHEN (OLD.\(key) NOT NULL) BEGIN UPDATE \(source) SET \(column) = \(column) - 1 WHERE Z_PK = OLD.\(key); \(tell(updated, "OLD.\(key)")) END",
                    "CREATE TRIGGER IF NOT EXISTS \(prefix)_PARAMETER_DELETE AFTER DELETE ON \(parameterTable) FOR EACH ROW WHEN (OLD.\(key) NOT NULL) BEGIN UPDATE \(source) SET \(column) = \(column) - 1 WHERE Z_PK = OLD.\(key); \(tell(updated, "OLD.\(key)")) END",
                    "CREATE TRIGGER IF NOT EXISTS Z_DA_\(source)_\(entity.name)_\(attribute.name)_SOURCE_INSERT AFTER INSERT ON \(source) FOR EACH ROW BEGIN UPDATE \(source) SET \(column) = (SELECT IFNULL(COUNT(\(key)), 0) FROM \(parameterTable) WHERE \(key) = NEW.Z_PK) WHERE Z_PK = NEW.Z_PK; \(tell("NSCoreDataDATriggerInsertUpdatedAffectedObjectValue", "NEW.Z_PK")) END",
                ]
            }
        }
        return triggers
    }

    /// Triggers for `relationship.key`: the destination's value is copied when the destination
    /// row's column changes, and read again when the source row's foreign key changes or the row
    /// is inserted.
    private func copyTriggers(entity: EntityDescription, mapping: EntityMapping, slot: Int, attribute: AttributeDescription,
                              relationship name: String, key: String) -> [String] {
        guard let link = entity.valueSlot(named: name), let relationship = entity.relationshipsByName[name],
              let destination = relationship.destinationEntity, let destinationMapping = try? self.mapping(for: destination),
              let destinationSlot = destination.slotByName[key] else { return [] }
        let source = mapping.table
        let column = mapping.columns[slot]
        let foreignKey = mapping.columns[link]
        let parameterTable = destinationMapping.table
        let parameterColumn = destinationMapping.columns[destinationSlot]
        let prefix = "Z_DA_\(source)_\(entity.name)_\(attribute.name)"
        let read = "UPDATE \(source) SET \(column) = (SELECT \(parameterColumn) FROM \(parameterTable) WHERE Z_PK = NEW.\(foreignKey)) WHERE Z_PK = NEW.Z_PK;"
        return [
            "CREATE TRIGGER IF NOT EXISTS \(prefix)_PARAMETER_UPDATE AFTER UPDATE OF \(parameterColumn) ON \(parameterTable) FOR EACH ROW BEGIN UPDATE \(source) SET \(column) = NEW.\(parameterColumn) WHERE \(foreignKey) = NEW.Z_PK; END",
            "CREATE TRIGGER IF NOT EXISTS \(prefix)_SOURCE_UPDATE AFTER UPDATE OF \(foreignKey) ON \(source) FOR EACH ROW BEGIN \(read) END",
            "CREATE TRIGGER IF NOT EXISTS \(prefix)_SOURCE_INSERT AFTER INSERT ON \(source) FOR EACH ROW BEGIN \(read) END",
        ]
    }

    /// The relationship a `count:(name)` derivation counts, if that is what it is.
    static func countedRelationship(_ expression: String?) -> String? {
        guard let expression, expression.hasPrefix("count:("), expression.hasSuffix(")") else { return nil }
        let name = expression.dropFirst("count:(".count).dropLast()
        guard let first = name.first, first.isLetter, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else { return nil }
        return String(name)
    }
}
