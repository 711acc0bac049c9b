import Foundation
import Synchronization

/// The identity of a managed object: its entity and its row in a store.
///
/// IDs are `Sendable` values: pass them between contexts and threads, and turn them back
/// into objects with ``ManagedObjectContext/object(with:)``. An object inserted and not yet
/// saved has a temporary ID; saving (or ``ManagedObjectContext/obtainPermanentIDs(for:)``)
/// gives it a permanent one. Mirrors `NSManagedObjectID`.
public struct ManagedObjectID: Sendable, Hashable, CustomStringConvertible {
    package enum Key: Sendable, Hashable {
        case permanent(Int64)
        /// A process-wide counter; the URI adds the process's random prefix, as Core Data's
        /// temporary IDs are a UUID followed by a number.
        case temporary(UInt64)
    }

    /// Makes temporary keys: one random prefix per process, then a counter (no UUID per object:
    /// generating one costs a system call on Linux).
    package static let temporaryPrefix = UUID().uuidString
    private static let temporaryCounter = Atomic<UInt64>(0)

    /// The entity of the object.
    public let entity: EntityDescription
    /// The identifier (UUID string) of the store the object lives in; `nil` while temporary.
    public let storeIdentifier: String?
    package let key: Key

    package init(entity: EntityDescription, storeIdentifier: String?, key: Key) {
        self.entity = entity
        self.storeIdentifier = storeIdentifier
        self.key = key
    }

    package static func temporary(_ entity: EntityDescription) -> ManagedObjectID {
        ManagedObjectID(entity: entity, storeIdentifier: nil, key: .temporary(temporaryCounter.add(1, ordering: .relaxed).newValue))
    }

    package static func permanent(_ entity: EntityDescription, store: String, primaryKey: Int64) -> ManagedObjectID {
        ManagedObjectID(entity: entity, storeIdentifier: store, key: .permanent(primaryKey))
    }

    /// Whether the ID is temporary (the object was inserted and not saved yet).
    public var isTemporaryID: Bool {
        if case .temporary = key { return true }
        return false
    }

    /// The row's primary key (`Z_PK`), for permanent IDs.
    package var primaryKey: Int64? {
        if case .permanent(let pk) = key { return pk }
        return nil
    }

    /// The ID as a URI, in Core Data's form: `x-coredata://<store UUID>/<Entity>/p<Z_PK>`, or
    /// `x-coredata:///<Entity>/t<UUID>` for a temporary ID.
    public func uriRepresentation() -> URL {
        let text: String = switch key {
        case .permanent(let pk): "x-coredata://\(storeIdentifier ?? "")/\(entity.name)/p\(pk)"
        case .temporary(let number): "x-coredata:///\(entity.name)/t\(Self.temporaryPrefix)\(number)"
        }
        // The entity name comes from the model and the rest is alphanumeric; a URL always forms.
        return URL(string: text) ?? URL(fileURLWithPath: "/")
    }

    public var description: String { uriRepresentation().absoluteString }

    public static func == (lhs: ManagedObjectID, rhs: ManagedObjectID) -> Bool {
        lhs.key == rhs.key && (lhs.entity === rhs.entity || lhs.entity.rootEntity === rhs.entity.rootEntity) && lhs.storeIdentifier == rhs.storeIdentifier
    }

    // The key alone: IDs of different entities rarely share one, and one combine is cheaper.
    public func hash(into hasher: inout Hasher) {
        switch key {
        case .permanent(let pk): hasher.combine(pk)
        case .temporary(let number): hasher.combine(~number)
        }
    }
}
