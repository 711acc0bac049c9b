import OpenCoreDataCore
import OpenCoreDataSQL

/// Rows gathered into multi-row `INSERT`s (as many as a statement's 65,535 parameters allow, at
/// most 1,000): one round trip per statement, not per row. What a save's and a batch insert's new
/// rows and a migration's copied rows are written with.
struct PostgreSQLRowInserter: MigrationRowInserter {
    let session: PostgreSQLSession
    let table: SQLFragment
    let columns: [String]
    let orIgnore: Bool
    private var queued: [[ManagedValue]] = []

    init(session: PostgreSQLSession, table: SQLFragment, columns: [String], orIgnore: Bool) {
        self.session = session
        self.table = table
        self.columns = columns
        self.orIgnore = orIgnore
    }

    mutating func insert(_ values: [ManagedValue]) throws {
        queued.append(values)
        if queued.count >= PostgreSQLStore.rowsPerStatement(width: columns.count) { try flush() }
    }

    mutating func finish() throws { try flush() }

    private mutating func flush() throws {
        guard !queued.isEmpty else { return }
        let rows = SQLFragment.joined(queued.map { "(\(list: $0))" }, separator: ", ")
        let conflict: SQLFragment = orIgnore ? " ON CONFLICT DO NOTHING" : ""
        try session.execute("INSERT INTO \(table) (\(SQLFragment.identifiers(columns))) VALUES \(rows)\(conflict)")
        queued.removeAll(keepingCapacity: true)
    }
}
