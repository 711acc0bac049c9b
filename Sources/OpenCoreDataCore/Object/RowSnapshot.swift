/// The committed state of one row: its values (in the entity's slot order) and its
/// optimistic-locking version (`Z_OPT`). A `Sendable` value shared by the store, the
/// coordinator's row cache and the objects of every context (copy-on-write: one buffer).
public struct RowSnapshot: Sendable, Equatable {
    /// The values, in the order of the entity's stored attributes.
    public var values: [ManagedValue]
    /// The version: 1 after insert, +1 per saved change.
    public var version: Int64

    /// Makes a snapshot.
    public init(values: [ManagedValue], version: Int64) {
        self.values = values
        self.version = version
    }
}

/// One row read from a store: which object, and its committed state.
public struct StoreRow: Sendable {
    /// The entity of the row (a sub-entity where the row says so).
    public var entity: EntityDescription
    /// The primary key (`Z_PK`).
    public var primaryKey: Int64
    /// Values and version.
    public var snapshot: RowSnapshot
    /// The number (`StoreNumbers`) of the store the row came from, when a fetch spanned several
    /// stores (`nil`: the store the fetch names).
    package var storeNumber: UInt32?

    /// Makes a row.
    public init(entity: EntityDescription, primaryKey: Int64, snapshot: RowSnapshot) {
        self.entity = entity
        self.primaryKey = primaryKey
        self.snapshot = snapshot
    }
}
