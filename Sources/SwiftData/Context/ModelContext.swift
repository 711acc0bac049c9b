public import Foundation
import OpenCoreDataCore
internal import OpenCoreData

/// Where models are inserted, changed, deleted and fetched, as SwiftData's `ModelContext`.
///
/// ```swift
/// let context = ModelContext(container)
/// context.insert(Trip(name: "Rome", start: .now))
/// try context.save()
/// let trips = try context.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.start)]))
/// ```
/// A context is not `Sendable`: use it, and its models, in one isolation domain (pass
/// ``PersistentIdentifier``s between them). Each context sees what other contexts of its
/// container save, as SwiftData's do, and a model inserted with the value of a unique attribute
/// another model has updates that model (an upsert).
public final class ModelContext {
    /// The container the context belongs to.
    public let container: ModelContainer
    /// The context underneath. Its state is owned by its queue: everything here runs inside
    /// ``onQueue(_:)``.
    let managed: ManagedObjectContext
    /// The model of each object, weakly (the model holds its object; a model nobody holds is
    /// made again from its object). Keyed by the object's identity; owned by `managed`'s queue.
    private var models: [ObjectIdentifier: WeakModel] = [:]
    /// The size of `models` after its last sweep of released models.
    private var sweptCount = 0
    /// Whether the end of the current event is scheduled on the context's queue.
    private let eventEnd = EventEnd()

    /// A new context of the container (not the main context): a queue of its own.
    public convenience init(_ container: ModelContainer) {
        self.init(container: container, context: container.persistentContainer.newBackgroundContext())
    }

    init(container: ModelContainer, context: ManagedObjectContext) {
        self.container = container
        self.managed = context
        context.automaticallyMergesChangesFromParent = true
        // A model inserted with a unique value another model has updates that model, as in
        // SwiftData: the context's values win, property by property.
        context.mergePolicy = .mergeByPropertyObjectTrump
    }

    /// Runs `body` on the context's queue (at once when already there).
    func onQueue<Result>(_ body: () throws -> Result) rethrows -> Result {
        try managed.performAndWait(body)
    }

