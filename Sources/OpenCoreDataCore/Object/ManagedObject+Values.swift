import Foundation

extension ManagedObject {
    // MARK: - Typed access (used by @Managed)

    /// Reads an attribute as a Swift type. `@Managed` getters call this with the property's
    /// position among the class's attributes (`index`), a hint checked against `key`; the value
    /// is `defaultValue` when the store holds `nil` for a non-optional property.
    @inlinable
    public func managedAttributeValue<T: ManagedAttributeValue>(forKey key: String, index: Int = -1,
                                                                default defaultValue: @autoclosure () -> T) -> T {
        T(managedValue: readValue(slot: slot(forKey: key, hint: index))) ?? defaultValue()
    }

    /// Writes an attribute from a Swift type. `@Managed` setters call this.
    @inlinable
    public func setManagedAttributeValue<T: ManagedAttributeValue>(_ value: T, forKey key: String, index: Int = -1) {
        writeValue(value.managedValue, slot: slot(forKey: key, hint: index))
    }

    /// The slot of a key: `hint` when the attribute there has that name (the common case: a
    /// string comparison of two equal literals), else a lookup by name.
    @usableFromInline
    package func slot(forKey key: String, hint: Int) -> Int {
        let names = entity.storedAttributeNames
        if hint >= 0 && hint < names.count && names[hint] == key { return hint }
        return attributeSlot(forKey: key)
    }

    /// The value in a slot (loading a fault first).
    @usableFromInline
    package func readValue(slot: Int) -> ManagedValue {
        willAccessValue()
        observeRead(slot)
        return values[slot]
    }

    // MARK: - Untyped access (key-value coding)

    /// The value of an attribute, as its Swift type (`Int32`, `String`, `Date`, …), or `nil`.
    ///
    /// An unknown key is a programmer error and traps with a message listing the entity's
    /// keys, as Core Data raises `NSUnknownKeyException`. Use ``validatedValue(forKey:)`` for
    /// keys that come from input. A fetched property whose fetch fails reads as `nil`: its
    /// predicate and entity come from the model file, which may be damaged, so the failure is
    /// not the caller's (``validatedValue(forKey:)`` throws it).
    public func value(forKey key: String) -> Any? {
        do {
            return try validatedValue(forKey: key)
        } catch {
            if entity.slotByName[key] == nil, entity.allProperties.contains(where: { $0.name == key && $0 is FetchedPropertyDescription }) {
                return nil
            }
            preconditionFailure(error.description)
        }
    }

    /// Sets the value of an attribute from any compatible Swift value.
    ///
    /// An unknown key or a value of the wrong type is a programmer error and traps with a
    /// message, as in Core Data. Use ``setValidatedValue(_:forKey:)`` for input.
    public func setValue(_ value: Any?, forKey key: String) {
        do { try setValidatedValue(value, forKey: key) } catch { preconditionFailure(error.description) }
    }

    /// The value of an attribute; throws a ``CoreDataError`` naming the entity's keys when
    /// `key` is not one of them.
    public func validatedValue(forKey key: String) throws(CoreDataError) -> Any? {
        if let relationship = entity.relationshipsByName[key] {
            // `ordered` means something only on a to-many (a model file can set it on a to-one:
            // the xml-model fuzzer found one); a to-one is read as one either way.
            guard relationship.isToMany else { return managedToOne(forKey: key, as: ManagedObject.self) }
            return relationship.isOrdered ? managedMembers(forKey: key) : Set(managedMembers(forKey: key))
        }
        if entity.slotByName[key] == nil, let fetched = entity.allProperties.first(where: { $0.name == key }) as? FetchedPropertyDescription {
            return try fetchedValue(of: fetched)
        }
        if entity.slotByName[key] == nil, let transient = entity.transientAttribute(named: key) {
            return transient.appValue(state.transientValues[key] ?? transient.storedDefault)
        }
        let slot = try entity.slot(forKey: key)
        willAccessValue()
        observeRead(slot)
        return entity.storedAttributes[slot].appValue(values[slot])
    }

    /// Sets the value of an attribute; throws a ``CoreDataError`` (1550) when the key is
    /// unknown or the value does not fit the attribute's type.
    public func setValidatedValue(_ value: Any?, forKey key: String) throws(CoreDataError) {
        if let relationship = entity.relationshipsByName[key] {
            try setRelationship(relationship, to: value)
            return
        }
        let transient = entity.slotByName[key] == nil ? entity.transientAttribute(named: key) : nil
        let slot = transient == nil ? try entity.slot(forKey: key) : -1
        let attribute = transient ?? entity.storedAttributes[slot]
        guard let stored = attribute.storedValue(value) else {
            let shown = value.map { "\($0) (\(type(of: $0)))" } ?? "nil"
            throw CoreDataError(
                .managedObjectValidation,
                """
                    The value \(shown) does not fit the attribute '\(key)' of \(entity.name), which is of type \
                    \(attribute.attributeType). Pass a value of that type.
                    """,
                key: key, affectedObjectIDs: [objectID])
        }
        if transient != nil {
            // Kept in memory only, as Core Data keeps transient values.
            state.transientValues[key] = stored
            return
        }
        writeValue(stored, slot: slot)
    }

    /// The keys and new values of the attributes changed since the object was last saved or
    /// fetched.
    public func changedValues() -> [String: Any] {
        var result: [String: Any] = [:]
        guard !isFaultFlag else { return result }
        let attributes = entity.storedAttributes.count
        for slot in dirty.slots {
            if slot < attributes {
                let attribute = entity.storedAttributes[slot]
                result[attribute.name] = attribute.appValue(values[slot]) ?? NSNull()
            } else if slot < entity.valueSlotCount {
                let name = entity.toOneRelationships[slot - attributes].name
                result[name] = managedToOne(forKey: name, as: ManagedObject.self) ?? NSNull()
            } else {
                let name = entity.toManyRelationships[slot - entity.valueSlotCount].name
                result[name] = Set(managedMembers(forKey: name))
            }
        }
        return result
    }

