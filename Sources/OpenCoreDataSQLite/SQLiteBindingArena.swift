/// The bytes of the text and blob values bound for one use of a prepared statement, which SQLite
/// then reads in place (`SQLITE_STATIC`) instead of copying each value into memory of its own at
/// the bind and freeing it when the bindings are cleared (two allocations per text value: a third
/// of what binding an inserted row cost).
///
/// SQLite reads a static value until the parameter is bound again, the bindings are cleared or
/// the statement is finalized. So bytes copied here are never moved or overwritten until
/// ``reuse()``, which the statement calls right after clearing its bindings; the memory grows only
/// there (to what the last use asked for) and is freed after the statement is finalized. A value
/// that does not fit (the first use of a statement, a value over 64 KiB) is bound as SQLite's own
/// copy, as before. Owned by its statement, used by the thread that holds the statement's
/// connection.
final class SQLiteBindingArena {
    private var base: UnsafeMutableRawPointer?
    private var capacity = 0
    private var used = 0
    /// The bytes this use asked for, fitting or not: the size the next use gets.
    private var requested = 0

    /// Values larger than this are bound as SQLite's own copy (the arena stays small).
    static let largestValue = 1 << 16
    /// The arena never grows past this.
    static let largestArena = 1 << 20

    /// Where `bytes` were copied, or `nil` when they do not fit (bind them with `SQLITE_TRANSIENT`).
    func copy(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawPointer? {
        let count = bytes.count
        guard count <= Self.largestValue else { return nil }
        requested += count
        guard let base, used + count <= capacity else { return nil }
        let destination = base + used
        if let source = bytes.baseAddress { destination.copyMemory(from: source, byteCount: count) }
        used += count
        return UnsafeRawPointer(destination)
    }

    /// Makes the bytes reusable: call only once no binding refers to them (after
    /// `sqlite3_clear_bindings`). Grows the arena to what the last use asked for.
    func reuse() {
        if requested > capacity && capacity < Self.largestArena {
            var size = Swift.max(256, capacity)
            while size < requested && size < Self.largestArena { size *= 2 }
            base?.deallocate()
            base = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 1)
            capacity = size
        }
        used = 0
        requested = 0
    }

    deinit { base?.deallocate() }
}
