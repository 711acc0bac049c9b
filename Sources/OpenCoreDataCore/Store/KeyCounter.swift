/// Core Data's key counter (`Z_PRIMARYKEY.Z_MAX`): the highest key handed out for a root entity
/// (or a history table). Both SQL stores raise it through here, so that a counter a damaged or
/// crafted file holds never makes key arithmetic overflow.
package enum KeyCounter {
    /// The highest counter from which `count` more keys can be handed out: the keys, and the one
    /// after the last (where a loop over them stops), fit in `Int64`.
    package static func ceiling(reserving count: Int) -> Int64 {
        Int64.max - 1 - Int64(clamping: count)
    }

    /// The counter after reserving `count` keys above `current`; throws 134000 when `current` is
    /// not a counter (negative, or too close to `Int64.max` for `count` more keys).
    package static func raised(_ current: Int64, by count: Int, table: String) throws(CoreDataError) -> Int64 {
        guard current >= 0, count >= 0, current <= ceiling(reserving: count) else {
            throw outOfRange(String(current), table: table)
        }
        return current + Int64(count)
    }

    /// The error for a counter that is not a key counter (`shown` as the store holds it).
    package static func outOfRange(_ shown: String, table: String) -> CoreDataError {
        CoreDataError(.persistentStoreInvalidType, """
            The store's key counter for \(table) (Z_PRIMARYKEY.Z_MAX) holds \(shown), which is not a key \
            counter between 0 and \(Int64.max - 1): the file is damaged. Restore it from a backup, or repair \
            Z_PRIMARYKEY.Z_MAX to the table's highest Z_PK.
            """)
    }
}
