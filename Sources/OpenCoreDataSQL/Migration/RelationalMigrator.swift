import Foundation
import OpenCoreDataCore

/// One lightweight migration's copy of the rows, written once for both SQL stores: the old
/// store's rows (read through ``MigrationSessions/source``) become the new store's (written
/// through ``MigrationSessions/target``, into tables laid out for the new model and still
/// empty) by an ``InferredMapping``: keys, straight copies where the database can do the work,
/// row by row otherwise, join tables, history, key counters and the store's UUID. Each store
/// wraps it in its own way of replacing the old content (see ``MigrationSessions``). Used on
/// one thread.
package final class RelationalMigrator<Sessions: MigrationSessions> {
    let sessions: Sessions
    let mapping: InferredMapping
    /// The store, for messages.
    let storeName: String
    let progress: (@Sendable (MigrationProgress) -> Void)?
    let sourceLayout: RelationalLayout
    let targetLayout: RelationalLayout

    /// Per source table: each copied row's new key and entity.
    var keys: [String: MigratedKeys] = [:]
    /// Rows the migration copies in all, and those copied so far (for progress reports).
    var totalRows = 0
    var completedRows = 0
    /// Old tables whose rows keep their keys (they alone feed their new table).
    var keptSourceTables: Set<String> = []
    /// New tables fed by one old table (their rows keep their keys), with that old table.
    var soleFeeders: [String: String] = [:]
    /// Per destination entity, the old row of each new key (made when first asked: only
    /// ordered relationships need it).
    var origins: [ObjectIdentifier: [Int64: (table: String, key: Int64)]] = [:]
    /// Per new ordered relationship and owner's new key: each member's position, by new key.
    var positions: [ObjectIdentifier: [Int64: [Int64: Int]]] = [:]
    /// Members of source relationships by owner's old key, in order.
    var memberCache: [ObjectIdentifier: [Int64: [Int64]]] = [:]
    var transposedCache: [ObjectIdentifier: [Int64: [Int64]]] = [:]

    /// Old rows read at a time by the row-by-row copy (a server sends a page whole).
    static var pageSize: Int { 5_000 }

    /// A migration of the rows that `sourceLayout` lays out (the old store's, with its entity
    /// numbers) into tables that `targetLayout` lays out.
    package init(sessions: Sessions, mapping: InferredMapping, storeName: String, sourceLayout: RelationalLayout, targetLayout: RelationalLayout,
                 progress: (@Sendable (MigrationProgress) -> Void)?) {
        self.sessions = sessions
        self.mapping = mapping
        self.storeName = storeName
        self.sourceLayout = sourceLayout
        self.targetLayout = targetLayout
        self.progress = progress
    }

    /// Copies everything, inside whatever transaction the caller holds on the target; the old
    /// store's history comes along when `hasHistory`.
    package func copy(hasHistory: Bool) throws {
        try assignKeys()
        let copied = try copyStraight()
        try copyRows(skipping: copied)
        try copyJoinTables()
        if hasHistory { try copyHistory() }
        try finishMetadata()
    }

    var source: Sessions.Source { sessions.source }
    var target: Sessions.Target { sessions.target }

    // MARK: - Steps

    /// New keys: kept when a new table is fed by one old table, numbered anew otherwise.
    func assignKeys() throws {
        var feeders: [String: Set<String>] = [:]
        for entity in mapping.source.entities {
            guard let destination = mapping.destination(of: entity) else { continue }
            feeders[try targetLayout.mapping(for: destination).table, default: []].insert(try sourceLayout.mapping(for: entity).table)
        }
        for (targetTable, sources) in feeders where sources.count == 1 { soleFeeders[targetTable] = sources.first }
        var next: [String: Int64] = [:]
        for table in sourceLayout.tables {
            var tableKeys = MigratedKeys()
            // Per old entity number: the destination's index in `tableKeys` and its new table when
            // its keys are numbered anew (nil: kept); absent from the dictionary when not copied.
            var destinations: [Int64: (index: Int, renumberedInto: String?)?] = [:]
            var last: (number: Int64, destination: (index: Int, renumberedInto: String?)?)?
            try source.forEachRow("SELECT Z_PK, Z_ENT FROM \(identifier: table.name) ORDER BY Z_PK") { row in
                let key = row.key(0), number = row.key(1)
                let destination: (index: Int, renumberedInto: String?)?
                if let last, last.number == number {
                    destination = last.destination
                } else if let known = destinations[number] {
                    destination = known
                } else {
                    if let entity = sourceLayout.entitiesByNumber[Int(number)], let target = mapping.destination(of: entity), !target.isAbstract {
                        let targetTable = try targetLayout.mapping(for: target).table
                        let kept = feeders[targetTable]?.count == 1
                        if kept { keptSourceTables.insert(table.name) }
                        destination = (tableKeys.index(of: target), kept ? nil : targetTable)
                    } else {
                        destination = nil
                    }
                    destinations[number] = .some(destination)
                }
                last = (number, destination)
                guard let destination else { return }
                var newKey = key
                if let targetTable = destination.renumberedInto {
                    newKey = (next[targetTable] ?? 0) + 1
                    next[targetTable] = newKey
                }
                tableKeys.append(oldKey: key, newKey: newKey, entity: destination.index)
                totalRows += 1
            }
            keys[table.name] = tableKeys
        }
    }

    /// The old rows that become objects of `entity`: per old table (in the layout's order), their
    /// keys, ascending.
    func oldRows(of entity: EntityDescription) -> [(table: String, keys: [Int64])] {
        sourceLayout.tables.compactMap { table in
            guard let found = keys[table.name]?.oldKeys(of: entity), !found.isEmpty else { return nil }
            return (table.name, found)
        }
    }

    /// The old row that becomes the object of `entity` with the new key `key`.
    func origin(of entity: EntityDescription, newKey key: Int64) -> (table: String, key: Int64)? {
        let id = ObjectIdentifier(entity)
        if origins[id] == nil {
            var made: [Int64: (table: String, key: Int64)] = [:]
            for table in sourceLayout.tables {
                keys[table.name]?.forEachRow(of: entity) { newKey, oldKey in made[newKey] = (table.name, oldKey) }
            }
            origins[id] = made
        }
        return origins[id]?[key]
    }

    /// The rows of entities that no straight copy took, a page of old rows at a time.
    func copyRows(skipping copied: Set<ObjectIdentifier>) throws {
        for table in sourceLayout.tables {
            let tableKeys = keys[table.name] ?? MigratedKeys()
            guard tableKeys.entities.contains(where: { !copied.contains(ObjectIdentifier($0)) }) else { continue }
            let columns = SQLFragment.identifiers(["Z_PK", "Z_ENT", "Z_OPT"] + table.columns.map(\.name))
            var inserts: [ObjectIdentifier: (inserter: Sessions.Inserter, writer: MigrationRowWriter)] = [:]
            var after = Int64.min, more = true
            while more {
                more = false
                let page: SQLFragment = """
                    SELECT \(columns) FROM \(identifier: table.name) WHERE Z_PK > \(bind: .integer(after)) \
                    ORDER BY Z_PK LIMIT \(number: Self.pageSize)
                    """
                var read = 0
                try source.forEachRow(page) { row in
                    read += 1
                    let oldKey = row.key(0)
                    after = oldKey
                    guard let sourceEntity = sourceLayout.entitiesByNumber[Int(row.key(1))],
                          let (newKey, entity) = tableKeys[oldKey], !copied.contains(ObjectIdentifier(entity)) else { return }
                    let id = ObjectIdentifier(entity)
                    if inserts[id] == nil {
                        let writer = try MigrationRowWriter(entity: entity, layout: targetLayout, from: sourceEntity, layout: sourceLayout,
                                                            mapping: mapping)
                        let mapping = try targetLayout.mapping(for: entity)
                        inserts[id] = (try sessions.inserter(into: mapping.table, columns: writer.columns, orIgnore: false), writer)
                    }
                    guard let writer = inserts[id]?.writer else { return }
                    let values = try rowValues(row, key: newKey, of: entity, from: sourceEntity, table: table.name, writer: writer)
                    try inserts[id]?.inserter.insert(values)       // (in place: the inserter's queued rows are not copied)
                    completedRows += 1
                    if completedRows % 1000 == 0 || completedRows == totalRows {
                        progress?(MigrationProgress(entityName: entity.name, completedRows: completedRows, totalRows: totalRows))
                    }
                }
                more = read == Self.pageSize
            }
            for key in inserts.keys { try inserts[key]?.inserter.finish() }
        }
    }

    /// The new row of an old one: key, entity number, version, attributes (converted, from key
    /// paths, constants or defaults), to-one keys, then entity and order columns of its to-ones.
    private func rowValues(_ row: Sessions.Source.Row, key newKey: Int64, of entity: EntityDescription, from sourceEntity: EntityDescription,
                           table: String, writer: MigrationRowWriter) throws -> [ManagedValue] {
        let oldKey = row.key(0)
        var values: [ManagedValue] = [.integer(newKey), .integer(Int64(targetLayout.entityNumber(of: entity))), .integer(row.integer(2) ?? 1)]
        for (attribute, source) in zip(entity.storedAttributes, writer.attributeSources) {
            var value = ManagedValue.null
            switch source {
            case .column(let column, let old):
                value = Self.convert(row.value(column, type: old), from: old, to: attribute.attributeType)
            case .keyPath(let path):
                value = try follow(path, from: sourceEntity, row: (table, oldKey), to: attribute)
            case .constant(let constant):
                value = constant
            case .none:
                break
            }
            if value.isNull { value = attribute.storedDefault }
            if value.isNull && !attribute.isOptional {
                throw CoreDataError(.migration, """
                    Cannot migrate \(storeName): the mandatory attribute \(entity.name).\(attribute.name) has \
                    no value for a row of the old store and no default value. Give it a default value in the \
                    model, or make it optional.
                    """, key: attribute.name)
            }
            values.append(value)
        }
        var entityValues: [ManagedValue] = []
        var orderValues: [ManagedValue] = []
        for relationship in entity.toOneRelationships {
            let target = try members(of: relationship, in: entity, owner: (table, oldKey)).first
            values.append(target.map { .integer($0.key) } ?? .null)
            if writer.entityColumnRelationships.contains(relationship.name) {
                entityValues.append(target.map { .integer(Int64(targetLayout.entityNumber(of: $0.entity))) } ?? .null)
            }
            if writer.orderColumnRelationships.contains(relationship.name) {
                orderValues.append(try position(of: (table, oldKey), in: relationship.inverseRelationship, owner: target).map { .integer(RelationalLayout.orderValue($0)) } ?? .null)
            }
        }
        return values + entityValues + orderValues
    }

    /// Key counters of the new tables, and the old store's UUID (object IDs stay valid).
    /// A table whose rows kept their keys keeps its old counter too, when higher than its
    /// largest key (the keys of deleted objects are never handed out again, as in Core Data).
    func finishMetadata() throws {
        for table in targetLayout.tables {
            var counter: Int64 = 0
            try target.forEachRow("SELECT MAX(Z_PK) FROM \(sessions.targetTable(table.name))") { counter = $0.integer(0) ?? 0 }
            if let feeder = soleFeeders[table.name], let old = sourceLayout.tables.first(where: { $0.name == feeder }) {
                let number = ManagedValue.integer(Int64(sourceLayout.entityNumber(of: old.root)))
                try source.forEachRow("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = \(bind: number)") { counter = max(counter, $0.integer(0) ?? 0) }
            }
            guard counter > 0 else { continue }
            let number = ManagedValue.integer(Int64(targetLayout.entityNumber(of: table.root)))
            _ = try target.run("UPDATE \(sessions.targetTable("Z_PRIMARYKEY")) SET Z_MAX = \(bind: .integer(counter)) WHERE Z_ENT = \(bind: number)")
        }
        var uuid: String?
        try source.forEachRow("SELECT Z_UUID FROM Z_METADATA WHERE Z_VERSION = 1") { uuid = $0.text(0) }
        if let uuid {
            _ = try target.run("UPDATE \(sessions.targetTable("Z_METADATA")) SET Z_UUID = \(bind: .string(uuid)) WHERE Z_VERSION = 1")
        }
    }
}
