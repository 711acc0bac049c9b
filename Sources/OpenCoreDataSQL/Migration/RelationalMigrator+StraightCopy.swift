import Foundation
import OpenCoreDataCore

extension RelationalMigrator {

    /// Entities whose rows are a straight copy — keys kept, attributes of unchanged types or
    /// defaults, foreign keys into tables whose keys are kept, no entity or order columns to
    /// work out — are copied by the database itself (`INSERT … SELECT` from the old tables).
    /// Returns them; `copyRows` does the others row by row.
    func copyStraight() throws -> Set<ObjectIdentifier> {
        var copied = Set<ObjectIdentifier>()
        for entity in mapping.destination.entities where !entity.isAbstract {
            // (One old table holds the rows of an entity a straight copy takes: its source's.)
            guard let sourceEntity = mapping.source(of: entity), case let tables = oldRows(of: entity), tables.count == 1,
                  let plan = try straightCopy(of: entity, from: sourceEntity) else { continue }
            let entityRows = tables[0].keys, rowCount = entityRows.count
            // In ranges of keys (read in key order) of at most `straightCopyRows` rows: one
            // statement stays well inside a server's statement timeout, whatever the table's size.
            for start in stride(from: 0, to: rowCount, by: Self.straightCopyRows) {
                let end = start + Self.straightCopyRows
                let low = start == 0 ? Int64.min : entityRows[start]
                let high = end >= rowCount ? Int64.max : entityRows[end] - 1
                _ = try target.run(plan + " AND Z_PK BETWEEN \(bind: .integer(low)) AND \(bind: .integer(high))")
            }
            copied.insert(ObjectIdentifier(entity))
            completedRows += rowCount
            progress?(MigrationProgress(entityName: entity.name, completedRows: completedRows, totalRows: totalRows))
        }
        return copied
    }

    /// Rows one `INSERT … SELECT` copies at the most.
    static var straightCopyRows: Int { 100_000 }

    /// The `INSERT … SELECT` of one entity, or nil when its rows need the row-by-row copy.
    func straightCopy(of entity: EntityDescription, from sourceEntity: EntityDescription) throws -> SQLFragment? {
        let targetMapping = try targetLayout.mapping(for: entity), sourceMapping = try sourceLayout.mapping(for: sourceEntity)
        guard keptSourceTables.contains(sourceMapping.table), targetMapping.entityColumns.isEmpty,
              !entity.toOneRelationships.contains(where: { targetLayout.orderColumn(ofToOne: $0) != nil }) else { return nil }
        var expressions: [SQLFragment] = []
        for attribute in entity.storedAttributes {
            // A mandatory attribute left without a value goes the row-by-row way, which reports it.
            let fallback = attribute.storedDefault
            switch mapping.source(of: attribute, in: entity) {
            case .property(let old as AttributeDescription)? where old.attributeType == attribute.attributeType:
                guard let slot = sourceEntity.slotByName[old.name] else { return nil }
                let column = sourceMapping.columns[slot]
                if !fallback.isNull {
                    expressions.append("COALESCE(\(identifier: column), \(bind: fallback))")
                } else if try attribute.isOptional || !hasNull(column, in: sourceMapping.table, entity: sourceEntity) {
                    expressions.append("\(identifier: column)")
                } else {
                    return nil
                }
            case .constant(let constant)?:
                let value = constant.isNull ? fallback : constant
                if value.isNull && !attribute.isOptional { return nil }
                expressions.append("\(bind: value)")
            case nil:
                if fallback.isNull && !attribute.isOptional { return nil }
                expressions.append("\(bind: fallback)")
            default:
                return nil
            }
        }
        for relationship in entity.toOneRelationships {
            guard let old = mapping.sourceProperty(of: relationship, in: entity) as? RelationshipDescription else {
                expressions.append("NULL")
                continue
            }
            // The old key is the new key only when the destination's table keeps its keys and
            // every row the key may point at still exists, as a kind of the new destination.
            guard !old.isToMany, let oldDestination = old.destinationEntity, let newDestination = relationship.destinationEntity,
                  let slot = sourceEntity.toOneSlotByName[old.name],
                  keptSourceTables.contains(try sourceLayout.mapping(for: oldDestination).table),
                  mapping.source.entities.filter({ $0.isKindOf(entity: oldDestination) }).allSatisfy({ candidate in
                      // An abstract old entity has no rows of its own; every other one must keep its rows.
                      candidate.isAbstract || (mapping.destination(of: candidate).map { !$0.isAbstract && $0.isKindOf(entity: newDestination) } ?? false)
                  }) else { return nil }
            expressions.append("\(identifier: sourceMapping.columns[slot])")
        }
        let columns = SQLFragment.identifiers(["Z_PK", "Z_ENT", "Z_OPT"] + targetMapping.columns)
        var selected: SQLFragment = "Z_PK, \(bind: .integer(Int64(targetLayout.entityNumber(of: entity)))), COALESCE(Z_OPT, 1)"
        for expression in expressions { selected += ", \(expression)" }
        let sourceNumber = ManagedValue.integer(Int64(sourceLayout.entityNumber(of: sourceEntity)))
        return """
            INSERT INTO \(sessions.targetTable(targetMapping.table)) (\(columns)) SELECT \(selected) \
            FROM \(sessions.sourceTableFromTarget(sourceMapping.table)) WHERE Z_ENT = \(bind: sourceNumber)
            """
    }

    /// Whether some old row of `entity` has NULL in `column`.
    func hasNull(_ column: String, in table: String, entity: EntityDescription) throws -> Bool {
        let entityNumber = ManagedValue.integer(Int64(sourceLayout.entityNumber(of: entity)))
        var found = false
        try source.forEachRow("""
            SELECT 1 FROM \(identifier: table) WHERE Z_ENT = \(bind: entityNumber) AND \(identifier: column) IS NULL LIMIT 1
            """) { _ in found = true }
        return found
    }
}
