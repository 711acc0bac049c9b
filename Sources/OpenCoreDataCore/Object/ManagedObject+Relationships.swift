import Foundation

extension ManagedObject {
    // MARK: - Typed access (used by @Managed)

    /// The destination of a to-one relationship (a fault until its values are used), or `nil`.
    public func managedToOne<T: ManagedObject>(forKey key: String, as type: T.Type = T.self) -> T? {
        let (context, relationship) = graphAccess(key, toMany: false)
        guard let id = context.destination(of: self, relationship) else { return nil }
        return context.object(with: id) as? T
    }

    /// Sets a to-one relationship; the inverse (on the old and the new destination) follows.
    public func setManagedToOne<T: ManagedObject>(_ value: T?, forKey key: String) {
        let (context, relationship) = graphAccess(key, toMany: false)
        if let value { checkDestination(value, of: relationship, in: context) }
        do { try context.setDestination(of: self, relationship, to: value?.objectID) } catch { preconditionFailure(error.description) }
    }

    /// The destinations of a to-many relationship (loaded from the store on first use; the
    /// objects are faults until their values are used).
    public func managedToMany<T: ManagedObject>(forKey key: String, as type: T.Type = T.self) -> Set<T> {
        Set(managedMembers(forKey: key).compactMap { $0 as? T })
    }

    /// Replaces the destinations of a to-many relationship: removed ones leave the inverse,
    /// added ones join it (moving from their previous owner for a to-one inverse).
    public func setManagedToMany<T: ManagedObject>(_ value: Set<T>, forKey key: String) {
        setManagedMembers(Array(value), forKey: key)
    }

    /// The destinations of an ordered to-many relationship, in order.
    public func managedOrderedToMany<T: ManagedObject>(forKey key: String, as type: T.Type = T.self) -> [T] {
        managedMembers(forKey: key).compactMap { $0 as? T }
    }

    /// Replaces the destinations of an ordered to-many relationship, in this order.
    public func setManagedOrderedToMany<T: ManagedObject>(_ value: [T], forKey key: String) {
        setManagedMembers(value, forKey: key)
    }

    // MARK: - Untyped

    /// The destination objects of a to-many relationship, in store order then insertion order.
    /// When the store cannot read them, none (the relationship stays unloaded, so the next use
    /// tries again) and the context's next save throws the store's error instead of saving.
    package func managedMembers(forKey key: String) -> [ManagedObject] {
        readableMembers(forKey: key) ?? []
    }

    /// The destination objects of a to-many, or `nil` when the store cannot read them (the
    /// context's next save then throws the store's error): what a change computed from the
    /// current members starts from, so that a failed read is never taken for "no members".
    package func readableMembers(forKey key: String) -> [ManagedObject]? {
        let (context, relationship) = graphAccess(key, toMany: true)
        if let number = observedNumber(ofToMany: key) { observeRead(number) }
        guard let members = try? context.members(of: self, relationship) else { return nil }
        return members.map { context.object(with: $0) }
    }

    /// Makes the destinations of a to-many `objects`. Replacing them needs the current ones: when
    /// the store cannot read them (an I/O error, a lost connection), the relationship is left as
    /// it was and the context's next save throws the store's error, as after a failed read.
    package func setManagedMembers(_ objects: [ManagedObject], forKey key: String) {
        let (context, relationship) = graphAccess(key, toMany: true)
        for object in objects { checkDestination(object, of: relationship, in: context) }
        do {
            try context.setMembers(objects, of: self, relationship)
        } catch {
            context.relationshipReadFailure = context.relationshipReadFailure ?? error
        }
    }

    /// Adds destinations to a to-many, one by one, without reading the ones it has (an unloaded
    /// relationship stays unloaded and remembers the additions).
    package func addManagedMembers(_ objects: [ManagedObject], forKey key: String) {
        let (context, relationship) = graphAccess(key, toMany: true)
        for object in objects { checkDestination(object, of: relationship, in: context) }
        do {
            for object in objects { try context.addMember(object, to: self, relationship) }
        } catch {
            context.relationshipReadFailure = context.relationshipReadFailure ?? error
        }
    }

    /// Removes destinations from a to-many, without reading the ones it has.
    package func removeManagedMembers(_ objects: [ManagedObject], forKey key: String) {
        let (context, relationship) = graphAccess(key, toMany: true)
        do {
            for object in objects { try context.removeMember(object.objectID, from: self, relationship) }
        } catch {
            context.relationshipReadFailure = context.relationshipReadFailure ?? error
        }
    }

    /// The context and relationship for an access; traps with a clear message on misuse (as
    /// Core Data raises), since these are programming errors, not input errors.
    private func graphAccess(_ key: String, toMany: Bool) -> (ManagedObjectContext, RelationshipDescription) {
        guard let relationship = entity.relationshipsByName[key] else {
            preconditionFailure("The entity \(entity.name) has no relationship '\(key)'. Is \(type(of: self)) part of the model the context uses?")
        }
        guard relationship.isToMany == toMany else {
            preconditionFailure("The relationship '\(key)' of \(entity.name) is \(relationship.isToMany ? "to-many" : "to-one"); access it as such.")
        }
        guard let context = managedObjectContext else {
            preconditionFailure("The object \(objectID) has no context: insert it into a context before using its relationship '\(key)'.")
        }
        if ConcurrencyDebug.isEnabled { ConcurrencyDebug.checkAccess(to: self) }
        return (context, relationship)
    }

    private func checkDestination(_ object: ManagedObject, of relationship: RelationshipDescription, in context: ManagedObjectContext) {
        precondition(object.belongs(to: context),
                     """
                         Illegal attempt to establish a relationship '\(relationship.name)' between objects in \
                         different contexts (\(objectID) and \(object.objectID)). Fetch the destination in \
                         this object's context with object(with:).
                         """)
        if let destination = relationship.destinationEntity {
            precondition(object.entity.isKindOf(entity: destination) || object.entity.name == destination.name,
                         "The relationship '\(relationship.name)' of \(entity.name) holds \(destination.name) objects, not \(object.entity.name).")
        }
    }
}
