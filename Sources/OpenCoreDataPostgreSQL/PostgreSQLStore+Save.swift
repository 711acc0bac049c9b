import OpenCoreDataCore
import OpenCoreDataSQL

extension PostgreSQLStore {
    /// Raises `Z_PRIMARYKEY.Z_MAX` by `count` in one statement of its own transaction: the row
    /// lock orders concurrent writers of every process, and each gets its own range at once
    /// (a save's transaction never holds it).
    package func allocatePrimaryKeys(root: EntityDescription, count: Int) throws -> Int64 {
        try checkWritable()
        let number = try currentLayout().mapping(for: root).entityNumbers[0]
        return try pool.withSession { try reserveKeys($0, entityNumber: number, count: count) }
    }

    package func lastPrimaryKey(root: EntityDescription) throws -> Int64 {
        let number = try currentLayout().mapping(for: root).entityNumbers[0]
        let rows = try read { try $0.execute("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = \(bind: .integer(Int64(number)))" as SQLFragment).rows }
        if case .integer(let maximum)? = rows.first?.first { return maximum }
        return 0
    }

    /// Raises a `Z_PRIMARYKEY` row by `count` inside the caller's transaction (its row lock is
    /// held until that transaction ends); returns the first key.
    /// A counter out of range (see ``KeyCounter``) is left as it is and refused.
    func reserveKeys(_ session: PostgreSQLSession, entityNumber: Int, count: Int) throws -> Int64 {
        let rows = try session.execute("""
            UPDATE Z_PRIMARYKEY SET Z_MAX = COALESCE(Z_MAX, 0) + \(bind: .integer(Int64(count))) \
            WHERE Z_ENT = \(bind: .integer(Int64(entityNumber))) \
            AND COALESCE(Z_MAX, 0) BETWEEN 0 AND \(bind: .integer(KeyCounter.ceiling(reserving: count))) RETURNING Z_MAX
            """ as SQLFragment).rows
        guard case .integer(let maximum)? = rows.first?.first else {
            let query: SQLFragment = "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = \(bind: .integer(Int64(entityNumber)))"
            let current = try session.execute(query).rows
            if case .integer(let value)? = current.first?.first { throw KeyCounter.outOfRange(String(value), table: "Z_ENT \(entityNumber)") }
            throw CoreDataError(.persistentStoreOperation, "The PostgreSQL store's Z_PRIMARYKEY table has no row for Z_ENT \(entityNumber).")
        }
        return maximum - Int64(count) + 1
    }

    package func save(_ request: StoreSaveRequest, resolving resolve: StoreConflictResolver?,
                      beforeCommit: (() throws -> Bool)?) throws -> StoreSaveOutcome {
        try checkWritable()
        let layout = try currentLayout()
        // Rows in one order (table, key) in every save, so that two saves of the same rows wait
        // for each other instead of deadlocking (a save a merge policy made again included).
        let ordered: StoreConflictResolver? = resolve.map { resolve in { conflicts in try resolve(conflicts).map(Self.ordered) } }
        return try StoreSaveRules.save(Self.ordered(request), resolving: ordered, recordingHistory: tracksHistory,
                                       beforeCommit: beforeCommit) { attempt in
            try writeTransaction { session in
                // A part of a save across stores waits, open, while the next store's part is written.
                if beforeCommit != nil { try session.waitsForClient() }
                var transaction = PostgreSQLSaveTransaction(store: self, session: session, layout: layout)
                guard resolve != nil else { return try attempt(&transaction) }
                // Reads of this store while the merge policy decides (a fault it fires) go
                // through this session: the pool lends a caller one session at a time.
                return try TransactionSession.$current.withValue(TransactionSession(store: ObjectIdentifier(self), session: session)) {
                    try attempt(&transaction)
                }
            }
        }
    }

    /// `request` with its updates and deletions in (table, key) order.
    private static func ordered(_ request: StoreSaveRequest) -> StoreSaveRequest {
        var ordered = request
        ordered.updates.sort { StoreSaveRequest.writesBefore($0.entity, $0.primaryKey, $1.entity, $1.primaryKey) }
        ordered.deletes.sort { StoreSaveRequest.writesBefore($0.entity, $0.primaryKey, $1.entity, $1.primaryKey) }
        return ordered
    }

