import Foundation
import OpenCoreDataCore
import OpenCoreDataSQL

/// A PostgreSQL migration's session: it reads the store's schema (its `search_path`) and writes
/// the scratch schema, by qualified names, all inside the migration's transaction.
struct PostgreSQLMigrationSessions: MigrationSessions {
    let session: PostgreSQLSession
    /// The store's schema and the scratch schema.
    let store: String
    let scratch: String

    var source: PostgreSQLSession { session }
    var target: PostgreSQLSession { session }

    func targetTable(_ name: String) -> SQLFragment { "\(quoted: scratch).\(identifier: name)" }
    func sourceTableFromTarget(_ name: String) -> SQLFragment { "\(quoted: store).\(identifier: name)" }
    func sourceHasTable(_ name: String) throws -> Bool { try session.tableExists(name.lowercased(), inSchema: store) }
    func sourceColumns(of table: String) throws -> [String] { try columns(of: table, in: store) }
    func targetColumns(of table: String) throws -> [String] { try columns(of: table, in: scratch) }

    func inserter(into table: String, columns: [String], orIgnore: Bool) throws -> PostgreSQLRowInserter {
        PostgreSQLRowInserter(session: session, table: targetTable(table), columns: columns, orIgnore: orIgnore)
    }

    /// The change sequence of the scratch schema moves past the changes copied under their keys.
    func historyCopied() throws {
        let sequence = ManagedValue.string(PostgreSQLSQL.quoted(scratch) + ".achange_z_pk_seq")
        try session.execute("""
            SELECT setval(\(bind: sequence)::regclass, last) FROM (SELECT MAX(Z_PK) AS last FROM \(targetTable("ACHANGE"))) copied \
            WHERE last IS NOT NULL
            """ as SQLFragment)
    }

    /// A table's columns (as the catalog names them: lower case), in table order.
    private func columns(of table: String, in schema: String) throws -> [String] {
        try session.execute("""
            SELECT column_name::text FROM information_schema.columns \
            WHERE table_schema = \(bind: .string(schema)) AND table_name = \(bind: .string(table.lowercased())) ORDER BY ordinal_position
            """ as SQLFragment).rows.compactMap { row in
            if case .string(let name)? = row.first { name } else { nil }
        }
    }
}
