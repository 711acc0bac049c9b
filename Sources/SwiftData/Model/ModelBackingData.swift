import Foundation
public import OpenCoreDataCore

/// Where a model's persisted values live (SwiftData's backing data). Before the model is
/// inserted, the values its initializer and setters gave; after, its context's object, read and
/// written on the context's queue.
///
/// Owner: the model's isolation domain, as the model itself (neither is `Sendable`). The
/// context's object is only touched inside its context's `performAndWait`, so that a merge the
/// context runs on its queue never meets a read from the model's thread.
public final class ModelBackingData {
    /// The values given before the model was inserted, by property name.
    private var pending: [String: Any] = [:]
    /// The context's object, once the model is inserted or read.
    private(set) var object: ManagedObject?
    /// The context holding `object`.
    private(set) var context: ModelContext?

    /// Backing data of a new model, not in any context yet.
    public init() {}

    init(object: ManagedObject, context: ModelContext) {
        self.object = object
        self.context = context
    }

    /// The values given before insertion, for the context that inserts the model; emptied.
    func takePending() -> [String: Any] {
        defer { pending = [:] }
        return pending
    }

    /// Makes the backing data hold a context's object (the model was inserted).
    func attach(to object: ManagedObject, in context: ModelContext) {
        self.object = object
        self.context = context
    }

    var modelContext: ModelContext? { object == nil ? nil : context }

    var persistentModelID: PersistentIdentifier {
        guard let object, let context else { return PersistentIdentifier(unsaved: ObjectIdentifier(self)) }
        return context.onQueue { PersistentIdentifier(object.objectID) }
    }

    var hasChanges: Bool {
        guard let object, let context else { return true }
        return context.onQueue { object.hasChanges }
    }

    var isDeleted: Bool {
        guard let object, let context else { return false }
        return context.onQueue { object.isDeleted }
    }

    // MARK: - Values, as the accessors `@Model` writes read and write them

    /// Called by a property's init accessor with the value the class's initializer gave.
    public func setInitialValue<Value>(_ value: Value, forKey key: String) {
        pending[key] = value
    }

    /// An attribute's value.
    public func getValue<Value: ManagedAttributeValue>(forKey key: String) -> Value {
        guard let object, let context else { return pendingValue(forKey: key) }
        return context.onQueue {
            let stored = Self.read(key, of: object)
            return Value(managedValue: stored) ?? Value(managedValue: object.entity.attributesByName[key]?.storedDefault ?? .null)
                ?? Self.zero(Value.self)
        }
    }

    /// An attribute's value: from its slot, or for a transient (`.ephemeral`) attribute, which
    /// has none, through key-value coding.
    private static func read(_ key: String, of object: ManagedObject) -> ManagedValue {
        if let slot = object.entity.valueSlot(named: key) { return object.readValue(slot: slot) }
        guard let attribute = object.entity.attributesByName[key] else { return .null }
        return ManagedValue(converting: object.value(forKey: key), to: attribute.attributeType) ?? .null
    }

    /// Sets an attribute.
    public func setValue<Value: ManagedAttributeValue>(_ value: Value, forKey key: String) {
        guard let object, let context else {
            pending[key] = value
            return
        }
        context.onQueue {
            Self.write(value.managedValue, forKey: key, of: object)
            context.changed()
        }
    }

    /// The value of a transformable attribute (any type, through its value transformer).
    public func getValue<Value>(forKey key: String) -> Value {
        guard let object, let context else { return pendingValue(forKey: key) }
        let stored = context.onQueue { object.value(forKey: key) }
        if let value = stored as? Value { return value }
        return Self.noValue(Value.self, key: key)
    }

    /// Sets a transformable attribute.
    public func setValue<Value>(_ value: Value, forKey key: String) {
        guard let object, let context else {
            pending[key] = value
            return
        }
        context.onQueue {
            object.setValue(Self.unwrapped(value), forKey: key)
            context.changed()
        }
    }

    /// The destination of an optional to-one relationship.
    public func getValue<Value: PersistentModel>(forKey key: String) -> Value? {
        guard let object, let context else { return pending[key] as? Value }
        return context.onQueue {
            object.managedToOne(forKey: key, as: ManagedObject.self).flatMap { context.model(for: $0) as? Value }
        }
    }

