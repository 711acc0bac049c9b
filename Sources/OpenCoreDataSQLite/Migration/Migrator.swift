import Foundation
import OpenCoreDataCore
import OpenCoreDataSQL

/// One migration run: creates the new file, copies the rows (straight where it can, row by row
/// otherwise), join tables and history, then replaces the store. Used on one thread.
final class Migrator {
    let url: URL
    let mapping: InferredMapping
    let tracksHistory: Bool
    let progress: (@Sendable (MigrationProgress) -> Void)?

    var source: SQLiteConnection!
    var target: SQLiteConnection!
    var sourceLayout: RelationalLayout!
    var targetLayout: RelationalLayout!
    /// Per source table, per old key: the row's new key and entity.
    var keys: [String: [Int64: (key: Int64, entity: EntityDescription)]] = [:]
    /// Per destination entity, the rows that become its objects (source table, old key).
    var rows: [ObjectIdentifier: [(table: String, key: Int64)]] = [:]
    /// Rows the migration copies in all (for progress reports).
    var totalRows = 0
    /// Old tables whose rows keep their keys (they alone feed their new table).
    var keptSourceTables: Set<String> = []
    /// New tables fed by one old table (their rows keep their keys), with that old table.
    var soleFeeders: [String: String] = [:]
    /// Per destination entity, the old row of each new key.
    var origins: [ObjectIdentifier: [Int64: (table: String, key: Int64)]] = [:]
    /// Per new ordered relationship and owner's new key: each member's position, by new key.
    var positions: [ObjectIdentifier: [Int64: [Int64: Int]]] = [:]
    /// Members of source relationships by owner's old key, in order.
    var memberCache: [ObjectIdentifier: [Int64: [Int64]]] = [:]
    var transposedCache: [ObjectIdentifier: [Int64: [Int64]]] = [:]

    init(url: URL, mapping: InferredMapping, tracksHistory: Bool, progress: (@Sendable (MigrationProgress) -> Void)?) {
        self.url = url
        self.mapping = mapping
        self.tracksHistory = tracksHistory
        self.progress = progress
    }

    /// Migrates the store in place (see ``SQLiteStoreRewrite``). Returns `false` when another
    /// coordinator or process migrated it to the same model first (nothing left to do).
    func run() throws -> Bool {
        defer {
            source = nil
            target = nil
        }
        return try SQLiteStoreRewrite(url: url, from: mapping.source, to: mapping.destination, tracksHistory: tracksHistory).run { temporary, hasHistory in
            // The old rows are read through a connection of their own, which never sees the
            // scratch file; no commit can land between its reads, since the rewrite holds the lock.
            source = try SQLiteConnection(path: url.path, readOnly: true)
            defer { source = nil }
            try fill(temporary, hasHistory: hasHistory)
        }
    }

