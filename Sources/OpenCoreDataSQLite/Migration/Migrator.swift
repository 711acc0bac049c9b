import Foundation
import OpenCoreDataCore
import OpenCoreDataSQL

/// One SQLite migration run: the rows are copied (``RelationalMigrator``) into a scratch file laid
/// out for the new model, which then replaces the store's content (``SQLiteStoreRewrite``).
/// Used on one thread.
struct Migrator {
    let url: URL
    let mapping: InferredMapping
    let tracksHistory: Bool
    let progress: (@Sendable (MigrationProgress) -> Void)?

    /// Migrates the store in place (see ``SQLiteStoreRewrite``). Returns `false` when another
    /// coordinator or process migrated it to the same model first (nothing left to do).
    func run() throws -> Bool {
        try SQLiteStoreRewrite(url: url, from: mapping.source, to: mapping.destination, tracksHistory: tracksHistory).run { temporary, hasHistory in
            try fill(temporary, hasHistory: hasHistory)
        }
    }

    /// Copies the rows, join tables and history of the old store into the scratch file, while
    /// `run()`'s live connection holds the store's write lock. The old rows are read through a
    /// connection of their own, which never sees the scratch file; no commit can land between
    /// its reads, since the rewrite holds the lock.
    private func fill(_ temporary: URL, hasHistory: Bool) throws {
        let source = try SQLiteConnection(path: url.path, readOnly: true)
        let target = try SQLiteConnection(path: temporary.path, readOnly: false)
        // The scratch file needs no journal: a crash leaves a file that is thrown away.
        try target.execute("PRAGMA journal_mode = OFF")
        try target.execute("PRAGMA synchronous = OFF")
        // The old file, attached, is what straight copies read.
        let attach = try target.prepare("ATTACH DATABASE ? AS migration_source")
        try attach.bind([.string(url.path)])
        try attach.run()
        attach.finalize()
        let sourceLayout = RelationalLayout(model: mapping.source, entityNumbers: try SQLiteStore.storedEntityNumbers(source, model: mapping.source))
        let targetLayout = RelationalLayout(model: mapping.destination,
                                            entityNumbers: Dictionary(mapping.destination.entities.map { ($0.name, $0.entityNumber) },
                                                                      uniquingKeysWith: { a, _ in a }))
        let migrator = RelationalMigrator(sessions: SQLiteMigrationSessions(source: source, target: target), mapping: mapping,
                                          storeName: url.lastPathComponent, sourceLayout: sourceLayout, targetLayout: targetLayout, progress: progress)
        // Deferred: `BEGIN IMMEDIATE` would ask for the live file's write lock, which `run()` holds.
        try target.transaction(deferred: true) { try migrator.copy(hasHistory: hasHistory) }
        try target.execute("DETACH DATABASE migration_source")
    }
}

/// An SQLite migration's connections: the live file read as it is, the scratch file written
/// with the live file attached as `migration_source`.
struct SQLiteMigrationSessions: MigrationSessions {
    let source: SQLiteConnection
    let target: SQLiteConnection

    func targetTable(_ name: String) -> SQLFragment { "main.\(identifier: name)" }
    func sourceTableFromTarget(_ name: String) -> SQLFragment { "migration_source.\(identifier: name)" }
    func sourceHasTable(_ name: String) throws -> Bool { try source.tableExists(name) }
    func sourceColumns(of table: String) throws -> [String] { try source.columns(of: table) }
    func targetColumns(of table: String) throws -> [String] { try target.columns(of: table) }

    func inserter(into table: String, columns: [String], orIgnore: Bool) throws -> SQLiteRowInserter {
        SQLiteRowInserter(statement: try target.prepare(RelationalLayout.insertRowStatement(table, columns: columns, orIgnore: orIgnore).rendered(for: .sqlite).sql))
    }

    func historyCopied() throws {}
}

/// Rows written one at a time through a statement prepared once.
struct SQLiteRowInserter: MigrationRowInserter {
    let statement: SQLiteStatement

    mutating func insert(_ values: [ManagedValue]) throws {
        try statement.bind(values)
        try statement.run()
    }

    mutating func finish() throws { statement.finalize() }
}
