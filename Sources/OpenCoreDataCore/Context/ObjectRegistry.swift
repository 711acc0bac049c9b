/// A context's registered objects by permanent ID: an open-addressing table over the IDs'
/// integers (root entity, store number, primary key), one 16-byte entry per bucket.
///
/// A `Dictionary<ManagedObjectID, ManagedObject>` stored each 20-byte ID beside its object (32
/// bytes per bucket, 84 bytes per object at 100,000 objects) and hashed every ID with SipHash
/// twice per fetched row (a miss, then the insert). Here a bucket holds the object and a 64-bit
/// tag mixed from the ID's integers: a probe compares tags and reads the object only when they
/// match; the key is the object's own `objectID`, so it is not stored twice. Linear probing,
/// at most three quarters full, removal by backward shift (no tombstones).
///
/// The key of an entry is its object's `objectID` at the time it was stored: callers remove an
/// object before its ID changes (a constraint conflict re-keys an object that way), which the
/// graph's invariants check (`registry[object.objectID] === object`).
///
/// A value owned by its context's `ObjectGraph` (the context's queue).
package struct ObjectRegistry {
    private struct Entry {
        /// 0: an empty bucket.
        var tag: UInt64
        var object: ManagedObject?
    }

    private var entries: [Entry] = []
    /// `entries.count - 1` (a power of two less one), or 0 while empty.
    private var mask = 0
    /// The number of registered objects.
    package private(set) var count = 0

    /// Mixes the tags, per process: store keys cannot be chosen to collide (a crafted store
    /// would otherwise make every probe of a fetch walk the whole table).
    private static let seed = UInt64.random(in: 1...UInt64.max)

    package init() {}

    package var isEmpty: Bool { count == 0 }

    /// A nonzero 64-bit mix of the ID's integers; IDs that are equal (`==`: same root entity,
    /// store and key) have the same tag.
    @inline(__always)
    private static func tag(_ id: ManagedObjectID) -> UInt64 {
        var mixed = UInt64(bitPattern: id.rawKey) ^ (UInt64(id.storeNumber) << 48) ^ seed
        mixed ^= UInt64(UInt(bitPattern: ObjectIdentifier(id.entity.rootEntity))) &* 0x9E37_79B9_7F4A_7C15
        // The finalizer of MurmurHash3: every input bit reaches every bit of the index.
        mixed ^= mixed >> 33
        mixed &*= 0xFF51_AFD7_ED55_8CCD
        mixed ^= mixed >> 33
        mixed &*= 0xC4CE_B9FE_1A85_EC53
        mixed ^= mixed >> 33
        return mixed == 0 ? 1 : mixed
    }

    /// The bucket holding the object registered under `id`, if any.
    package func index(for id: ManagedObjectID) -> Int? {
        guard count > 0 else { return nil }
        let tag = Self.tag(id)
        var index = Int(truncatingIfNeeded: tag) & mask
        while true {
            let entry = entries[index]
            if entry.tag == 0 { return nil }
            if entry.tag == tag, let object = entry.object, object.objectID == id { return index }
            index = (index + 1) & mask
        }
    }

    /// The object registered under `id`; setting stores an object under `id` (replacing the one
    /// there) or, with `nil`, removes it.
    package subscript(id: ManagedObjectID) -> ManagedObject? {
        get { index(for: id).flatMap { entries[$0].object } }
        set {
            if let newValue {
                insert(newValue, tag: Self.tag(id), id: id)
            } else if let index = index(for: id) {
                _ = remove(at: index)
            }
        }
    }

    /// The object in a bucket found by ``index(for:)``.
    package func object(at index: Int) -> ManagedObject {
        // A bucket found by `index(for:)` holds an object (a nil there is a bug of this type).
        entries[index].object!
    }

    /// Whether only the registry references the object in a bucket.
    package mutating func isUniquelyReferenced(at index: Int) -> Bool {
        isKnownUniquelyReferenced(&entries[index].object)
    }

    /// Removes and returns the object in a bucket; later buckets of its probe run move back, so
    /// that every object stays reachable from its home bucket without gaps.
    @discardableResult
    package mutating func remove(at index: Int) -> ManagedObject {
        let removed = object(at: index)
        var hole = index
        var next = (index + 1) & mask
        while entries[next].tag != 0 {
            let home = Int(truncatingIfNeeded: entries[next].tag) & mask
            // The entry at `next` may fill the hole when its home is not after the hole on the
            // way round to `next`.
            let movable = hole <= next ? (home <= hole || home > next) : (home <= hole && home > next)
            if movable {
                entries[hole] = entries[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        entries[hole] = Entry(tag: 0, object: nil)
        count -= 1
        return removed
    }

    /// Makes room for `capacity` objects without growing again.
    package mutating func reserveCapacity(_ capacity: Int) {
        if capacity * 4 > entries.count * 3 { resize(toFit: capacity) }
    }

    /// Every registered object, in no particular order.
    package var objects: [ManagedObject] {
        var result: [ManagedObject] = []
        result.reserveCapacity(count)
        for entry in entries { if let object = entry.object { result.append(object) } }
        return result
    }

    /// Objects stored under a tag that is not their own ID's (the graph's invariants report them:
    /// such an object is registered under another ID, and lookups by its own miss it).
    package var misfiledObjects: [ManagedObject] {
        entries.compactMap { entry in entry.object.flatMap { Self.tag($0.objectID) == entry.tag ? nil : $0 } }
    }

    /// Removes the objects `shouldRemove` picks (given each bucket's object inout, so that it can
    /// ask `isKnownUniquelyReferenced`), and returns them.
    package mutating func removeAll(where shouldRemove: (inout ManagedObject) -> Bool) -> [ManagedObject] {
        var removed: [ManagedObject] = []
        var kept: [(UInt64, ManagedObject)] = []
        kept.reserveCapacity(count)
        for index in entries.indices {
            // Moved out of the bucket, so that a uniqueness check sees the caller's reference only.
            guard var object = entries[index].object.take() else { continue }
            if shouldRemove(&object) { removed.append(object) } else { kept.append((entries[index].tag, object)) }
        }
        rebuild(kept, capacity: kept.count)
        return removed
    }

    /// Forgets every object.
    package mutating func removeAll() {
        entries = []
        mask = 0
        count = 0
    }

    private mutating func insert(_ object: ManagedObject, tag: UInt64, id: ManagedObjectID) {
        if (count + 1) * 4 > entries.count * 3 { resize(toFit: count + 1) }
        var index = Int(truncatingIfNeeded: tag) & mask
        while entries[index].tag != 0 {
            if entries[index].tag == tag, let existing = entries[index].object, existing.objectID == id {
                entries[index].object = object
                return
            }
            index = (index + 1) & mask
        }
        entries[index] = Entry(tag: tag, object: object)
        count += 1
    }

    private mutating func resize(toFit capacity: Int) {
        var kept: [(UInt64, ManagedObject)] = []
        kept.reserveCapacity(count)
        for entry in entries { if let object = entry.object { kept.append((entry.tag, object)) } }
        rebuild(kept, capacity: capacity)
    }

    /// Lays the entries out again in a table with room for `capacity` (at most 3/4 full).
    private mutating func rebuild(_ kept: [(UInt64, ManagedObject)], capacity: Int) {
        var size = 16
        while size * 3 < max(capacity, kept.count) * 4 { size *= 2 }
        entries = Array(repeating: Entry(tag: 0, object: nil), count: size)
        mask = size - 1
        count = kept.count
        for (tag, object) in kept {
            var index = Int(truncatingIfNeeded: tag) & mask
            while entries[index].tag != 0 { index = (index + 1) & mask }
            entries[index] = Entry(tag: tag, object: object)
        }
    }
}
