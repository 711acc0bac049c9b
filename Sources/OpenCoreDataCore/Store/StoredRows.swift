/// Rows of one entity's stored values in slot order, kept one after the other in a single array:
/// what a batch insert hands a store, without an array (an allocation, and a release of each
/// value later) per row.
package struct StoredRows: RandomAccessCollection, Sendable {
    /// Values in a row: the entity's stored attributes and to-one relationships.
    package let width: Int
    package let startIndex = 0
    package private(set) var endIndex = 0
    private var values: [ManagedValue] = []

    /// No rows yet; room for `capacity` rows.
    package init(width: Int, capacity: Int = 0) {
        self.width = width
        values.reserveCapacity(width * capacity)
    }

    /// The values of row `position`.
    package subscript(position: Int) -> ArraySlice<ManagedValue> {
        values[position * width ..< (position + 1) * width]
    }

    /// The value of `slot` in row `row`.
    package subscript(row: Int, slot: Int) -> ManagedValue {
        get { values[row * width + slot] }
        set { values[row * width + slot] = newValue }
    }

    /// Adds a row of `width` values.
    package mutating func append(_ row: some Collection<ManagedValue>) {
        precondition(row.count == width, "A stored row has one value per slot of its entity.")
        values.append(contentsOf: row)
        endIndex += 1
    }
}
