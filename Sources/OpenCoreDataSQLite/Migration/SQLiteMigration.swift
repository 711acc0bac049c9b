import CSQLite
import Foundation
import OpenCoreDataCore

/// Lightweight migration of an SQLite store: when a store was written with another version of
/// the model, its rows are copied into a new file laid out for the current model (through an
/// ``InferredMapping``), which then replaces the store. The original file is untouched until
/// the copy is complete, so a failed migration leaves the store as it was.
///
/// Keys are kept wherever a table is fed by one old table (so object IDs survive); tables that
/// merge several old tables number their rows anew and every reference follows.
package enum SQLiteMigration {
    /// Migrates the store at `url` to `model` when it was written with another model. Returns
    /// whether it migrated. The store's model is its `Z_MODELCACHE`, or one of
    /// `MigrationSourceModelsOption` whose hashes match its metadata; a mapping model under
    /// `MappingModelsOption` between the store's version and `model` is followed.
    @discardableResult
    package static func migrateIfNeeded(at url: URL, to model: ManagedObjectModel, options: [String: any Sendable]) throws -> Bool {
        guard FileManager.default.fileExists(atPath: url.path) else { return false }
        try model.freeze()
        let stored: [String: Data]
        let candidates: [ManagedObjectModel]
        do {
            let db = try SQLiteConnection(path: url.path, readOnly: true)
            guard try db.tableExists("Z_METADATA") else { return false }
            stored = try SQLiteStore.readMetadata(db)["NSStoreModelVersionHashes"] as? [String: Data] ?? [:]
            guard stored != model.entityVersionHashesByName else { return false }
            let cached = try SQLiteModelCache.archive(in: db).flatMap { try? ManagedObjectModel(archive: $0) }
            candidates = (options[MigrationSourceModelsOption] as? [ManagedObjectModel] ?? []) + (cached.map { [$0] } ?? [])
        }
        let current = model.entityVersionHashesByName
        let mappingModel = (options[MappingModelsOption] as? [MappingModel] ?? []).first {
            $0.sourceModel.entityVersionHashesByName == stored && $0.destinationModel.entityVersionHashesByName == current
        }
        guard let source = mappingModel?.sourceModel ?? candidates.first(where: { $0.entityVersionHashesByName == stored }) else {
            throw CoreDataError(.migrationMissingSourceModel, "The store at \(url.path) was written with a model that is not at hand (it has no usable model cache, and none of the \(candidates.count) models given under MigrationSourceModelsOption has its version hashes). Pass the older model versions, e.g. ManagedObjectModel.versions(contentsOf:) of the .xcdatamodeld.")
        }
        let mapping = try InferredMapping(source: source.frozenCopy(), destination: model, mappingModel: mappingModel)
        let progress = options[MigrationProgressHandlerOption] as? @Sendable (MigrationProgress) -> Void
        try Migrator(url: url, mapping: mapping, tracksHistory: PersistentStore.isOn(NSPersistentHistoryTrackingKey, in: options), progress: progress).run()
        return true
    }
}

extension ManagedObjectModel {
    /// The model, frozen (models at hand may already be frozen by another coordinator).
    fileprivate func frozenCopy() throws -> ManagedObjectModel {
        try freeze()
        return self
    }
}

/// One migration run. Used on one thread.
private final class Migrator {
    let url: URL
    let mapping: InferredMapping
    let tracksHistory: Bool
    let progress: (@Sendable (MigrationProgress) -> Void)?

    private var source: SQLiteConnection!
    private var target: SQLiteConnection!
    private var sourceLayout: SQLiteLayout!
    private var targetLayout: SQLiteLayout!
    /// Per source table, per old key: the row's new key and entity.
    private var keys: [String: [Int64: (key: Int64, entity: EntityDescription)]] = [:]
    /// Per destination entity, the rows that become its objects (source table, old key).
    private var rows: [ObjectIdentifier: [(table: String, key: Int64)]] = [:]
    /// Old tables whose rows keep their keys (they alone feed their new table).
    private var keptSourceTables: Set<String> = []
    /// Per destination entity, the old row of each new key.
    private var origins: [ObjectIdentifier: [Int64: (table: String, key: Int64)]] = [:]
    /// Per new ordered relationship and owner's new key: each member's position, by new key.
    private var positions: [ObjectIdentifier: [Int64: [Int64: Int]]] = [:]
    /// Members of source relationships by owner's old key, in order.
    private var memberCache: [ObjectIdentifier: [Int64: [Int64]]] = [:]
    private var transposedCache: [ObjectIdentifier: [Int64: [Int64]]] = [:]

