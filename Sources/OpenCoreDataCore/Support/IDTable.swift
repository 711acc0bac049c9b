/// What an ``IDTable`` stores in a bucket: an entry that knows its ID's tag and can say whether it
/// is the entry of an ID.
package protocol IDTableEntry {
    /// The table's ``IDTable/tag(_:)`` of the entry's ID; 0 only for the empty entry.
    var tag: UInt64 { get }
    /// The entry of an empty bucket.
    static var empty: Self { get }
    /// Whether this is the entry of `id` (its tag already matched).
    func holds(_ id: ManagedObjectID) -> Bool
}

/// A hash table keyed by object IDs: open addressing over the IDs' integers (root entity, store
/// number, primary key), linear probing, at most three quarters full, removal by backward shift
/// (no tombstones, so a table never grows with the number of removals, only with what it holds).
///
/// A `Dictionary` keyed by `ManagedObjectID` hashes every ID with SipHash (twice per fetched row:
/// a miss, then the insert) and stores each 20-byte ID beside its value. Here a bucket holds a
/// 64-bit tag mixed from the ID's integers, compared before the entry is asked whether it holds
/// the ID; entries whose value knows its ID (a registered object) need not store it again.
///
/// The context's registry (``ObjectRegistry``) and the coordinator's ``RowCache`` are this table.
/// A value type: owned as its owner's state is (a context's queue, the row cache's lock).
package struct IDTable<Entry: IDTableEntry> {
    private var entries: [Entry] = []
    /// `entries.count - 1` (a power of two less one), or 0 while empty.
    private var mask = 0
    /// The number of entries held.
    package private(set) var count = 0
    /// Counts the table's changes, so that a ``Probe`` knows whether its bucket still holds.
    private var changes = 0

    /// Mixes the tags, per process: store keys cannot be chosen to collide (a crafted store
    /// would otherwise make every probe of a fetch walk the whole table). Kept in the table so
    /// that a tag does not pass the global's once-check.
    private let seed = IDTableSeed.value

    package init() {}

    /// The number of buckets (what the table costs, whatever it holds).
    package var capacity: Int { entries.count }

    /// A nonzero 64-bit mix of the ID's integers; IDs that are equal (`==`: the same root entity,
    /// store and key) have the same tag.
    @inline(__always)
    package func tag(_ id: ManagedObjectID) -> UInt64 {
        var mixed = UInt64(bitPattern: id.rawKey) ^ (UInt64(id.storeNumber) << 48) ^ seed
        mixed ^= UInt64(UInt(bitPattern: id.entity.rootIdentity)) &* 0x9E37_79B9_7F4A_7C15
        // The finalizer of MurmurHash3: every input bit reaches every bit of the index.
        mixed ^= mixed >> 33
        mixed &*= 0xFF51_AFD7_ED55_8CCD
        mixed ^= mixed >> 33
        mixed &*= 0xC4CE_B9FE_1A85_EC53
        mixed ^= mixed >> 33
        return mixed == 0 ? 1 : mixed
    }

    /// The bucket of the entry holding `id`, if any.
    package func index(for id: ManagedObjectID) -> Int? {
        guard count > 0 else { return nil }
        let tag = self.tag(id)
        var index = Int(truncatingIfNeeded: tag) & mask
        while true {
            let bucketTag = entries[index].tag
            if bucketTag == 0 { return nil }
            if bucketTag == tag, entries[index].holds(id) { return index }
            index = (index + 1) & mask
        }
    }

    /// Where a look-up ended: the bucket of the entry found, or where a new entry of the ID would
    /// go (for ``insert(_:at:for:)``, one probe for a miss and its insert).
    package struct Probe {
        /// The bucket holding the ID's entry, if any.
        package let found: Int?
        /// The empty bucket the ID's entry would take, when the table has room for it now.
        fileprivate let vacant: Int?
        fileprivate let tag: UInt64
        fileprivate let changes: Int
    }

    /// Looks `id` up, remembering where its entry would go if it is not there.
    package func probe(_ id: ManagedObjectID) -> Probe {
        let tag = self.tag(id)
        guard count > 0 else { return Probe(found: nil, vacant: nil, tag: tag, changes: changes) }
        var index = Int(truncatingIfNeeded: tag) & mask
        while true {
            let bucketTag = entries[index].tag
            if bucketTag == 0 {
                let hasRoom = (count + 1) * 4 <= entries.count * 3
                return Probe(found: nil, vacant: hasRoom ? index : nil, tag: tag, changes: changes)
            }
            if bucketTag == tag, entries[index].holds(id) { return Probe(found: index, vacant: nil, tag: tag, changes: changes) }
            index = (index + 1) & mask
        }
    }

    /// The tag of the ID a probe looked for.
    package func tag(of probe: Probe) -> UInt64 { probe.tag }

    /// Stores `entry` (carrying the probe's tag) for the ID `probe` did not find: in the bucket
    /// the probe ended at when the table has not changed since, else as ``insert(_:for:)`` does
    /// (the only case that needs the ID: an entry that knows its ID is not asked for it, which
    /// would cost a copy of the ID, a retain and a release, per row of a fetch).
    package mutating func insert(_ entry: Entry, at probe: Probe, for id: @autoclosure () -> ManagedObjectID) {
        guard let slot = probe.vacant, probe.changes == changes else { return insert(entry, for: id()) }
        entries[slot] = entry
        count += 1
        changes &+= 1
    }

    /// Reads the entry in a bucket in place (no copy of what it references).
    package func withEntry<R>(at index: Int, _ body: (borrowing Entry) -> R) -> R {
        entries.withUnsafeBufferPointer { body($0[index]) }
    }

    /// The entry in a bucket.
    package subscript(index: Int) -> Entry {
        get { entries[index] }
        _modify {
            changes &+= 1
            yield &entries[index]
        }
    }

    /// Stores `entry` as the entry of `id` (whose tag it carries), replacing the one there.
    package mutating func insert(_ entry: Entry, for id: ManagedObjectID) {
        insert(entry, for: id, keepingExisting: { _ in false })
    }

    /// Stores `entry` under `id` with one probe: an entry already there is replaced unless
    /// `keepsExisting` says to keep it.
    package mutating func insert(_ entry: Entry, for id: ManagedObjectID, keepingExisting keepsExisting: (Entry) -> Bool) {
        if (count + 1) * 4 > entries.count * 3 { resize(toFit: count + 1) }
        var index = Int(truncatingIfNeeded: entry.tag) & mask
        while entries[index].tag != 0 {
            if entries[index].tag == entry.tag, entries[index].holds(id) {
                if !keepsExisting(entries[index]) {
                    entries[index] = entry
                    changes &+= 1
                }
                return
            }
            index = (index + 1) & mask
        }
        entries[index] = entry
        count += 1
        changes &+= 1
    }

    /// Removes and returns the entry in a bucket; later entries of its probe run move back, so
    /// that every entry stays reachable from its home bucket without gaps.
    @discardableResult
    package mutating func remove(at index: Int) -> Entry {
        // Entries are moved, never copied: taking the removed one out and swapping the later
        // ones back leaves every reference count as it was (a copy is a retain and a release).
        var removed = Entry.empty
        swap(&removed, &entries[index])
        var hole = index
        var next = (index + 1) & mask
        while entries[next].tag != 0 {
            let home = Int(truncatingIfNeeded: entries[next].tag) & mask
            // The entry at `next` may fill the hole unless its home lies after the hole on the
            // way round to `next`.
            let movable = hole <= next ? (home <= hole || home > next) : (home <= hole && home > next)
            if movable {
                entries.swapAt(hole, next)      // the hole (empty) moves to `next`
                hole = next
            }
            next = (next + 1) & mask
        }
        count -= 1
        changes &+= 1
        return removed
    }

    /// Makes room for `capacity` entries without growing again.
    package mutating func reserveCapacity(_ capacity: Int) {
        if capacity * 4 > entries.count * 3 { resize(toFit: capacity) }
    }

    /// Every entry held, in no particular order.
    package var all: [Entry] { entries.filter { $0.tag != 0 } }

    /// Calls `body` with every entry held, in no particular order (no array made).
    package func forEach(_ body: (Entry) throws -> Void) rethrows {
        for entry in entries where entry.tag != 0 { try body(entry) }
    }

    /// Removes the entries `shouldRemove` picks (given each bucket's entry in place, so that it
    /// can ask `isKnownUniquelyReferenced` of what it holds) and returns them. The table keeps
    /// its size and is laid out again only when some went.
    package mutating func removeAll(where shouldRemove: (inout Entry) -> Bool) -> [Entry] {
        var removed: [Entry] = []
        for index in entries.indices where entries[index].tag != 0 && shouldRemove(&entries[index]) {
            removed.append(entries[index])
            entries[index] = .empty
        }
        guard !removed.isEmpty else { return [] }
        count -= removed.count
        rebuild(size: entries.count)
        return removed
    }

    /// Forgets every entry.
    package mutating func removeAll() {
        entries = []
        mask = 0
        count = 0
        changes &+= 1
    }

    private mutating func resize(toFit capacity: Int) {
        var size = max(16, entries.count)
        while size * 3 < capacity * 4 { size *= 2 }
        rebuild(size: size)
    }

    /// Lays the entries out again in `size` buckets.
    private mutating func rebuild(size: Int) {
        let old = entries
        entries = Array(repeating: .empty, count: size)
        mask = size - 1
        changes &+= 1
        for entry in old where entry.tag != 0 {
            var index = Int(truncatingIfNeeded: entry.tag) & mask
            while entries[index].tag != 0 { index = (index + 1) & mask }
            entries[index] = entry
        }
    }
}

/// The per-process seed of ``IDTable``'s tags (a global: generic types cannot have stored statics).
private enum IDTableSeed {
    static let value = UInt64.random(in: 1...UInt64.max)
}

extension IDTable: Sendable where Entry: Sendable {}
