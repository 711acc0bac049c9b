import Foundation
import OpenCoreDataCore

/// One row of a query, read by column: an SQLite statement on its row, or a row a PostgreSQL
/// session returned.
package protocol SQLRow {
    /// An integer column; nil when NULL (or not an integer).
    func integer(_ column: Int) -> Int64?
    /// A floating-point column; nil when NULL.
    func real(_ column: Int) -> Double?
    /// A text column; nil when NULL.
    func text(_ column: Int) -> String?
    /// A blob column; nil when NULL.
    func bytes(_ column: Int) -> Data?
    /// The number of columns of the row.
    var columnCount: Int { get }
    /// A history `ZTOMBSTONE<n>` column as a value of `type`: SQLite keeps the values themselves,
    /// PostgreSQL their text (one column type for values of every attribute type).
    func tombstone(_ column: Int, type: AttributeType) -> ManagedValue
    /// A column as a value of an attribute of `type`, as the store keeps such values (a
    /// migration reads old rows so).
    func value(_ column: Int, type: AttributeType) -> ManagedValue
    /// A column as the store holds it, whatever attribute it belongs to (history rows copied
    /// whole).
    func raw(_ column: Int) -> ManagedValue
}

/// A connection that runs ``SQLFragment``s, rendered in its own dialect: what the relational
/// code written once for both SQL stores (``HistoryReading``) runs its statements on. Every
/// statement of one call sees one snapshot of the store (the caller's transaction).
package protocol SQLSession {
    associatedtype Row: SQLRow
    /// Runs `statement`, calling `body` with each row in turn.
    func forEachRow(_ statement: SQLFragment, _ body: (Row) throws -> Void) throws
    /// Runs a statement that returns no rows; returns how many rows it changed.
    func run(_ statement: SQLFragment) throws -> Int
}