    init(url: URL, mapping: InferredMapping, tracksHistory: Bool, progress: (@Sendable (MigrationProgress) -> Void)?) {
        self.url = url
        self.mapping = mapping
        self.tracksHistory = tracksHistory
        self.progress = progress
    }

    func run() throws {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).migrating-\(UUID().uuidString)")
        let sidecars = { (file: URL) in ["-wal", "-shm", "-journal"].map { URL(fileURLWithPath: file.path + $0) } }
        defer {
            source = nil
            target = nil
            for file in [temporary] + sidecars(temporary) { try? FileManager.default.removeItem(at: file) }
        }
        // Fold the old store's WAL into its file, so the copy and the replaced file agree.
        source = try SQLiteConnection(path: url.path, readOnly: false)
        try? source.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        let hasHistory = try source.tableExists("ACHANGE") && source.tableExists("ATRANSACTION")
        sourceLayout = SQLiteLayout(model: mapping.source, entityNumbers: try SQLiteStore.storedEntityNumbers(source, model: mapping.source))

        // The new store: our own schema, metadata and key table for the current model.
        let created = try SQLiteStore(url: temporary, tracksHistory: tracksHistory || hasHistory)
        try created.load(model: mapping.destination)
        created.close()
        target = try SQLiteConnection(path: temporary.path, readOnly: false)
        // The new file is scratch until it replaces the store: no journal while filling it (a
        // crash leaves a file that is thrown away), WAL again before it takes the store's place.
        try target.execute("PRAGMA journal_mode = OFF")
        try target.execute("PRAGMA synchronous = OFF")
        targetLayout = SQLiteLayout(model: mapping.destination, entityNumbers: Dictionary(mapping.destination.entities.map { ($0.name, $0.entityNumber) }, uniquingKeysWith: { a, _ in a }))

