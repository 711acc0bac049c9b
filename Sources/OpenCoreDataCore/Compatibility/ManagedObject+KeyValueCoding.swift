import Foundation

// Key-value coding as Core Data apps use it on managed objects (`NSObject`'s methods there):
// key paths through relationships, several keys at once, and whether a relationship is loaded.
// Unknown keys trap with a message, as `value(forKey:)` does (Core Data raises
// `NSUnknownKeyException`).
extension ManagedObject {
    /// The value at a key path: `"folder.title"` follows to-one relationships; a step through a
    /// to-many collects the next key's values of every member (a `Set` of the non-nil ones, as
    /// `NSSet`'s key-value coding does). A `nil` on the way reads as `nil`.
    public func value(forKeyPath keyPath: String) -> Any? {
        let keys = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        return Self.value(of: self, keys[...])
    }

    private static func value(of object: ManagedObject, _ keys: ArraySlice<String>) -> Any? {
        guard let key = keys.first else { return object }
        let value = object.value(forKey: key)
        let rest = keys.dropFirst()
        if rest.isEmpty { return value }
        switch value {
        case let next as ManagedObject:
            return Self.value(of: next, rest)
        case let members as any Collection<ManagedObject>:       // a to-many, ordered or not
            return Set(members.compactMap { Self.value(of: $0, rest) as? AnyHashable })
        case nil:
            return nil
        default:
            preconditionFailure("""
                The key path '\(keys.joined(separator: "."))' of \(object.entity.name) goes through '\(key)', \
                which is not a relationship: only relationships can be followed.
                """)
        }
    }

    /// Sets the value at a key path: every key but the last names a to-one relationship; a `nil`
    /// on the way sets nothing (as `NSObject`'s `setValue(_:forKeyPath:)` sends to `nil`).
    public func setValue(_ value: Any?, forKeyPath keyPath: String) {
        var keys = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let last = keys.removeLast()
        var object: ManagedObject = self
        for key in keys {
            guard let relationship = object.entity.relationshipsByName[key], !relationship.isToMany else {
                preconditionFailure("""
                    The key path '\(keyPath)' of \(entity.name) goes through '\(key)', which is not a to-one \
                    relationship of \(object.entity.name): only to-one relationships can be followed to set a \
                    value.
                    """)
            }
            guard let next = object.managedToOne(forKey: key, as: ManagedObject.self) else { return }
            object = next
        }
        object.setValue(value, forKey: last)
    }

    /// Sets several values; `NSNull` sets `nil`. Mirrors `setValuesForKeys(_:)`.
    public func setValuesForKeys(_ keyedValues: [String: Any]) {
        for (key, value) in keyedValues { setValue(value is NSNull ? nil : value, forKey: key) }
    }

    /// The values of several keys, `nil` as `NSNull`. Mirrors `dictionaryWithValues(forKeys:)`.
    public func dictionaryWithValues(forKeys keys: [String]) -> [String: Any] {
        var result: [String: Any] = [:]
        for key in keys { result[key] = value(forKey: key) ?? NSNull() }
        return result
    }

    /// Whether reading a relationship would load something first: the object itself is a fault,
    /// a to-many's members are not loaded, or a to-one's destination is a fault (or not
    /// registered). A to-one without a destination is not a fault. Fires no fault. Mirrors
    /// `hasFault(forRelationshipNamed:)`.
    public func hasFault(forRelationshipNamed name: String) -> Bool {
        guard let relationship = entity.relationshipsByName[name] else {
            preconditionFailure("""
                The entity \(entity.name) has no relationship '\(name)' (its relationships: \
                \(entity.relationshipsByName.keys.sorted().joined(separator: ", "))).
                """)
        }
        if isFaultFlag { return true }
        if relationship.isToMany {
            guard let index = entity.toManyIndexByName[name], index < toMany.count else { return true }
            return !toMany[index].isLoaded
        }
        guard let slot = entity.toOneSlotByName[name], case .object(let id) = values[slot] else { return false }
        return managedObjectContext?.registeredObject(for: id)?.isFaultFlag ?? true
    }
}
