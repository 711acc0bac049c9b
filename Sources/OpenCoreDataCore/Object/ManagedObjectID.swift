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
    /// The row's primary key, or the temporary counter's value (`storeNumber` 0).
    package private(set) var rawKey: Int64
    /// The store's number (`StoreNumbers`); 0 while temporary.
    package private(set) var storeNumber: UInt32

    /// The identifier (UUID string) of the store the object lives in; `nil` while temporary.
    public var storeIdentifier: String? { StoreNumbers.identifier(for: storeNumber) }

    package var key: Key { storeNumber == 0 ? .temporary(UInt64(bitPattern: rawKey)) : .permanent(rawKey) }

    package init(entity: EntityDescription, storeNumber: UInt32, key: Key) {
        self.entity = entity
        switch key {
        case .permanent(let primaryKey):
            rawKey = primaryKey
            self.storeNumber = storeNumber
        case .temporary(let number):
            rawKey = Int64(bitPattern: number)
            self.storeNumber = 0
        }
    }

    private init(entity: EntityDescription, rawKey: Int64, storeNumber: UInt32) {
        self.entity = entity
        self.rawKey = rawKey
        self.storeNumber = storeNumber
    }

    /// Becomes `other`, which names the same entity object: only the key and the store change
    /// (assigning the whole ID would retain the entity again and release it, two atomic
    /// operations per object a fetch makes).
    package mutating func takeKey(of other: ManagedObjectID) {
        rawKey = other.rawKey
        storeNumber = other.storeNumber
    }

    /// The same ID naming `entity` (equal to this one when both share a root entity).
    package func naming(_ entity: EntityDescription) -> ManagedObjectID {
        ManagedObjectID(entity: entity, rawKey: rawKey, storeNumber: storeNumber)
    }

    package static func temporary(_ entity: EntityDescription) -> ManagedObjectID {
        ManagedObjectID(entity: entity, storeNumber: 0, key: .temporary(temporaryCounter.add(1, ordering: .relaxed).newValue))
    }

    package static func permanent(_ entity: EntityDescription, store: String, primaryKey: Int64) -> ManagedObjectID {
        permanent(entity, storeNumber: StoreNumbers.number(for: store), primaryKey: primaryKey)
    }

    /// A permanent ID in the store numbered `storeNumber` (`StoreNumbers`; not 0).
    package static func permanent(_ entity: EntityDescription, storeNumber: UInt32, primaryKey: Int64) -> ManagedObjectID {
        ManagedObjectID(entity: entity, storeNumber: storeNumber, key: .permanent(primaryKey))
    }

    /// Whether the ID is temporary (the object was inserted and not saved yet).
    public var isTemporaryID: Bool { storeNumber == 0 }

    /// The row's primary key (`Z_PK`), for permanent IDs.
    package var primaryKey: Int64? { storeNumber == 0 ? nil : rawKey }

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
        lhs.rawKey == rhs.rawKey && lhs.storeNumber == rhs.storeNumber
            && (lhs.entity === rhs.entity || lhs.entity.rootEntity === rhs.entity.rootEntity)
    }

    // The key alone: IDs of different entities rarely share one, and one combine is cheaper.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(storeNumber == 0 ? ~rawKey : rawKey)
    }

    /// The same hash, as the standard library hashes one integer (`Set` and `Dictionary` ask
    /// for this): its seeded one-shot SipHash instead of a streaming `Hasher`, a quarter fewer
    /// instructions for every ID a save's notifications and merges put into sets.
    public func _rawHashValue(seed: Int) -> Int {
        (storeNumber == 0 ? ~rawKey : rawKey)._rawHashValue(seed: seed)
    }
}