    /// Copies the rows, join tables and history of the old store (read through `source`, while
    /// `run()`'s live connection holds the store's write lock) into the scratch file.
    private func fill(_ temporary: URL, hasHistory: Bool) throws {
        sourceLayout = RelationalLayout(model: mapping.source, entityNumbers: try SQLiteStore.storedEntityNumbers(source, model: mapping.source))
        target = try SQLiteConnection(path: temporary.path, readOnly: false)
        defer { target = nil }
        // The scratch file needs no journal: a crash leaves a file that is thrown away.
        try target.execute("PRAGMA journal_mode = OFF")
        try target.execute("PRAGMA synchronous = OFF")
        targetLayout = RelationalLayout(model: mapping.destination, entityNumbers: Dictionary(mapping.destination.entities.map { ($0.name, $0.entityNumber) }, uniquingKeysWith: { a, _ in a }))

        // The old file, attached, is what straight copies read.
        let attach = try target.prepare("ATTACH DATABASE ? AS migration_source")
        try attach.bind([.string(url.path)])
        try attach.run()
        attach.finalize()
        // Deferred: `BEGIN IMMEDIATE` would ask for the live file's write lock, which `source` holds.
        try target.transaction(deferred: true) {
            try assignKeys()
            let copied = try copyStraight()
            try copyRows(skipping: copied)
            try copyJoinTables()
            if hasHistory { try copyHistory() }
            try finishMetadata()
        }
        try target.execute("DETACH DATABASE migration_source")
    }

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
            let statement = try source.prepare("SELECT Z_PK, Z_ENT FROM \(identifier: table.name) ORDER BY Z_PK" as SQLFragment)
            defer { statement.finalize() }
            var tableKeys: [Int64: (key: Int64, entity: EntityDescription)] = [:]
            while try statement.step() {
                let key = statement.int64(at: 0)
                guard let entity = sourceLayout.entitiesByNumber[Int(statement.int64(at: 1))], let destination = mapping.destination(of: entity),
                      !destination.isAbstract else { continue }
                let targetTable = try targetLayout.mapping(for: destination).table
                let newKey: Int64
                if feeders[targetTable]?.count == 1 {
                    newKey = key
                    keptSourceTables.insert(table.name)
                } else {
                    newKey = (next[targetTable] ?? 0) + 1
                    next[targetTable] = newKey
                }
                tableKeys[key] = (newKey, destination)
                rows[ObjectIdentifier(destination), default: []].append((table.name, key))
                origins[ObjectIdentifier(destination), default: [:]][newKey] = (table.name, key)
                totalRows += 1
            }
            keys[table.name] = tableKeys
        }
    }

    func copyRows(skipping copied: Set<ObjectIdentifier>) throws {
        var done = copied.reduce(0) { $0 + (rows[$1]?.count ?? 0) }
        for table in sourceLayout.tables {
            let columns = SQLFragment.identifiers(["Z_PK", "Z_ENT", "Z_OPT"] + table.columns.map(\.name))
            let select = try source.prepare("SELECT \(columns) FROM \(identifier: table.name) ORDER BY Z_PK" as SQLFragment)
            defer { select.finalize() }
            var inserts: [ObjectIdentifier: (statement: SQLiteStatement, writer: RowWriter)] = [:]
            defer { for insert in inserts.values { insert.statement.finalize() } }
            let tableKeys = keys[table.name] ?? [:]
            while try select.step() {
                let oldKey = select.int64(at: 0)
                guard let sourceEntity = sourceLayout.entitiesByNumber[Int(select.int64(at: 1))],
                      let (newKey, entity) = tableKeys[oldKey], !copied.contains(ObjectIdentifier(entity)) else { continue }
                if inserts[ObjectIdentifier(entity)] == nil {
                    let writer = try RowWriter(entity: entity, layout: targetLayout, from: sourceEntity, layout: sourceLayout, mapping: mapping)
                    inserts[ObjectIdentifier(entity)] = (try target.prepare(writer.sql), writer)
                }
                guard let (insert, writer) = inserts[ObjectIdentifier(entity)] else { continue }
                var values: [ManagedValue] = [.integer(newKey), .integer(Int64(targetLayout.entityNumber(of: entity))), .integer(select.isNull(at: 2) ? 1 : select.int64(at: 2))]
                for (attribute, source) in zip(entity.storedAttributes, writer.attributeSources) {
                    var value = ManagedValue.null
                    switch source {
                    case .column(let column, let old):
                        value = Self.convert(select.value(at: column, type: old), from: old, to: attribute.attributeType)
                    case .keyPath(let path):
                        value = try follow(path, from: sourceEntity, row: (table.name, oldKey), to: attribute)
                    case .constant(let constant):
                        value = constant
                    case .none:
                        break
                    }
                    if value.isNull { value = attribute.storedDefault }
                    if value.isNull && !attribute.isOptional {
                        throw CoreDataError(.migration, "Cannot migrate \(url.lastPathComponent): the mandatory attribute \(entity.name).\(attribute.name) has no value for a row of the old store and no default value. Give it a default value in the model, or make it optional.", key: attribute.name)
                    }
                    values.append(value)
                }
                var entityValues: [ManagedValue] = []
                var orderValues: [ManagedValue] = []
                for relationship in entity.toOneRelationships {
                    let target = try members(of: relationship, in: entity, owner: (table.name, oldKey)).first
                    values.append(target.map { .integer($0.key) } ?? .null)
                    if writer.entityColumnRelationships.contains(relationship.name) {
                        entityValues.append(target.map { .integer(Int64(targetLayout.entityNumber(of: $0.entity))) } ?? .null)
                    }
                    if writer.orderColumnRelationships.contains(relationship.name) {
                        orderValues.append(try position(of: (table.name, oldKey), in: relationship.inverseRelationship, owner: target).map { .integer(RelationalLayout.orderValue($0)) } ?? .null)
                    }
                }
                try insert.bind(values + entityValues + orderValues)
                try insert.run()
                done += 1
                if done % 1000 == 0 || done == totalRows { progress?(MigrationProgress(entityName: entity.name, completedRows: done, totalRows: totalRows)) }
            }
        }
    }

    /// Key counters of the new tables, and the old store's UUID (object IDs stay valid).
    /// A table whose rows kept their keys keeps its old counter too, when higher than its
    /// largest key (the keys of deleted objects are never handed out again, as in Core Data).
    func finishMetadata() throws {
        let oldCounter = try source.prepare("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?")
        defer { oldCounter.finalize() }
        let update = try target.prepare("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ?")
        defer { update.finalize() }
        for table in targetLayout.tables {
            let maximum = try target.prepare("SELECT MAX(Z_PK) FROM \(identifier: table.name)" as SQLFragment)
            defer { maximum.finalize() }
            var counter: Int64 = try maximum.step() && !maximum.isNull(at: 0) ? maximum.int64(at: 0) : 0
            if let feeder = soleFeeders[table.name], let old = sourceLayout.tables.first(where: { $0.name == feeder }) {
                oldCounter.reset()
                try oldCounter.bind([.integer(Int64(sourceLayout.entityNumber(of: old.root)))])
                if try oldCounter.step(), !oldCounter.isNull(at: 0) { counter = max(counter, oldCounter.int64(at: 0)) }
            }
            guard counter > 0 else { continue }
            update.reset()
            try update.bind([.integer(counter), .integer(Int64(targetLayout.entityNumber(of: table.root)))])
            try update.run()
        }
        let uuid = try source.prepare("SELECT Z_UUID FROM Z_METADATA WHERE Z_VERSION = 1")
        defer { uuid.finalize() }
        if try uuid.step(), !uuid.isNull(at: 0) {
            let update = try target.prepare("UPDATE Z_METADATA SET Z_UUID = ? WHERE Z_VERSION = 1")
            defer { update.finalize() }
            try update.bind([.string(uuid.string(at: 0))])
            try update.run()
        }
    }
}