        // The old file, attached, is what straight copies read (ATTACH cannot run in a transaction).
        let attach = try target.prepare("ATTACH DATABASE ? AS migration_source")
        try attach.bind([.string(url.path)])
        try attach.run()
        attach.finalize()
        try target.transaction {
            try assignKeys()
            let copied = try copyStraight()
            try copyRows(skipping: copied)
            try copyJoinTables()
            if hasHistory { try copyHistory() }
            try finishMetadata()
        }
        try target.execute("DETACH DATABASE migration_source")
        try target.execute("PRAGMA journal_mode = WAL")
        target = nil
        source = nil
        // Written without syncs: make the new file durable before it replaces the store.
        let handle = try FileHandle(forWritingTo: temporary)
        try handle.synchronize()
        try handle.close()
        // Replace the store: rename is atomic; the old sidecars are empty after the checkpoint.
        guard rename(temporary.path, url.path) == 0 else {
            throw CoreDataError(.migration, "The migrated store could not replace \(url.path) (error \(errno)). The original store is unchanged.")
        }
        for file in sidecars(url) { try? FileManager.default.removeItem(at: file) }
    }

    // MARK: - Steps

    /// New keys: kept when a new table is fed by one old table, numbered anew otherwise.
    private func assignKeys() throws {
        var feeders: [String: Set<String>] = [:]
        for entity in mapping.source.entities {
            guard let destination = mapping.destination(of: entity) else { continue }
            feeders[try targetLayout.mapping(for: destination).table, default: []].insert(try sourceLayout.mapping(for: entity).table)
        }
        var next: [String: Int64] = [:]
        for table in sourceLayout.tables {
            let statement = try source.prepare("SELECT Z_PK, Z_ENT FROM \(table.name) ORDER BY Z_PK")
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
            }
            keys[table.name] = tableKeys
        }
    }

    private func copyRows(skipping copied: Set<ObjectIdentifier>) throws {
        let total = rows.values.reduce(0) { $0 + $1.count }
        var done = copied.reduce(0) { $0 + (rows[$1]?.count ?? 0) }
        for table in sourceLayout.tables {
            let columns = ["Z_PK", "Z_ENT", "Z_OPT"] + table.columns.map(\.name)
            let select = try source.prepare("SELECT \(columns.joined(separator: ", ")) FROM \(table.name) ORDER BY Z_PK")
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
                        orderValues.append(try position(of: (table.name, oldKey), in: relationship.inverseRelationship, owner: target).map { .integer(SQLiteLayout.orderValue($0)) } ?? .null)
                    }
                }
                try insert.bind(values + entityValues + orderValues)
                try insert.run()
                done += 1
                if done % 1000 == 0 || done == total { progress?(MigrationProgress(entityName: entity.name, completedRows: done, totalRows: total)) }
            }
        }
    }

    /// Entities whose rows are a straight copy — keys kept, attributes of unchanged types or
    /// defaults, foreign keys into tables whose keys are kept, no entity or order columns to
    /// work out — are copied by SQLite itself (`INSERT … SELECT` from the attached old file).
    /// Returns them; `copyRows` does the others row by row.
    private func copyStraight() throws -> Set<ObjectIdentifier> {
        let total = rows.values.reduce(0) { $0 + $1.count }
        var done = 0
        var copied = Set<ObjectIdentifier>()
        for entity in mapping.destination.entities where !entity.isAbstract {
            guard let sourceEntity = mapping.source(of: entity), let rowCount = rows[ObjectIdentifier(entity)]?.count, rowCount > 0,
                  let plan = try straightCopy(of: entity, from: sourceEntity) else { continue }
            let statement = try target.prepare(plan.sql)
            defer { statement.finalize() }
            try statement.bind(plan.values)
            try statement.run()
            copied.insert(ObjectIdentifier(entity))
            done += rowCount
            progress?(MigrationProgress(entityName: entity.name, completedRows: done, totalRows: total))
        }
        return copied
    }

    /// The `INSERT … SELECT` of one entity, or nil when its rows need the row-by-row copy.
    private func straightCopy(of entity: EntityDescription, from sourceEntity: EntityDescription) throws -> (sql: String, values: [ManagedValue])? {
        let targetMapping = try targetLayout.mapping(for: entity), sourceMapping = try sourceLayout.mapping(for: sourceEntity)
        guard keptSourceTables.contains(sourceMapping.table), targetMapping.entityColumns.isEmpty,
              !entity.toOneRelationships.contains(where: { targetLayout.orderColumn(ofToOne: $0) != nil }) else { return nil }
        var expressions: [String] = []
        var values: [ManagedValue] = [.integer(Int64(targetLayout.entityNumber(of: entity)))]
        for attribute in entity.storedAttributes {
            // A mandatory attribute left without a value goes the row-by-row way, which reports it.
            let fallback = attribute.storedDefault
            switch mapping.source(of: attribute, in: entity) {
            case .property(let old as AttributeDescription)? where old.attributeType == attribute.attributeType:
                guard let slot = sourceEntity.slotByName[old.name] else { return nil }
                let column = sourceMapping.columns[slot]
                if !fallback.isNull {
                    expressions.append("COALESCE(\(column), ?)")
                    values.append(fallback)
                } else if try attribute.isOptional || !hasNull(column, in: sourceMapping.table, entity: sourceEntity) {
                    expressions.append(column)
                } else {
                    return nil
                }
            case .constant(let constant)?:
                let value = constant.isNull ? fallback : constant
                if value.isNull && !attribute.isOptional { return nil }
                expressions.append("?")
                values.append(value)
            case nil:
                if fallback.isNull && !attribute.isOptional { return nil }
                expressions.append("?")
                values.append(fallback)
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
            expressions.append(sourceMapping.columns[slot])
        }
        values.append(.integer(Int64(sourceLayout.entityNumber(of: sourceEntity))))
        let columns = ["Z_PK", "Z_ENT", "Z_OPT"] + targetMapping.columns
        let sql = "INSERT INTO main.\(targetMapping.table) (\(columns.joined(separator: ", "))) SELECT Z_PK, ?, COALESCE(Z_OPT, 1)"
            + expressions.map { ", " + $0 }.joined() + " FROM migration_source.\(sourceMapping.table) WHERE Z_ENT = ?"
        return (sql, values)
    }

    /// Whether some old row of `entity` has NULL in `column`.
    private func hasNull(_ column: String, in table: String, entity: EntityDescription) throws -> Bool {
        let statement = try source.prepare("SELECT 1 FROM \(table) WHERE Z_ENT = ? AND \(column) IS NULL LIMIT 1")
        defer { statement.finalize() }
        try statement.bind([.integer(Int64(sourceLayout.entityNumber(of: entity)))])
        return try statement.step()
    }

    /// Many-to-many relationships of the new model, filled from whichever side the old model had.
    private func copyJoinTables() throws {
        var done = Set<String>()
        for entity in mapping.destination.entities {
            for relationship in entity.properties.compactMap({ $0 as? RelationshipDescription }) where relationship.isToMany && !relationship.isTransient {
                guard case .joinTable(let table, let own, let other, let order, _) = try targetLayout.storage(of: relationship),
                      done.insert(table).inserted else { continue }
                var inverseOrder: String?
                if let inverse = relationship.inverseRelationship, case .joinTable(_, _, _, let column, _) = try targetLayout.storage(of: inverse) { inverseOrder = column }
                let columns = [own, other] + [order, inverseOrder].compactMap { $0 }
                let insert = try target.prepare("INSERT OR IGNORE INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))")
                defer { insert.finalize() }
                for kind in mapping.destination.entities where kind.isKindOf(entity: entity) {
                    for row in rows[ObjectIdentifier(kind)] ?? [] {
                        guard let owner = keys[row.table]?[row.key] else { continue }
                        for (index, member) in try members(of: relationship, in: kind, owner: row).enumerated() {
                            var values: [ManagedValue] = [.integer(owner.key), .integer(member.key)]
                            if order != nil { values.append(.integer(SQLiteLayout.orderValue(index))) }
                            if inverseOrder != nil {
                                values.append(try position(of: row, in: relationship.inverseRelationship, owner: member).map { .integer(SQLiteLayout.orderValue($0)) } ?? .null)
                            }
                            try insert.bind(values)
                            try insert.run()
                        }
                    }
                }
            }
        }
    }

    /// History rows come along; changes follow their objects' new entity numbers and keys.
    private func copyHistory() throws {
        for table in ["ATRANSACTIONSTRING", "ATRANSACTION", "ACHANGE"] where try source.tableExists(table) {
            let columns = Set(try target.columns(of: table))
            let ordered = try source.columns(of: table).filter { columns.contains($0) }
            let select = try source.prepare("SELECT \(ordered.joined(separator: ", ")) FROM \(table)")
            defer { select.finalize() }
            let insert = try target.prepare("INSERT INTO \(table) (\(ordered.joined(separator: ", "))) VALUES (\(ordered.map { _ in "?" }.joined(separator: ", ")))")
            defer { insert.finalize() }
            let entityColumn = ordered.firstIndex(of: "ZENTITY"), keyColumn = ordered.firstIndex(of: "ZENTITYPK")
            rowLoop: while try select.step() {
                var values = ordered.indices.map { Self.raw(select, Int32($0)) }
                if table == "ACHANGE", let entityColumn, let keyColumn, case .integer(let number) = values[entityColumn] {
                    guard let entity = sourceLayout.entitiesByNumber[Int(number)], let destination = mapping.destination(of: entity) else { continue rowLoop }
                    values[entityColumn] = .integer(Int64(targetLayout.entityNumber(of: destination)))
                    if case .integer(let key) = values[keyColumn], let moved = keys[try sourceLayout.mapping(for: entity).table]?[key] {
                        values[keyColumn] = .integer(moved.key)
                    }
                }
                try insert.bind(values)
                try insert.run()
            }
        }
        let copy = try target.prepare("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ?")
        defer { copy.finalize() }
        let counters = try source.prepare("SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT > 16000")
        defer { counters.finalize() }
        while try counters.step() {
            try copy.bind([.integer(counters.int64(at: 1)), .integer(counters.int64(at: 0))])
            try copy.run()
        }
    }

    /// Key counters of the new tables, and the old store's UUID (object IDs stay valid).
    private func finishMetadata() throws {
        for table in targetLayout.tables {
            let maximum = try target.prepare("SELECT MAX(Z_PK) FROM \(table.name)")
            defer { maximum.finalize() }
            guard try maximum.step(), !maximum.isNull(at: 0) else { continue }
            let update = try target.prepare("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ?")
            defer { update.finalize() }
            try update.bind([.integer(maximum.int64(at: 0)), .integer(Int64(targetLayout.entityNumber(of: table.root)))])
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

    // MARK: - Relationships

    /// The new keys and entities of the objects `relationship` (of the new model, on an object of
    /// `entity`) holds for the row `owner`, in order: from the old relationship it maps from, or
    /// (when only the other side existed) from the old inverse.
    private func members(of relationship: RelationshipDescription, in entity: EntityDescription, owner: (table: String, key: Int64)) throws -> [(key: Int64, entity: EntityDescription)] {
        let wanted = relationship.destinationEntity
        var found: [(table: String, key: Int64)] = []
        if let old = mapping.sourceProperty(of: relationship, in: entity) as? RelationshipDescription, let destination = old.destinationEntity {
            let table = try sourceLayout.mapping(for: destination).table
            found = try oldMembers(of: old)[owner.key, default: []].map { (table, $0) }
        } else if let inverse = relationship.inverseRelationship, let inverseOwner = inverse.entity,
                  let old = mapping.sourceProperty(of: inverse, in: inverseOwner) as? RelationshipDescription, let oldOwner = old.entity {
            let table = try sourceLayout.mapping(for: oldOwner).table
            found = try transposedMembers(of: old)[owner.key, default: []].map { (table, $0) }
        }
        return found.compactMap { member in
            guard let moved = keys[member.table]?[member.key], wanted.map({ moved.entity.isKindOf(entity: $0) }) ?? true else { return nil }
            return moved
        }
    }

    /// The value at the end of a key path from an old row (`continent.numericISO3166Code`):
    /// to-one relationships of the old model, then an attribute; nil where a step is empty.
    private func follow(_ path: [String], from entity: EntityDescription, row: (table: String, key: Int64), to attribute: AttributeDescription) throws -> ManagedValue {
        var entity = entity, key = row.key
        for step in path.dropLast() {
            guard let relationship = entity.relationshipsByName[step], !relationship.isToMany, let destination = relationship.destinationEntity else {
                throw CoreDataError(.migrationMissingMappingModel, "The mapping model's key path \(path.joined(separator: ".")) for \(attribute.name) does not follow to-one relationships of \(entity.name) in the store's model.")
            }
            guard let next = try oldMembers(of: relationship)[key]?.first else { return .null }
            entity = destination
            key = next
        }
        guard let last = path.last, let old = entity.attributesByName[last], let slot = entity.slotByName[last] else {
            throw CoreDataError(.migrationMissingMappingModel, "The mapping model's key path \(path.joined(separator: ".")) for \(attribute.name) does not end at an attribute of \(entity.name) in the store's model.")
        }
        let entityMapping = try sourceLayout.mapping(for: entity)
        let statement = try source.cachedStatement("SELECT \(entityMapping.columns[slot]) FROM \(entityMapping.table) WHERE Z_PK = ?")
        defer { statement.reset() }
        try statement.bind([.integer(key)])
        guard try statement.step() else { return .null }
        return Self.convert(statement.value(at: 0, type: old.attributeType), from: old.attributeType, to: attribute.attributeType)
    }

    /// The position of `member` among the members `inverse` (an ordered to-many of the new
    /// model) holds for `owner`.
    private func position(of member: (table: String, key: Int64), in inverse: RelationshipDescription?, owner: (key: Int64, entity: EntityDescription)?) throws -> Int? {
        guard let inverse, let owner, let moved = keys[member.table]?[member.key] else { return nil }
        if let known = positions[ObjectIdentifier(inverse)]?[owner.key] { return known[moved.key] }
        guard let ownerRow = origins[ObjectIdentifier(owner.entity)]?[owner.key] else { return nil }
        var byKey: [Int64: Int] = [:]
        for (index, member) in try members(of: inverse, in: owner.entity, owner: ownerRow).enumerated() { byKey[member.key] = index }
        positions[ObjectIdentifier(inverse), default: [:]][owner.key] = byKey
        return byKey[moved.key]
    }

    /// Old keys of the members of an old relationship, by owner, in stored order.
    private func oldMembers(of relationship: RelationshipDescription) throws -> [Int64: [Int64]] {
        if let cached = memberCache[ObjectIdentifier(relationship)] { return cached }
        guard let owner = relationship.entity else { return [:] }
        let sql: String
        if !relationship.isToMany {
            let ownerMapping = try sourceLayout.mapping(for: owner)
            guard let slot = owner.toOneSlotByName[relationship.name] else { return [:] }
            let column = ownerMapping.columns[slot]
            sql = "SELECT Z_PK, \(column) FROM \(ownerMapping.table) WHERE \(column) IS NOT NULL"
        } else {
            switch try sourceLayout.storage(of: relationship) {
            case .inverseForeignKey(let table, let column, let order, _):
                sql = "SELECT \(column), Z_PK FROM \(table) WHERE \(column) IS NOT NULL ORDER BY \(column), \(order ?? "Z_PK")"
            case .joinTable(let table, let own, let other, let order, _):
                sql = "SELECT \(own), \(other) FROM \(table) ORDER BY \(own), \(order ?? other)"
            }
        }
        let statement = try source.prepare(sql)
        defer { statement.finalize() }
        var result: [Int64: [Int64]] = [:]
        while try statement.step() { result[statement.int64(at: 0), default: []].append(statement.int64(at: 1)) }
        memberCache[ObjectIdentifier(relationship)] = result
        return result
    }

    /// The owners of each member of an old relationship (the relationship read backwards).
    private func transposedMembers(of relationship: RelationshipDescription) throws -> [Int64: [Int64]] {
        if let cached = transposedCache[ObjectIdentifier(relationship)] { return cached }
        var result: [Int64: [Int64]] = [:]
        for (owner, members) in try oldMembers(of: relationship).sorted(by: { $0.key < $1.key }) {
            for member in members { result[member, default: []].append(owner) }
        }
        transposedCache[ObjectIdentifier(relationship)] = result
        return result
    }

    // MARK: - Values

    /// A value of an old attribute as a value of the new attribute's type: kept when the type
    /// is the same; numbers, strings and dates converted where the meaning is kept; otherwise
    /// nil (the new attribute's default applies).
    static func convert(_ value: ManagedValue, from old: AttributeType, to new: AttributeType) -> ManagedValue {
        guard !value.isNull, old != new, let any = value.anyValue(for: old) else { return value }
        if let converted = ManagedValue(converting: any, to: new) { return converted }
        switch (any, new) {
        case (_, .string): return .string("\(any)")
        case (let text as String, .integer16), (let text as String, .integer32), (let text as String, .integer64):
            return Int64(text).flatMap { ManagedValue(converting: $0, to: new) } ?? .null
        case (let text as String, .double), (let text as String, .float):
            return Double(text).map { .double($0) } ?? .null
        case (let number as Double, .integer16), (let number as Double, .integer32), (let number as Double, .integer64):
            return ManagedValue(converting: Int64(number), to: new) ?? .null
        default: return .null
        }
    }

    private static func raw(_ statement: SQLiteStatement, _ column: Int32) -> ManagedValue {
        switch sqlite3_column_type(statement.handle, column) {
        case SQLITE_INTEGER: .integer(statement.int64(at: column))
        case SQLITE_FLOAT: .double(sqlite3_column_double(statement.handle, column))
        case SQLITE_TEXT: .string(statement.string(at: column))
        case SQLITE_BLOB: .data(statement.data(at: column))
        default: .null
        }
    }
}

/// The insert of one entity's rows into the new store: keys, attributes, to-one keys, then the
/// `Z<n>_` entity columns and `Z_FOK_` order columns of its to-ones; and where each attribute's
/// value comes from in the old rows (worked out once per entity, not per row).
private struct RowWriter {
    enum AttributeSource {
        /// A column of the old row (its position in the select) of the old attribute's type.
        case column(Int32, AttributeType)
        case keyPath([String])
        case constant(ManagedValue)
        case none
    }

    let sql: String
    let entityColumnRelationships: Set<String>
    let orderColumnRelationships: Set<String>
    /// Per stored attribute of the new entity, in slot order.
    let attributeSources: [AttributeSource]

    init(entity: EntityDescription, layout: SQLiteLayout, from sourceEntity: EntityDescription, layout sourceLayout: SQLiteLayout, mapping: InferredMapping) throws {
        let sourceMapping = try sourceLayout.mapping(for: sourceEntity)
        attributeSources = entity.storedAttributes.map { attribute in
            switch mapping.source(of: attribute, in: entity) {
            case .property(let old as AttributeDescription)?:
                guard let slot = sourceEntity.slotByName[old.name] else { return .none }
                return .column(Int32(3 + sourceMapping.tableIndexes[slot]), old.attributeType)
            case .keyPath(let path)?: return .keyPath(path)
            case .constant(let value)?: return .constant(value)
            default: return .none
            }
        }
        let mapping = try layout.mapping(for: entity)
        var columns = ["Z_PK", "Z_ENT", "Z_OPT"] + mapping.columns
        var withEntity = Set<String>(), withOrder = Set<String>()
        var orderColumns: [String] = []
        for (offset, relationship) in entity.toOneRelationships.enumerated() {
            if let column = mapping.entityColumns[entity.storedAttributes.count + offset] {
                columns.append(column.name)
                withEntity.insert(relationship.name)
            }
        }
        for relationship in entity.toOneRelationships {
            if let column = layout.orderColumn(ofToOne: relationship) {
                orderColumns.append(column)
                withOrder.insert(relationship.name)
            }
        }
        columns += orderColumns
        sql = "INSERT INTO \(mapping.table) (\(columns.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
        entityColumnRelationships = withEntity
        orderColumnRelationships = withOrder
    }
}