    /// The persistent attributes and to-one relationships changed since the last
    /// objects-did-change notification, each with the value it had then (`NSNull` for nil):
    /// the committed value in the first event after a fetch or save, the initial one for a new
    /// object. Call it while handling that notification, or during the event. Mirrors
    /// `changedValuesForCurrentEvent()`; to-many relationships are not included.
    public func changedValuesForCurrentEvent() -> [String: Any] {
        var result: [String: Any] = [:]
        guard !isFaultFlag else { return result }
        let base = state.eventBase ?? state.snapshot?.values ?? entity.defaultValues
        let attributes = entity.storedAttributes.count
        for slot in 0..<min(entity.valueSlotCount, values.count, base.count) where values[slot] != base[slot] {
            if slot < attributes {
                let attribute = entity.storedAttributes[slot]
                result[attribute.name] = attribute.appValue(base[slot]) ?? NSNull()
            } else if case .object(let id) = base[slot], let context = managedObjectContext {
                result[entity.toOneRelationships[slot - attributes].name] = context.object(with: id)
            } else {
                result[entity.toOneRelationships[slot - attributes].name] = NSNull()
            }
        }
        return result
    }

    private func setRelationship(_ relationship: RelationshipDescription, to value: Any?) throws(CoreDataError) {
        let key = relationship.name
        let unwrapped: Any? = (value as? any OptionalProtocol).map { $0.wrappedAny } ?? value
        if relationship.isToMany {
            let objects: [ManagedObject]? = switch unwrapped {
            case nil, is NSNull: []
            case let set as Set<ManagedObject>: Array(set)
            case let array as [ManagedObject]: array
            case let set as any Collection: set.compactMap { $0 as? ManagedObject }.count == set.count ? set.compactMap { $0 as? ManagedObject } : nil
            default: nil
            }
            guard let objects else {
                throw CoreDataError(.managedObjectValidation, """
                    The to-many relationship '\(key)' of \(entity.name) takes a set of managed objects, not \
                    \(type(of: value!)).
                    """, key: key, affectedObjectIDs: [objectID])
            }
            setManagedMembers(objects, forKey: key)
        } else {
            switch unwrapped {
            case nil, is NSNull: setManagedToOne(ManagedObject?.none, forKey: key)
            case let object as ManagedObject: setManagedToOne(object, forKey: key)
            default:
                throw CoreDataError(.managedObjectValidation, """
                    The to-one relationship '\(key)' of \(entity.name) takes a managed object, not \
                    \(type(of: value!)).
                    """, key: key, affectedObjectIDs: [objectID])
            }
        }
    }

    /// The last saved (or fetched) values of the given keys (all attributes when `nil`).
    /// `nil` values appear as `NSNull`. Empty for an object that was never saved.
    public func committedValues(forKeys keys: [String]?) -> [String: Any] {
        if isFaultFlag { willAccessValue() }
        guard let snapshot else { return [:] }
        var result: [String: Any] = [:]
        for (slot, attribute) in entity.storedAttributes.enumerated() where keys?.contains(attribute.name) ?? true {
            result[attribute.name] = attribute.appValue(snapshot.values[slot]) ?? NSNull()
        }
        return result
    }

    // MARK: - Internals

    private func attributeSlot(forKey key: String) -> Int {
        guard let slot = entity.valueSlot(named: key) else {
            preconditionFailure("The entity \(entity.name) has no attribute '\(key)'. Is \(type(of: self)) part of the model the context uses?")
        }
        return slot
    }

    /// Checks the queue (under concurrency debugging) and loads the values of a fault.
    package func willAccessValue() {
        if ConcurrencyDebug.isEnabled { ConcurrencyDebug.checkAccess(to: self) }
        if isFaultFlag { fireFault() }
    }

    @usableFromInline
    package func writeValue(_ value: ManagedValue, slot: Int) {
        willAccessValue()
        // The value it already has is no change: nothing to save, push to a parent, keep over a
        // newer row in a merge, or undo (see DEVIATIONS.md).
        guard values[slot] != value else { return }
        if let handle = contextHandle, handle.awakingFromFetch > 0 {
            state.writePrimitive(value, slot: slot)   // awakeFromFetch: not a change
            return
        }
        let context = managedObjectContext
        // A to-one slot is recorded too: its inverse records its own change.
        if let undo = context?.undoStorage { undo.record(.value(self, slot: slot, old: values[slot], new: value, wasChanged: dirty.contains(slot))) }
        state.write(value, slot: slot)
        context?.graph.objectDidChange(self)
        observedChange(slot)
    }

    /// Undo: puts a slot back as it was before a write (a slot that had no change has none again).
    package func restoreValue(_ value: ManagedValue, slot: Int, changed: Bool) {
        willAccessValue()
        state.restore(value, slot: slot, changed: changed)
        managedObjectContext?.graph.objectDidChange(self)
        observedChange(slot)
    }

    private func fireFault() {
        guard let context = managedObjectContext else {
            preconditionFailure("""
                The object \(objectID) is a fault and has no context to load it from: its context was reset or \
                deallocated. Keep the context alive while you use its objects.
                """)
        }
        let row: RowSnapshot?
        do { row = try context.loadRow(for: objectID) } catch {
            context.faultIsInaccessible(self, reason: "the store could not read its row (\(error.message))")
            return
        }
        guard let row else {
            context.faultIsInaccessible(self, reason: "its row was deleted from the store")
            return
        }
        context.fulfil(self, with: row)
    }
}
