import Foundation
import OpenCoreDataCore

/// Reading persistent history from Core Data's tables (`ATRANSACTION`, `ACHANGE`,
/// `ATRANSACTIONSTRING`), once for both SQL stores: the queries, the columns and what a row
/// means. The stores supply the connection (``SQLSession``).
package enum HistoryReading {
    /// The columns of a transaction, in the order the query selects them.
    private enum TransactionColumn: Int, CaseIterable {
        case number, timestamp, authorString, bundleIDString, contextNameString, processIDString, author, bundleID, contextName, processID

        var name: String {
            switch self {
            case .number: "Z_PK"
            case .timestamp: "ZTIMESTAMP"
            case .authorString: "ZAUTHORTS"
            case .bundleIDString: "ZBUNDLEIDTS"
            case .contextNameString: "ZCONTEXTNAMETS"
            case .processIDString: "ZPROCESSIDTS"
            case .author: "ZAUTHOR"
            case .bundleID: "ZBUNDLEID"
            case .contextName: "ZCONTEXTNAME"
            case .processID: "ZPROCESSID"
            }
        }
    }

    /// The columns of `ACHANGE` as Core Data creates it (the change rows are read with `*`, so
    /// that every `ZTOMBSTONE<n>` column the table has comes along, from `tombstones` on).
    private enum ChangeColumn {
        static let id = 0
        static let type = 3
        static let entity = 4
        static let primaryKey = 5
        static let transaction = 6
        static let changedColumns = 7
        static let tombstones = 8
    }

    /// The transactions after `number` (or, with `date`, after that moment), in order, at most
    /// `limit` of them (0: all), with their changes when `includingChanges`. Throws 134301 when
    /// history after `number` was deleted.
    package static func read(after number: Int64?, date: Date?, limit: Int, includingChanges: Bool, layout: RelationalLayout,
                             using connection: some SQLSession) throws -> [HistoryTransactionRecord] {
        if let number { try checkNotExpired(after: number, using: connection) }
        var strings: [Int64: String] = [:]
        try connection.forEachRow("SELECT Z_PK, ZNAME FROM ATRANSACTIONSTRING") { row in
            if let key = row.integer(0), let name = row.text(1) { strings[key] = name }
        }
        var transactions: [HistoryTransactionRecord] = []
        try connection.forEachRow(transactionsQuery(after: number, date: date, limit: limit)) { row in
            guard let record = transaction(row, strings: strings) else { return }
            transactions.append(record)
        }
        guard includingChanges, let first = transactions.first?.number, let last = transactions.last?.number else { return transactions }
        // Transaction numbers go up with the rows' order: a change finds its transaction by a
        // binary search, and only the changes of the transactions read are read.
        let changes: SQLFragment = """
            SELECT * FROM ACHANGE WHERE ZTRANSACTIONID >= \(bind: .integer(first)) AND ZTRANSACTIONID <= \(bind: .integer(last)) ORDER BY Z_PK
            """
        try connection.forEachRow(changes) { row in
            guard let (transactionNumber, record) = change(row, layout: layout),
                  let index = index(of: transactionNumber, in: transactions) else { return }
            transactions[index].changes.append(record)
        }
        return transactions
    }

    /// `SELECT … FROM ATRANSACTION WHERE … ORDER BY Z_PK [LIMIT n]`: after a transaction number,
    /// after a moment, or both (a later page of a read by date).
    private static func transactionsQuery(after number: Int64?, date: Date?, limit: Int) -> SQLFragment {
        var conditions: [SQLFragment] = []
        if number != nil || date == nil { conditions.append("Z_PK > \(bind: .integer(number ?? 0))") }
        if let date { conditions.append("ZTIMESTAMP > \(bind: .double(date.timeIntervalSinceReferenceDate))") }
        var query: SQLFragment = """
            SELECT \(SQLFragment.identifiers(TransactionColumn.allCases.map(\.name))) FROM ATRANSACTION \
            WHERE \(SQLFragment.joined(conditions, separator: " AND ")) ORDER BY Z_PK
            """
        if limit > 0 { query += " LIMIT \(bind: .integer(Int64(limit)))" }
        return query
    }

    private static func transaction(_ row: some SQLRow, strings: [Int64: String]) -> HistoryTransactionRecord? {
        guard let number = row.integer(TransactionColumn.number.rawValue) else { return nil }
        // A name is kept once in ATRANSACTIONSTRING (the …TS column) or, in older stores, inline.
        func text(_ shared: TransactionColumn, _ inline: TransactionColumn) -> String? {
            if let key = row.integer(shared.rawValue) { return strings[key] }
            return row.text(inline.rawValue)
        }
        return HistoryTransactionRecord(
            number: number, timestamp: Date(timeIntervalSinceReferenceDate: row.real(TransactionColumn.timestamp.rawValue) ?? 0),
            author: text(.authorString, .author), contextName: text(.contextNameString, .contextName),
            processID: text(.processIDString, .processID), bundleID: text(.bundleIDString, .bundleID), changes: [])
    }

    /// A change row: its transaction's number and the change (nil for a row of an entity the
    /// model does not have).
    private static func change(_ row: some SQLRow, layout: RelationalLayout) -> (Int64, HistoryChangeRecord)? {
        guard let id = row.integer(ChangeColumn.id), let type = row.integer(ChangeColumn.type), let number = row.integer(ChangeColumn.entity),
              let primaryKey = row.integer(ChangeColumn.primaryKey), let transaction = row.integer(ChangeColumn.transaction),
              let entity = layout.entitiesByNumber[Int(number)] else { return nil }
        var record = HistoryChangeRecord(changeID: id, changeType: Int(type), entity: entity, primaryKey: primaryKey, updatedNames: nil,
                                         tombstone: nil)
        if let columns = row.bytes(ChangeColumn.changedColumns) {
            record.updatedNames = entity.names(ofChangedSlots: HistoryTables.slots(of: columns))
        }
        if Int(type) == PersistentHistoryChange.ChangeType.delete.rawValue {
            var tombstone: [String: ManagedValue] = [:]
            for (offset, attribute) in entity.tombstoneAttributes.enumerated() where ChangeColumn.tombstones + offset < row.columnCount {
                tombstone[attribute.name] = row.tombstone(ChangeColumn.tombstones + offset, type: attribute.attributeType)
            }
            if !tombstone.isEmpty { record.tombstone = tombstone }
        }
        return (transaction, record)
    }

    /// The position of transaction `number` in `transactions` (in ascending order).
    private static func index(of number: Int64, in transactions: [HistoryTransactionRecord]) -> Int? {
        var (low, high) = (0, transactions.count)
        while low < high {
            let middle = (low + high) / 2
            if transactions[middle].number < number { low = middle + 1 } else { high = middle }
        }
        return low < transactions.count && transactions[low].number == number ? low : nil
    }

    /// The number of the last transaction recorded (0 when none was).
    package static func lastNumber(using connection: some SQLSession) throws -> Int64 {
        var last: Int64 = 0
        try connection.forEachRow("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = \(bind: .integer(Int64(HistoryTables.transactionEntity)))") { row in
            last = row.integer(0) ?? 0
        }
        return last
    }

    /// Deletes the transactions up to `number` (or committed before `date`) and their changes,
    /// inside the caller's write transaction; returns how many transactions went.
    package static func delete(through number: Int64?, before date: Date?, using connection: some SQLSession) throws -> Int {
        var limit = number ?? .max
        if let date {
            limit = 0
            let moment = ManagedValue.double(date.timeIntervalSinceReferenceDate)
            try connection.forEachRow("SELECT MAX(Z_PK) FROM ATRANSACTION WHERE ZTIMESTAMP < \(bind: moment)") { row in
                limit = row.integer(0) ?? 0
            }
        }
        _ = try connection.run("DELETE FROM ACHANGE WHERE ZTRANSACTIONID <= \(bind: .integer(limit))")
        return try connection.run("DELETE FROM ATRANSACTION WHERE Z_PK <= \(bind: .integer(limit))")
    }

    /// Throws 134301 when some transaction after `number` was deleted.
    private static func checkNotExpired(after number: Int64, using connection: some SQLSession) throws {
        var bounds: (oldest: Int64?, last: Int64)?
        let transactionEntity = ManagedValue.integer(Int64(HistoryTables.transactionEntity))
        let query: SQLFragment = """
            SELECT (SELECT MIN(Z_PK) FROM ATRANSACTION), (SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = \(bind: transactionEntity))
            """
        try connection.forEachRow(query) { row in
            bounds = (row.integer(0), row.integer(1) ?? 0)
        }
        guard let bounds else { return }
        try CoreDataError.checkHistoryToken(number, oldest: bounds.oldest, last: bounds.last)
    }
}
