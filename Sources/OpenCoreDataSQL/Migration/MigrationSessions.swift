import Foundation
import OpenCoreDataCore

/// Where a lightweight migration (``RelationalMigrator``) reads the old store's rows and writes
/// the new store's: the one thing that differs between the SQL stores' migrations.
///
/// - SQLite: the old rows are read through a connection to the live file, and written through a
///   connection to a scratch file laid out for the new model, to which the live file is attached
///   (straight copies read it from there); the scratch file then replaces the store's content.
/// - PostgreSQL: one session, in the migration's transaction, reads the store's schema and writes
///   a scratch schema laid out for the new model, whose tables then take the old ones' place.
package protocol MigrationSessions {
    associatedtype Source: SQLSession
    associatedtype Target: SQLSession
    associatedtype Inserter: MigrationRowInserter

    /// Reads the old store (its tables by their plain names).
    var source: Source { get }
    /// Writes the new store (its tables as ``targetTable(_:)`` names them).
    var target: Target { get }
    /// A table of the new store, as a statement of ``target`` names it.
    func targetTable(_ name: String) -> SQLFragment
    /// A table of the old store, as a statement of ``target`` names it (a straight copy's
    /// `INSERT … SELECT` runs on the target and reads the old rows).
    func sourceTableFromTarget(_ name: String) -> SQLFragment
    /// Whether the old store has the table `name` (its history tables, say).
    func sourceHasTable(_ name: String) throws -> Bool
    /// The columns of one of the old store's tables, in table order.
    func sourceColumns(of table: String) throws -> [String]
    /// The columns of one of the new store's tables.
    func targetColumns(of table: String) throws -> [String]
    /// Writes rows into one of the new store's tables, `columns` given in that order; with
    /// `orIgnore`, a row whose key is already there is left out.
    func inserter(into table: String, columns: [String], orIgnore: Bool) throws -> Inserter
    /// The history rows were copied under their own keys: what hands out the next keys moves past
    /// them (PostgreSQL's change sequence; nothing for SQLite, whose keys follow the table).
    func historyCopied() throws
}

/// Writes one table's rows (``MigrationSessions/inserter(into:columns:orIgnore:)``): at once, or
/// gathered into multi-row statements (a round trip per row would make a server's migration
/// slower than its network).
package protocol MigrationRowInserter {
    /// Writes (or queues) a row: one value per column.
    mutating func insert(_ values: [ManagedValue]) throws
    /// Writes what is queued; the inserter is not used again.
    mutating func finish() throws
}

extension SQLRow {
    /// The 64-bit integer of a column, 0 when NULL (keys and entity numbers, never NULL in a
    /// store Core Data's rules wrote).
    package func key(_ column: Int) -> Int64 { integer(column) ?? 0 }
}