    /// Runs `body` in a transaction that commits (with a notification to every store on the
    /// schema) when it answers ``StoreSaveOutcome/committed``, and rolls back otherwise.
    ///
    /// A transaction the server chose as a deadlock's victim (`40P01`) or could not serialise
    /// (`40001`) wrote nothing; it is run again, up to four times, before the error reaches the
    /// caller. A COMMIT that got no answer (the connection died, or its deadline passed) is
    /// resolved by asking the server, on a new connection, what became of the transaction
    /// (`resolveLostCommit`): committed is success, anything else an error.
    func writeTransaction(_ body: (PostgreSQLSession) throws -> StoreSaveOutcome) throws -> StoreSaveOutcome {
        var attempt = 1
        while true {
            var identity: WriteTransactionIdentity?
            var committing = false
            do {
                return try pool.withSession { session in
                    try session.execute("BEGIN")
                    return try StoreSaveOutcome.settling(commit: {
                        committing = true
                        try session.execute("COMMIT")
                        noteCommit(session)
                    },
                                                         rollback: { try session.execute("ROLLBACK") }) {
                        // The notification is sent first (delivered only if the transaction
                        // commits), so that it adds no round trip while the history number is
                        // held; with the check that the schema was not migrated, which must come
                        // before any write.
                        identity = try checkModelUnchanged(session, notifying: true)
                        return try body(session)
                    }
                }
            } catch let error as CoreDataError where error.storeDetail?.isTransientConflict == true && attempt < 5 {
                attempt += 1
            } catch let error as CoreDataError where committing && error.sqlState == nil {
                // No answer to the COMMIT (an answer, even an error, would carry a SQLSTATE). The
                // session was given back closed; the question goes out on another.
                guard let identity else { throw error }
                try resolveLostCommit(identity, lost: error)
                // Where the log reached is not known: reads go to the primary until the next commit.
                if replicaPool != nil { lastCommit.withLock { $0 = .max } }
                return .committed
            }
        }
    }

    /// Runs a batch's `body` in a transaction that commits and notifies.
    func batchTransaction<T>(_ body: (PostgreSQLSession) throws -> T) throws -> T {
        try checkWritable()
        var result: T?
        _ = try writeTransaction { session in
            result = try TransactionSession.$current.withValue(TransactionSession(store: ObjectIdentifier(self), session: session)) {
                try body(session)
            }
            return .committed
        }
        guard let result else { throw CoreDataError(.persistentStoreOperation, "A batch request on the PostgreSQL store ended without a result.") }
        return result
    }
}

/// The session of the batch transaction running on this task, if any: reads the batch makes of
/// its own store (a predicate following a relationship, tested in Swift on locked rows) go
/// through it, so that they see the transaction's rows and a caller never holds two sessions of
/// one pool (see `PostgreSQLSessionPool`).
struct TransactionSession: Sendable {
    /// The store whose transaction it is.
    let store: ObjectIdentifier
    let session: PostgreSQLSession

    @TaskLocal static var current: TransactionSession?
}

/// A save's steps in the PostgreSQL store, inside one transaction on one session. Optimistic
/// locking is one statement per row, `UPDATE … WHERE Z_PK = $k AND Z_OPT = $v`: under
/// `READ COMMITTED` a concurrent writer of the same row makes this one wait for its commit,
/// then re-check the row, find another `Z_OPT` and change nothing — a conflict, as in SQLite.
struct PostgreSQLSaveTransaction: StoreSaveTransaction {
    let store: PostgreSQLStore
    let session: PostgreSQLSession
    let layout: RelationalLayout

    mutating func write(_ update: StoreSaveRequest.Update) throws -> Bool {
        let mapping = try layout.mapping(for: update.entity)
        let statement = RelationalLayout.updateRowStatement(mapping, slots: update.slots)
        return try session.execute(statement, parameters: layout.updateRowValues(update, mapping: mapping)).changed > 0
    }

    /// The `Z_ENT` column value of a to-one's destination (NULL without one).
    private func entityNumber(of value: ManagedValue) -> ManagedValue {
        if case .object(let id) = value { .integer(Int64(layout.entityNumber(of: id.entity))) } else { .null }
    }

