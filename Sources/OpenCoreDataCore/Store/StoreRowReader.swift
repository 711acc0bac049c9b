import Foundation

/// Reads other rows of one store by key, for a store or the coordinator that orders rows in
/// Swift by a sort key through to-one relationships (`folder.title`). Used on one thread, for
/// one fetch; the first error is kept for the caller to throw (a resolver cannot throw).
final class StoreRowReader: GraphResolver {
    private let engine: any StoreEngine
    private(set) var error: (any Error)?
    /// Rows read so far (many sources share a destination); nil: no such row.
    private var read: [ManagedObjectID: [ManagedValue]?] = [:]

    init(engine: any StoreEngine) {
        self.engine = engine
    }

    func values(of id: ManagedObjectID) -> [ManagedValue]? {
        guard error == nil, let key = id.primaryKey else { return nil }
        if let known = read[id] { return known }
        do {
            let row = try engine.fetch(StoreFetchRequest(entity: id.entity.rootEntity, predicate: .primaryKeyIn([key]))).first
            let values = row.map { id.entity.adapt($0.snapshot.values, from: $0.entity) }
            read[id] = values
            return values
        } catch {
            self.error = error
            return nil
        }
    }

    /// Sort keys follow to-one relationships only.
    func members(_ relationship: RelationshipDescription, of id: ManagedObjectID) -> [ManagedObjectID] { [] }
}
