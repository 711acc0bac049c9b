import OpenCoreDataCore

/// A derived attribute the store keeps current with triggers, whichever rows change (a save of
/// the other side of a relationship, a batch request, another process): each store writes the
/// triggers in its own SQL (`Z_DA_…` names, Core Data's in SQLite files). The other derivations
/// (`now()`, `canonical:`, copies within the object) are computed when an object is saved; counts
/// over join tables get no trigger (read as stored).
package struct DerivedAttributeTrigger: Equatable, Sendable {
    package enum Kind: Equatable, Sendable {
        /// The count of a to-many whose destination rows hold the source's key (`pages.@count`,
        /// compiled `count:(pages)`): the rows of `parameterTable` whose `key` is the source
        /// row's key.
        case count(parameterTable: String, key: String)
        /// A to-one's attribute copied (`author.name`): `parameterColumn` of the `parameterTable`
        /// row the source's `foreignKey` names, following both that column and the key.
        case copy(foreignKey: String, parameterTable: String, parameterColumn: String)
    }

    /// The entity and attribute derived (for trigger names).
    package var entity: String
    package var attribute: String
    /// The table and column of the derived attribute.
    package var source: String
    package var column: String
    package var kind: Kind
}

extension RelationalLayout {
    /// The derived attributes of `model` that the store keeps with triggers.
    package func derivedAttributeTriggers(model: ManagedObjectModel) -> [DerivedAttributeTrigger] {
        var triggers: [DerivedAttributeTrigger] = []
        for entity in model.entities {
            guard entity.hasDerivedAttributes, let mapping = try? mapping(for: entity) else { continue }
            for (slot, attribute) in entity.storedAttributes.enumerated() where entity.properties.contains(where: { $0 === attribute }) {
                let kind: DerivedAttributeTrigger.Kind
                if case .copy(let keys)? = attribute.derivation, keys.count == 2,
                   attribute.derivation?.isComputable(for: attribute, of: entity) == true {
                    guard let link = entity.valueSlot(named: keys[0]), let destination = entity.relationshipsByName[keys[0]]?.destinationEntity,
                          let destinationMapping = try? self.mapping(for: destination), let destinationSlot = destination.slotByName[keys[1]] else {
                              continue
                          }
                    kind = .copy(foreignKey: mapping.columns[link], parameterTable: destinationMapping.table,
                                 parameterColumn: destinationMapping.columns[destinationSlot])
                } else {
                    guard let name = Self.countedRelationship(attribute.derivationExpression),
                          let relationship = entity.relationshipsByName[name], relationship.isToMany,
                          case .inverseForeignKey(let parameterTable, let key, _, _)? = try? storage(of: relationship) else { continue }
                    kind = .count(parameterTable: parameterTable, key: key)
                }
                triggers.append(DerivedAttributeTrigger(entity: entity.name, attribute: attribute.name, source: mapping.table,
                                                        column: mapping.columns[slot], kind: kind))
            }
        }
        return triggers
    }

    /// The relationship a `count:(name)` derivation counts, if that is what it is.
    static func countedRelationship(_ expression: String?) -> String? {
        guard let expression, expression.hasPrefix("count:("), expression.hasSuffix(")") else { return nil }
        let name = expression.dropFirst("count:(".count).dropLast()
        guard let first = name.first, first.isLetter, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else { return nil }
        return String(name)
    }
}