    /// Updates of one entity that set the same slots go in multi-row statements (a round trip per
    /// up to 1,000 rows): `UPDATE … FROM (VALUES …)` matching each row by key and version, as
    /// the single-row statement does; the rows it does not return were not written (conflicts).
    /// Rows are locked in the order the server joins them, no longer strictly by key: two such
    /// saves of the same rows may deadlock, and the loser is run again (`writeTransaction`).
    mutating func write(_ updates: [StoreSaveRequest.Update]) throws -> [Bool] {
        var written = [Bool](repeating: false, count: updates.count)
        for group in PostgreSQLStore.grouped(Array(updates.indices),
                                             by: { GroupKey(entity: ObjectIdentifier(updates[$0].entity), slots: updates[$0].slots) }) {
            guard group.count > 1 else {
                written[group[0]] = try write(updates[group[0]])
                continue
            }
            let first = updates[group[0]]
            let mapping = try layout.mapping(for: first.entity)
            // The values each row brings: its slots' columns, then the entity columns of to-ones.
            let dialect = SQLDialect.postgreSQL
            var targets = first.slots.map { (column: mapping.columns[$0],
                                             type: dialect.columnType(mapping.types[$0]).components(separatedBy: " ")[0]) }
            let entitySlots = first.slots.filter { mapping.entityColumns[$0] != nil }
            targets += entitySlots.compactMap { mapping.entityColumns[$0].map { (column: $0.name, type: "bigint") } }
            let sets = ["Z_OPT = v.z_opt + 1"] + targets.enumerated().map { SQLFragment("\(identifier: $1.column) = v.\(identifier: "c\($0)")") }
            let names = SQLFragment.identifiers(["z_pk", "z_opt"] + targets.indices.map { "c\($0)" })
            let casts = ["bigint", "bigint"] + targets.map(\.type)
            try PostgreSQLStore.eachMultiRowChunk(of: group, width: casts.count) { chunk in
                let rows = chunk.map { index in
                    let update = updates[index]
                    let values = [.integer(update.primaryKey), .integer(update.expectedVersion)]
                        + update.slots.map { PostgreSQLStore.columnValue(update.values[$0]) }
                        + entitySlots.map { entityNumber(of: update.values[$0]) }
                    return PostgreSQLStore.typedRow(values, types: casts)
                }
                let statement: SQLFragment = """
                    UPDATE \(identifier: mapping.table) AS t SET \(SQLFragment.joined(sets, separator: ", ")) \
                    FROM (VALUES \(SQLFragment.joined(rows, separator: ", "))) AS v(\(names)) \
                    WHERE t.Z_PK = v.z_pk AND t.Z_OPT = v.z_opt RETURNING t.Z_PK
                    """
                let keys = Set(try session.integers(statement))
                for index in chunk { written[index] = keys.contains(updates[index].primaryKey) }
            }
        }
        return written
    }

    /// Updates that can share a statement: one entity, the same slots.
    private struct GroupKey: Hashable {
        var entity: ObjectIdentifier
        var slots: [Int]
    }

    /// Deletions from one table go in multi-row statements (a round trip per up to 1,000 rows),
    /// each row matched by key and version as the single-row statement does; the rows it does
    /// not return were not deleted.
    mutating func remove(_ deletes: [StoreSaveRequest.Delete]) throws -> [Bool] {
        var removed = [Bool](repeating: false, count: deletes.count)
        for group in PostgreSQLStore.grouped(Array(deletes.indices), by: { deletes[$0].entity.rootEntity.name }) {
            guard group.count > 1 else {
                removed[group[0]] = try remove(deletes[group[0]])
                continue
            }
            let table = try layout.mapping(for: deletes[group[0]].entity).table
            try PostgreSQLStore.eachMultiRowChunk(of: group, width: 2) { chunk in
                let rows = chunk.map { index in
                    let delete = deletes[index]
                    return PostgreSQLStore.typedRow([.integer(delete.primaryKey), .integer(delete.expectedVersion)], types: ["bigint", "bigint"])
                }
                let statement: SQLFragment = """
                    DELETE FROM \(identifier: table) AS t USING (VALUES \(SQLFragment.joined(rows, separator: ", "))) AS v(z_pk, z_opt) \
                    WHERE t.Z_PK = v.z_pk AND t.Z_OPT = v.z_opt RETURNING t.Z_PK
                    """
                let keys = Set(try session.integers(statement))
                for index in chunk { removed[index] = keys.contains(deletes[index].primaryKey) }
            }
        }
        return removed
    }

