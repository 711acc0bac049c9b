import Foundation

/// A live, mutable view of a to-many relationship, as `mutableSetValue(forKey:)` returns in
/// Core Data (there an `NSMutableSet` proxy). Every change goes to the relationship at once;
/// reads see its current members. Use it on the object's context queue.
public final class MutableRelationshipSet: Sequence {
    /// The object whose relationship this is.
    public let object: ManagedObject
    /// The relationship's name.
    public let key: String

    init(object: ManagedObject, key: String) {
        self.object = object
        self.key = key
    }

    private var members: [ManagedObject] { object.managedMembers(forKey: key) }

    /// The number of destinations.
    public var count: Int { members.count }
    /// The destinations, as a set.
    public var set: Set<ManagedObject> { Set(members) }
    /// The destinations, as an array (`NSSet.allObjects`).
    public var allObjects: [ManagedObject] { members }
    /// Whether `member` is a destination.
    public func contains(_ member: ManagedObject) -> Bool { members.contains(member) }

    /// Adds a destination. Mirrors `NSMutableSet.add(_:)`.
    public func add(_ member: ManagedObject) { addObjects(from: [member]) }
    /// Removes a destination. Mirrors `NSMutableSet.remove(_:)`.
    public func remove(_ member: ManagedObject) { remove(Set([member])) }
    /// Adds destinations. Mirrors `NSMutableSet.addObjects(from:)`.
    public func addObjects(from objects: [ManagedObject]) {
        object.addManagedMembers(objects, forKey: key)
    }
    /// Adds the destinations of `other`. Mirrors `NSMutableSet.union(_:)`.
    public func union(_ other: Set<ManagedObject>) { addObjects(from: Array(other)) }
    /// Removes the destinations in `other`. Mirrors `NSMutableSet.minus(_:)`.
    public func minus(_ other: Set<ManagedObject>) { remove(other) }
    /// Removes every destination. Mirrors `NSMutableSet.removeAllObjects()`.
    public func removeAllObjects() { object.setManagedMembers([], forKey: key) }

    private func remove(_ objects: Set<ManagedObject>) {
        object.removeManagedMembers(Array(objects), forKey: key)
    }

    /// Iterates the destinations as they are when iteration starts.
    public func makeIterator() -> IndexingIterator<[ManagedObject]> { members.makeIterator() }
}

/// A live, mutable view of an ordered to-many relationship, as `mutableOrderedSetValue(forKey:)`
/// returns in Core Data (there an `NSMutableOrderedSet` proxy). Use it on the object's context queue.
public final class MutableRelationshipOrderedSet: Sequence {
    /// The object whose relationship this is.
    public let object: ManagedObject
    /// The relationship's name.
    public let key: String

    init(object: ManagedObject, key: String) {
        self.object = object
        self.key = key
    }

    /// The destinations in order (`NSOrderedSet.array`).
    public var array: [ManagedObject] { object.managedMembers(forKey: key) }
    /// The number of destinations.
    public var count: Int { array.count }
    /// The destination at `index`. Mirrors `NSOrderedSet.object(at:)`.
    public func object(at index: Int) -> ManagedObject { array[index] }
    /// The destination at `index`.
    public subscript(index: Int) -> ManagedObject { array[index] }
    /// The position of `member`, or `NSNotFound`. Mirrors `NSOrderedSet.index(of:)`.
    public func index(of member: ManagedObject) -> Int { array.firstIndex(of: member) ?? NSNotFound }
    /// Whether `member` is a destination.
    public func contains(_ member: ManagedObject) -> Bool { array.contains(member) }

    /// Appends a destination (a present one stays where it is). Mirrors `add(_:)`.
    public func add(_ member: ManagedObject) {
        change { $0.contains(member) ? $0 : $0 + [member] }
    }
    /// Inserts a destination at `index` (a present one moves there). Mirrors `insert(_:at:)`.
    public func insert(_ member: ManagedObject, at index: Int) {
        change { current in
            var current = current.filter { $0 != member }
            current.insert(member, at: Swift.min(Swift.max(index, 0), current.count))
            return current
        }
    }
    /// Removes a destination. Mirrors `remove(_:)`.
    public func remove(_ member: ManagedObject) { change { $0.filter { $0 != member } } }
    /// Removes the destination at `index`. Mirrors `removeObject(at:)`.
    public func removeObject(at index: Int) {
        change { current in
            var current = current
            current.remove(at: index)
            return current
        }
    }
    /// Moves the destinations at `indexes` to `index`. Mirrors `moveObjects(at:to:)`.
    public func moveObjects(at indexes: IndexSet, to index: Int) {
        change { current in
            let moving = indexes.map { current[$0] }
            var rest = current.enumerated().filter { !indexes.contains($0.offset) }.map(\.element)
            rest.insert(contentsOf: moving, at: Swift.min(Swift.max(index, 0), rest.count))
            return rest
        }
    }
    /// Removes every destination. Mirrors `removeAllObjects()`.
    public func removeAllObjects() { object.setManagedMembers([], forKey: key) }

    /// Replaces the destinations with `transform` of the current ones; when the store cannot
    /// read the current ones, changes nothing (the context's next save throws the store's error)
    /// rather than taking the failed read for an empty relationship.
    private func change(_ transform: ([ManagedObject]) -> [ManagedObject]) {
        guard let current = object.readableMembers(forKey: key) else { return }
        object.setManagedMembers(transform(current), forKey: key)
    }

    /// Iterates the destinations in order as they are when iteration starts.
    public func makeIterator() -> IndexingIterator<[ManagedObject]> { array.makeIterator() }
}