    /// Ends the context's event on its queue about a millisecond after a change (once however
    /// many changes are made before it), as the end of a run-loop turn ends SwiftData's: the changes' consequences are
    /// worked out (delete rules, inverses) and told to the context's queries and observers. Called
    /// on the queue after each change.
    func changed() {
        guard !eventEnd.isScheduled else { return }
        eventEnd.isScheduled = true
        let eventEnd = eventEnd
        let managed = managed
        let owner = UncheckedWeakContext(self)
        // A millisecond later, as a run-loop turn gathers the changes of its code: code on
        // another thread making many changes in a row does not wait, at each call, behind an
        // event end queued on the context's queue (a thread switch per call).
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(1)) {
            // `perform` processes the pending changes after the block (a save processes them first).
            managed.perform {
                eventEnd.isScheduled = false
                // A failed autosave leaves the changes in the context, unsaved: the next save()
                // reports the error (SwiftData's autosave drops it too; nothing is lost).
                if eventEnd.autosaves && managed.hasChanges { try? owner.context?.saveAnnouncing() }
            }
        }
    }

    /// Whether the context saves on its own after changes are made to its models, at the end of
    /// the event that made them (about a millisecond later, on its queue). False unless set; the container's
    /// ``ModelContainer/mainContext`` starts with it true, as in SwiftData. A save that fails
    /// leaves the changes in the context, and the next `save()` throws the error.
    public var autosaveEnabled: Bool {
        get { onQueue { eventEnd.autosaves } }
        set { onQueue { eventEnd.autosaves = newValue } }
    }

    // MARK: - Models and objects (on the queue)

    /// The model of one of the context's objects: the one already made while it lives.
    func model(for object: ManagedObject) -> (any PersistentModel)? {
        let key = ObjectIdentifier(object)
        if let model = models[key]?.model, model.persistentBackingData.object === object { return model }
        guard let type = container.modelTypes[object.entity.name] else { return nil }
        let model = type.init(backingData: ModelBackingData(object: object, context: self))
        remember(model, for: object)
        return model
    }

    private func remember(_ model: any PersistentModel, for object: ManagedObject) {
        models[ObjectIdentifier(object)] = WeakModel(model: model)
        if models.count > max(1_024, 2 * sweptCount) {
            models = models.filter { $0.value.model != nil }
            sweptCount = models.count
        }
    }

    /// The context's object of a model, inserting the model (and the models its values reach)
    /// when it is in no context yet.
    func objectInserting<Model: PersistentModel>(_ model: Model) -> ManagedObject {
        let backing = model.persistentBackingData
        if let object = backing.object {
            precondition(backing.context === self, """
                The model \(Model.self) belongs to another ModelContext; fetch it in this one by its \
                persistentModelID (context.model(for:)).
                """)
            return object
        }
        let entityName = Schema.entityName(for: Model.self)
        guard let entity = managed.persistentStoreCoordinator?.managedObjectModel.entitiesByName[entityName] else {
            preconditionFailure("The model \(Model.self) is not in the container's schema; list it in ModelContainer(for:).")
        }
        let object = ManagedObject(entity: entity, insertInto: managed)
        backing.attach(to: object, in: self)
        remember(model, for: object)
        for (key, value) in backing.takePending() {
            set(value, forKey: key, of: object)
        }
        return object
    }

    /// Gives a new object a value its model held before insertion.
    private func set(_ value: Any, forKey key: String, of object: ManagedObject) {
        if let stored = value as? any ManagedAttributeValue {
            ModelBackingData.write(stored.managedValue, forKey: key, of: object)
            return
        }
        let value = ModelBackingData.unwrapped(value)
        if let relationship = object.entity.relationshipsByName[key] {
            if relationship.isToMany {
                let members = (value as? [any PersistentModel]) ?? []
                object.setManagedMembers(members.map { objectInserting($0) }, forKey: key)
            } else {
                object.setManagedToOne((value as? any PersistentModel).map { objectInserting($0) }, forKey: key)
            }
        } else {
            object.setValue(value, forKey: key)
        }
    }

    private func models(_ objects: Set<ManagedObject>) -> [any PersistentModel] {
        objects.compactMap { model(for: $0) }
    }

    // MARK: - Changes

    /// Inserts a new model (and the new models its relationships reach); it is stored at the
    /// next save. Inserting a model the context holds does nothing.
    public func insert<T: PersistentModel>(_ model: T) {
        onQueue {
            _ = objectInserting(model)
            changed()
        }
    }

    /// Deletes a model at the next save (its relationships' delete rules apply then).
    public func delete<T: PersistentModel>(_ model: T) {
        onQueue {
            guard let object = model.persistentBackingData.object else { return }
            precondition(model.persistentBackingData.context === self, "The model \(T.self) belongs to another ModelContext.")
            managed.delete(object)
            changed()
        }
    }

    /// Deletes, at the next save, every model of a class matching a predicate (all when nil).
    public func delete<T: PersistentModel>(model: T.Type, where predicate: Predicate<T>? = nil, includeSubclasses: Bool = true) throws {
        try onQueue {
            let request = try fetchRequest(FetchDescriptor<T>(predicate: predicate), as: ManagedObject.self)
            request.includesSubentities = includeSubclasses
            for object in try managed.fetch(request) { managed.delete(object) }
            changed()
        }
    }

    /// Saves the inserted, changed and deleted models to the store, posting ``willSave`` and
    /// ``didSave``. Throws the store's error (a validation failure, a conflict, a uniqueness
    /// constraint) and keeps the changes.
    public func save() throws {
        try saveAnnouncing()
    }

    /// Runs `block`, then saves what it changed.
    public func transaction(block: () throws -> Void) throws {
        try block()
        try save()
    }

    /// Forgets every unsaved change: new models leave the context, changed and deleted ones
    /// come back as saved.
    public func rollback() {
        onQueue { managed.rollback() }
    }

    /// Whether the context has unsaved changes.
    public var hasChanges: Bool {
        onQueue { managed.hasChanges }
    }

    /// Carries out the pending changes' consequences now (delete rules, inverses), as a save
    /// would first.
    public func processPendingChanges() {
        onQueue { managed.processPendingChanges() }
    }

    /// The models inserted since the last save.
    public var insertedModelsArray: [any PersistentModel] {
        onQueue { models(managed.insertedObjects) }
    }

    /// The saved models changed since the last save.
    public var changedModelsArray: [any PersistentModel] {
        onQueue { models(managed.updatedObjects) }
    }

    /// The models deleted since the last save.
    public var deletedModelsArray: [any PersistentModel] {
        onQueue { models(managed.deletedObjects) }
    }

    // MARK: - Identifiers

    /// The model of an identifier: the context's own when it holds it, else one read from the
    /// store when first used. An identifier of no model of this container's schema traps, naming
    /// it (use ``registeredModel(for:)`` or a fetch for identifiers that come from input).
    public func model(for persistentModelID: PersistentIdentifier) -> any PersistentModel {
        onQueue {
            guard let objectID = resolve(persistentModelID), let model = model(for: managed.object(with: objectID)) else {
                preconditionFailure("\(persistentModelID) is not the identifier of a model of this container's schema.")
            }
            return model
        }
    }

    /// The context's model of an identifier when the context holds it; nil otherwise.
    public func registeredModel<T: PersistentModel>(for persistentModelID: PersistentIdentifier) -> T? {
        onQueue {
            guard let objectID = resolve(persistentModelID), let object = managed.registeredObject(for: objectID) else { return nil }
            return model(for: object) as? T
        }
    }

    /// The model of an identifier when the store (or the context) has it and it is a `T`; nil for
    /// an identifier of another container, of a deleted model, or of another class.
    func existingModel<T: PersistentModel>(for persistentModelID: PersistentIdentifier) -> T? {
        onQueue {
            guard let objectID = resolve(persistentModelID), let object = try? managed.existingObject(with: objectID) else { return nil }
            return model(for: object) as? T
        }
    }

    private func resolve(_ identifier: PersistentIdentifier) -> ManagedObjectID? {
        if let objectID = identifier.objectID { return objectID }
        guard let url = URL(string: identifier.uri) else { return nil }
        return managed.persistentStoreCoordinator?.managedObjectID(forURIRepresentation: url)
    }
}

/// Whether a context's event end is scheduled, and whether it saves. Owned by the context's queue: read and written
/// only there (by `changed()` and by the block it schedules).
final class EventEnd: @unchecked Sendable {
    var isScheduled = false
    /// Whether the event's end saves the context (`autosaveEnabled`).
    var autosaves = false
}

/// A model context held weakly, for the blocks it schedules on its own queue.
struct UncheckedWeakContext: @unchecked Sendable {
    // @unchecked: the context is only used inside blocks that run on its own context's queue,
    // where every use of a model context runs (`onQueue`).
    weak var context: ModelContext?
    init(_ context: ModelContext) { self.context = context }
}

/// A model held weakly.
struct WeakModel {
    weak var model: (any PersistentModel)?
}
