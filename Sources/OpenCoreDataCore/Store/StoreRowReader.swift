import Foundation

/// The stored graph of one store, read on demand by key: for a store that tests predicates
/// across relationships in Swift (PostgreSQL's string operators) and for a store or the
/// coordinator that orders rows in Swift by a sort key through to-one relationships
/// (`folder.title`). Used on one thread, for one fetch. A resolver cannot throw: the first error
/// is kept for the caller to throw once the fetch is done, and later reads answer nothing.
package final class StoreRowReader: GraphResolver {
    private let engine: any StoreEngine
    package private(set) var error: (any Error)?
    /// Rows read so far (many sources share a destination); nil: no such row.
    private var read: [ManagedObjectID: [ManagedValue]?] = [:]

    package init(engine: any StoreEngine) {
        self.engine = engine
    }

    package func values(of id: ManagedObjectID) -> [ManagedValue]? {
        guard error == nil, let key = id.primaryKey else { return nil }
        if let known = read[id] { return known }
        do {
            let values = try engine.row(entity: id.entity, primaryKey: key).map { id.entity.adapt($0.snapshot.values, from: $0.entity) }
            read[id] = values
            return values
        } catch {
            self.error = error
            return nil
        }
    }

    package func members(_ relationship: RelationshipDescription, of id: ManagedObjectID) -> [ManagedObjectID] {
        guard error == nil, let key = id.primaryKey else { return [] }
        do {
            return try engine.fetchRelated(relationship, of: [key]).map(\.member)
        } catch {
            self.error = error
            return []
        }
    }
}
