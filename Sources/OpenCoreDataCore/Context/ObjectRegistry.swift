/// A context's registered objects by permanent ID: an ``IDTable`` of 16-byte buckets, a tag and
/// the object. The key of an entry is its object's own `objectID`, so the ID is not stored twice;
/// a `Dictionary<ManagedObjectID, ManagedObject>` took 32 bytes a bucket (84 bytes per object at
/// 100,000 objects) and two SipHash hashes per fetched row.
///
/// Callers remove an object before its ID changes (a constraint conflict re-keys an object that
/// way), which the graph's invariants check (``misfiledObjects``, and
/// `registry[object.objectID] === object`).
///
/// A value owned by its context's `ObjectGraph` (the context's queue).
package struct ObjectRegistry {
    package struct Entry: IDTableEntry {
        package var tag: UInt64
        package var object: ManagedObject?

        package static var empty: Entry { Entry(tag: 0, object: nil) }

        package func holds(_ id: ManagedObjectID) -> Bool { object?.objectID == id }
    }

    private var table = IDTable<Entry>()

    package init() {}

    /// The number of registered objects.
    package var count: Int { table.count }

    /// The bucket holding the object registered under `id`, if any.
    package func index(for id: ManagedObjectID) -> Int? { table.index(for: id) }

    /// The object registered under `id`; setting stores an object under `id` (replacing the one
    /// there) or, with `nil`, removes it.
    package subscript(id: ManagedObjectID) -> ManagedObject? {
        get { table.index(for: id).flatMap { table[$0].object } }
        set {
            if let newValue {
                table.insert(Entry(tag: table.tag(id), object: newValue), for: id)
            } else if let index = table.index(for: id) {
                table.remove(at: index)
            }
        }
    }

    /// Looks `id` up, remembering where its object would go (see ``register(_:at:)``).
    package func probe(_ id: ManagedObjectID) -> IDTable<Entry>.Probe { table.probe(id) }

    /// Stores `object` under its ID, which `probe` looked for and did not find: with no second
    /// probe when nothing changed the registry in between.
    package mutating func insert(_ object: ManagedObject, at probe: IDTable<Entry>.Probe) {
        table.insert(Entry(tag: table.tag(of: probe), object: object), at: probe, for: object.objectID)
    }

    /// The object in a bucket found by ``index(for:)``.
    package func object(at index: Int) -> ManagedObject {
        // A bucket found by `index(for:)` holds an object (a nil there is a bug of this type).
        table[index].object!
    }

    /// Whether only the registry references the object in a bucket.
    package mutating func isUniquelyReferenced(at index: Int) -> Bool {
        isKnownUniquelyReferenced(&table[index].object)
    }

    /// Removes and returns the object in a bucket.
    @discardableResult
    package mutating func remove(at index: Int) -> ManagedObject {
        // The removed entry's reference is handed back as it is (no other taken and dropped).
        table.remove(at: index).object!
    }

    /// Whether the bucket at `index` holds `object` (compared in place).
    package func holds(_ object: ManagedObject, at index: Int) -> Bool {
        table.withEntry(at: index) { $0.object === object }
    }

    /// Makes room for `capacity` objects without growing again.
    package mutating func reserveCapacity(_ capacity: Int) { table.reserveCapacity(capacity) }

    /// Every registered object, in no particular order.
    package var objects: [ManagedObject] {
        var result: [ManagedObject] = []
        result.reserveCapacity(count)
        table.forEach { if let object = $0.object { result.append(object) } }
        return result
    }

    /// Calls `body` with every registered object, in no particular order (no array made).
    package func forEachObject(_ body: (ManagedObject) throws -> Void) rethrows {
        try table.forEach { if let object = $0.object { try body(object) } }
    }

    /// Objects stored under a tag that is not their own ID's: registered under another ID, and
    /// missed by lookups under their own (the graph's invariants report them).
    package var misfiledObjects: [ManagedObject] {
        table.all.compactMap { entry in entry.object.flatMap { table.tag($0.objectID) == entry.tag ? nil : $0 } }
    }

    /// Removes the objects `shouldRemove` picks (given each one in place, so that it can ask
    /// `isKnownUniquelyReferenced`) and returns them.
    package mutating func removeAll(where shouldRemove: (inout ManagedObject?) -> Bool) -> [ManagedObject] {
        table.removeAll { shouldRemove(&$0.object) }.compactMap(\.object)
    }

    /// Forgets every object.
    package mutating func removeAll() { table.removeAll() }
}