    mutating func remove(_ delete: StoreSaveRequest.Delete) throws -> Bool {
        let mapping = try layout.mapping(for: delete.entity)
        let statement = RelationalLayout.removeRowStatement(mapping.table)
        return try session.execute(statement, parameters: [.integer(delete.primaryKey), .integer(delete.expectedVersion)]).changed > 0
    }

    mutating func currentRow(entity: EntityDescription, primaryKey: Int64) throws -> RowSnapshot? {
        try readRow(entity: entity, primaryKey: primaryKey, locking: false)
    }

    /// Held `FOR UPDATE`: a writer that holds the row is waited for, and what it committed read.
    mutating func lockRow(entity: EntityDescription, primaryKey: Int64) throws -> RowSnapshot? {
        try readRow(entity: entity, primaryKey: primaryKey, locking: true)
    }

    private func readRow(entity: EntityDescription, primaryKey: Int64, locking: Bool) throws -> RowSnapshot? {
        let mapping = try layout.mapping(for: entity)
        guard let row = try session.execute(RelationalLayout.currentRowQuery(mapping, key: primaryKey, locking: locking)).rows.first,
              case .integer(let version) = row[0] else { return nil }
        return RowSnapshot(values: store.values(of: row, from: 1, mapping: mapping, layout: layout), version: version)
    }

    /// The rows of each entity go in multi-row `INSERT`s: a round trip per up to 1,000 rows
    /// (within PostgreSQL's 65,535 parameters a statement), not per row.
    mutating func insert(_ inserts: [StoreSaveRequest.Insert]) throws {
        for group in PostgreSQLStore.grouped(inserts, by: { ObjectIdentifier($0.entity) }) {
            let mapping = try layout.mapping(for: group[0].entity)
            try PostgreSQLStore.insertRows(session, into: mapping.table, columns: mapping.insertColumns,
                                           entityNumber: Int64(mapping.entityNumbers[0]),
                                           rows: group.map { ($0.primaryKey,
                                                              PostgreSQLStore.columnValues(layout.insertValues($0.values, mapping: mapping))) })
        }
    }

    /// Pairs of one join table go in one statement per up to 1,000: added pairs in a multi-row
    /// `INSERT`, removed ones in a `DELETE` of the listed pairs.
    mutating func writeJoins(_ joins: [StoreSaveRequest.JoinChange]) throws {
        var pairs: [(target: JoinTarget, join: StoreSaveRequest.JoinChange)] = []
        for join in joins {
            guard case .joinTable(let table, let own, let other, _, _) = try layout.storage(of: join.relationship) else { continue }
            pairs.append((JoinTarget(table: table, own: own, other: other, isInsert: join.isInsert), join))
        }
        for group in PostgreSQLStore.grouped(pairs, by: \.target) {
            let target = group[0].target
            try PostgreSQLStore.eachMultiRowChunk(of: group, width: 2) { chunk in
                let pairs = chunk.map { pair in SQLFragment("(\(list: [.integer(pair.join.source), .integer(pair.join.destination)]))") }
                let list = SQLFragment.joined(pairs, separator: ", ")
                let columns = SQLFragment.identifiers([target.own, target.other])
                let statement: SQLFragment = target.isInsert
                    ? "INSERT INTO \(identifier: target.table) (\(columns)) VALUES \(list) ON CONFLICT DO NOTHING"
                    : "DELETE FROM \(identifier: target.table) WHERE (\(columns)) IN (\(list))"
                try session.execute(statement)
            }
        }
    }

    /// Pairs that can share a statement: one join table with its columns in one order (the two
    /// sides of a relationship between objects of one entity name the same table with its
    /// columns the other way round), all added or all removed.
    private struct JoinTarget: Hashable {
        var table: String
        var own: String
        var other: String
        var isInsert: Bool
    }

    mutating func writeOrders(_ orders: [StoreSaveRequest.OrderChange]) throws {
        for change in orders {
            for (index, member) in change.members.enumerated() {
                guard let update = try layout.orderUpdate(change.relationship, order: RelationalLayout.orderValue(index), member: member,
                                                          source: change.source) else { break }
                try session.execute(update)
            }
        }
    }

    mutating func recordHistory(author: HistoryAuthor, changes: [StoreHistoryChange]) throws {
        try store.recordHistory(session, layout: layout, author: author, changes: changes)
    }
}
