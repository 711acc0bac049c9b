import Foundation
import OpenCoreDataCore

extension ModelContext {
    /// The models a descriptor describes.
    public func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [T] {
        try onQueue {
            try managed.fetch(try fetchRequest(descriptor, as: ManagedObject.self)).compactMap { model(for: $0) as? T }
        }
    }

    /// How many models a descriptor describes (limit and offset applied).
    public func fetchCount<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> Int {
        try onQueue { try managed.count(for: try fetchRequest(descriptor, as: ManagedObject.self)) }
    }

    /// The identifiers of the models a descriptor describes, without reading the models.
    public func fetchIdentifiers<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [PersistentIdentifier] {
        try onQueue {
            try managed.fetch(try fetchRequest(descriptor, as: ManagedObjectID.self)).map(PersistentIdentifier.init)
        }
    }

    /// Calls `block` with each model a descriptor describes, reading `batchSize` rows at a time
    /// (the keys of all first), so that memory is bounded by the batch, not the result. Throws the
    /// store's error when a batch could not be read. With
    /// unsaved changes of the class, the models are read at once (they have to be merged).
    public func enumerate<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, batchSize: Int = 5_000,
                                              block: (T) throws -> Void) throws {
        let results = try onQueue {
            let request = try fetchRequest(descriptor, as: ManagedObject.self)
            request.fetchBatchSize = max(1, batchSize)
            return try managed.fetchBatched(request)
        }
        for index in 0..<results.count {
            guard let model = onQueue({ model(for: results[index]) as? T }) else { continue }
            try block(model)
        }
        if let error = results.loadError { throw error }
    }

    /// The context's fetch request of a descriptor, against the container's entity (so that key
    /// paths resolve through the model's relationships).
    func fetchRequest<T: PersistentModel, Result>(_ descriptor: FetchDescriptor<T>, as: Result.Type) throws -> FetchRequest<Result> {
        let entityName = Schema.entityName(for: T.self)
        guard let entity = managed.persistentStoreCoordinator?.managedObjectModel.entitiesByName[entityName] else {
            throw CoreDataError(.coreData, "\(T.self) is not in the container's schema; list it in ModelContainer(for:).")
        }
        let request = FetchRequest<Result>(entity: entity)
        if let predicate = descriptor.predicate {
            request.predicate = FetchPredicate(typed: predicate, entity: entity)
        }
        if !descriptor.sortBy.isEmpty {
            request.sortDescriptors = descriptor.sortBy.map { FetchSortDescriptor($0, entity: entity) }
        }
        request.fetchLimit = max(0, descriptor.fetchLimit ?? 0)
        request.fetchOffset = max(0, descriptor.fetchOffset ?? 0)
        request.includesPendingChanges = descriptor.includePendingChanges
        request.relationshipKeyPathsForPrefetching = try descriptor.relationshipKeyPathsForPrefetching.map { keyPath in
            guard let name = entity.name(for: keyPath) else {
                throw CoreDataError(.coreData, "\(keyPath) is not a relationship of \(T.self); prefetch persisted relationships only.")
            }
            return name
        }
        return request
    }
}