    /// The destination of a mandatory to-one relationship.
    public func getValue<Value: PersistentModel>(forKey key: String) -> Value {
        guard let value: Value = getValue(forKey: key) else { return Self.noValue(Value.self, key: key) }
        return value
    }

    /// Sets an optional to-one relationship.
    public func setValue<Value: PersistentModel>(_ value: Value?, forKey key: String) {
        guard let object, let context else {
            pending[key] = value
            return
        }
        context.onQueue {
            let destination = value.map { context.objectInserting($0) }
            object.setManagedToOne(destination, forKey: key)
            context.changed()
        }
    }

    /// Sets a mandatory to-one relationship.
    public func setValue<Value: PersistentModel>(_ value: Value, forKey key: String) {
        setValue(Optional(value), forKey: key)
    }

    /// The destinations of a to-many relationship (unordered, as SwiftData keeps them).
    public func getValue<Value: PersistentModel>(forKey key: String) -> [Value] {
        guard let object, let context else { return pending[key] as? [Value] ?? [] }
        return context.onQueue {
            object.managedMembers(forKey: key).compactMap { context.model(for: $0) as? Value }
        }
    }

    /// The destinations of a to-many relationship declared optional (`[Stop]?`).
    public func getValue<Value: PersistentModel>(forKey key: String) -> [Value]? {
        guard object != nil else { return pending[key] as? [Value] }
        let members: [Value] = getValue(forKey: key)
        return members
    }

    /// Sets a to-many relationship.
    public func setValue<Value: PersistentModel>(_ value: [Value], forKey key: String) {
        guard let object, let context else {
            pending[key] = value
            return
        }
        context.onQueue {
            object.setManagedMembers(value.map { context.objectInserting($0) }, forKey: key)
            context.changed()
        }
    }

    /// Sets a to-many relationship declared optional (`nil` empties it).
    public func setValue<Value: PersistentModel>(_ value: [Value]?, forKey key: String) {
        guard object != nil else {
            pending[key] = value
            return
        }
        setValue(value ?? [], forKey: key)
    }

    // MARK: - Values before insertion

    private func pendingValue<Value>(forKey key: String) -> Value {
        if let value = pending[key] as? Value { return value }
        return Self.noValue(Value.self, key: key)
    }

    /// `nil` as `Value` when it is an optional. A non-optional property always has a value
    /// (Swift's initialization rules, a mandatory attribute's save validation), so anything
    /// else is a broken invariant of this module.
    private static func noValue<Value>(_ type: Value.Type, key: String) -> Value {
        if let optional = type as? any ExpressibleByNilLiteral.Type, let value = optional.init(nilLiteral: ()) as? Value {
            return value
        }
        preconditionFailure("The model property '\(key)' has no value; a non-optional property is set by its initializer")
    }

    /// A value standing for a missing one of a non-optional attribute type: a row written by
    /// another program may leave a mandatory column NULL, and reading it must not trap.
    private static func zero<Value: ManagedAttributeValue>(_ type: Value.Type) -> Value {
        let candidates: [ManagedValue] = [.integer(0), .double(0), .bool(false), .string(""), .data(.init()), .decimal(0),
                                          .date(.init(timeIntervalSinceReferenceDate: 0)), .url(URL(fileURLWithPath: "/")), .uuid(.init(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))]
        for candidate in candidates {
            if let value = Value(managedValue: candidate) { return value }
        }
        return noValue(type, key: "\(type)")
    }

    /// Sets an attribute's value: in its slot, or through key-value coding for a transient one.
    static func write(_ value: ManagedValue, forKey key: String, of object: ManagedObject) {
        if let slot = object.entity.valueSlot(named: key) {
            object.writeValue(value, slot: slot)
        } else if let attribute = object.entity.attributesByName[key] {
            object.setValue(attribute.appValue(value), forKey: key)
        }
    }

    /// A value as the untyped setter takes it: an optional's payload, or nil.
    static func unwrapped(_ value: Any) -> Any? {
        guard let optional = value as? any _OptionalValue else { return value }
        return optional.wrappedAny
    }
}
