import Foundation

/// A position in the persistent history of one or more stores: per store, the number of a
/// transaction. A transaction's token names its store; the coordinator's current token
/// (``PersistentStoreCoordinator/currentPersistentHistoryToken(fromStores:)``) names every store
/// that records history, and fetching history after it reads each of them from its own position.
/// Apps keep the last one they processed: `Codable`, and `NSSecureCoding` as Core Data's tokens
/// are, so the usual `NSKeyedArchiver.archivedData(withRootObject: token, requiringSecureCoding:
/// true)` and `NSKeyedUnarchiver.unarchivedObject(ofClass: NSPersistentHistoryToken.self, from:
/// data)` work. Equal tokens name the same positions. Mirrors `NSPersistentHistoryToken`.
// @unchecked Sendable: immutable (`let`s of Sendable types); an NSObject subclass cannot be
// checked Sendable.
public final class PersistentHistoryToken: NSObject, NSSecureCoding, Codable, Comparable, @unchecked Sendable {
    /// The UUID of the (first) store the token names.
    public let storeIdentifier: String
    /// The transaction's number in that store (its `Z_PK` in `ATRANSACTION`); transactions are
    /// numbered in commit order.
    public let transactionNumber: Int64
    /// Per store UUID, the transaction number the token stands at (``storeIdentifier`` among them).
    public let transactionNumbers: [String: Int64]

    /// Makes a token for one store.
    public init(storeIdentifier: String, transactionNumber: Int64) {
        self.storeIdentifier = storeIdentifier
        self.transactionNumber = transactionNumber
        self.transactionNumbers = [storeIdentifier: transactionNumber]
    }

    /// Makes a token for several stores; the first names ``storeIdentifier``.
    package init?(positions: [(store: String, number: Int64)]) {
        guard let first = positions.first else { return nil }
        storeIdentifier = first.store
        transactionNumber = first.number
        transactionNumbers = Dictionary(positions.map { ($0.store, $0.number) }, uniquingKeysWith: { first, _ in first })
    }

    public static func < (lhs: PersistentHistoryToken, rhs: PersistentHistoryToken) -> Bool { lhs.transactionNumber < rhs.transactionNumber }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? PersistentHistoryToken else { return false }
        return storeIdentifier == other.storeIdentifier && transactionNumber == other.transactionNumber
            && transactionNumbers == other.transactionNumbers
    }

    public override var hash: Int {
        var hasher = Hasher()
        hasher.combine(storeIdentifier)
        hasher.combine(transactionNumber)
        hasher.combine(transactionNumbers.count)
        return hasher.finalize()
    }

    public override var description: String {
        let others = transactionNumbers.filter { $0.key != storeIdentifier }.sorted { $0.key < $1.key }.map { " \($0.key) #\($0.value)" }.joined()
        return "PersistentHistoryToken(\(storeIdentifier) #\(transactionNumber)\(others))"
    }

    // MARK: Coding

    private enum CodingKeys: String, CodingKey {
        case storeIdentifier, transactionNumber, otherStores
    }

    /// Decodes a token written by ``encode(to:)``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        storeIdentifier = try container.decode(String.self, forKey: .storeIdentifier)
        transactionNumber = try container.decode(Int64.self, forKey: .transactionNumber)
        var numbers = try container.decodeIfPresent([String: Int64].self, forKey: .otherStores) ?? [:]
        numbers[storeIdentifier] = transactionNumber
        transactionNumbers = numbers
    }

    /// Encodes the store's UUID and the transaction's number (and those of the other stores).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(storeIdentifier, forKey: .storeIdentifier)
        try container.encode(transactionNumber, forKey: .transactionNumber)
        let others = transactionNumbers.filter { $0.key != storeIdentifier }
        if !others.isEmpty { try container.encode(others, forKey: .otherStores) }
    }

    /// Tokens decode only as tokens (`NSSecureCoding`).
    public static var supportsSecureCoding: Bool { true }

    /// Archives the token (`NSCoding`).
    public func encode(with coder: NSCoder) {
        coder.encode(storeIdentifier as NSString, forKey: CodingKeys.storeIdentifier.rawValue)
        coder.encode(transactionNumber, forKey: CodingKeys.transactionNumber.rawValue)
        // The other stores as two parallel arrays (property-list types a secure decode allows).
        let others = transactionNumbers.filter { $0.key != storeIdentifier }.sorted { $0.key < $1.key }
        if !others.isEmpty {
            coder.encode(others.map { $0.key as NSString } as NSArray, forKey: "otherStores")
            coder.encode(others.map { NSNumber(value: $0.value) } as NSArray, forKey: "otherNumbers")
        }
    }

    /// Unarchives a token; `nil` when the archive holds no store identifier, or other stores'
    /// positions that do not pair up (`NSCoding`).
    public init?(coder: NSCoder) {
        guard let identifier = coder.decodeObject(of: NSString.self, forKey: CodingKeys.storeIdentifier.rawValue) else { return nil }
        storeIdentifier = identifier as String
        transactionNumber = coder.decodeInt64(forKey: CodingKeys.transactionNumber.rawValue)
        var numbers: [String: Int64] = [:]
        if coder.containsValue(forKey: "otherStores") {
            guard let stores = coder.decodeObject(of: [NSArray.self, NSString.self], forKey: "otherStores") as? [String],
                  let values = coder.decodeObject(of: [NSArray.self, NSNumber.self], forKey: "otherNumbers") as? [NSNumber],
                  stores.count == values.count else { return nil }
            for (store, value) in zip(stores, values) { numbers[store] = value.int64Value }
        }
        numbers[storeIdentifier] = transactionNumber
        transactionNumbers = numbers
    }
}

/// One change of a history transaction. Mirrors `NSPersistentHistoryChange`.
public final class PersistentHistoryChange: Sendable, CustomStringConvertible {
    /// The kind of change. Raw values are Core Data's `NSPersistentHistoryChangeType`.
    public enum ChangeType: Int, Sendable {
        /// The object was inserted.
        case insert = 0
        /// Some of its properties changed.
        case update = 1
        /// The object was deleted.
        case delete = 2
    }

    /// The change's number (its `Z_PK` in `ACHANGE`).
    public let changeID: Int64
    /// Insert, update or delete.
    public let changeType: ChangeType
    /// The object that changed.
    public let changedObjectID: ManagedObjectID
    /// For updates: the names of the properties that changed (`nil` when unknown, as for batch
    /// updates recorded without them).
    public let updatedPropertyNames: Set<String>?
    /// The number of the transaction the change belongs to.
    public let transactionNumber: Int64
    private let storedTombstone: [String: ManagedValue]?

    package init(changeID: Int64, changeType: ChangeType, changedObjectID: ManagedObjectID, updatedPropertyNames: Set<String>?,
                 tombstone: [String: ManagedValue]?, transactionNumber: Int64) {
        self.changeID = changeID
        self.changeType = changeType
        self.changedObjectID = changedObjectID
        self.updatedPropertyNames = updatedPropertyNames
        self.storedTombstone = tombstone
        self.transactionNumber = transactionNumber
    }

    /// The changed properties' descriptions (for updates).
    public var updatedProperties: [PropertyDescription]? {
        guard let names = updatedPropertyNames else { return nil }
        let entity = changedObjectID.entity
        return entity.allProperties.filter { names.contains($0.name) }
    }

    /// For deletes: the values of the attributes marked `preservesValueInHistoryOnDeletion`, by
    /// name (`NSNull` for nil).
    public var tombstone: [String: Any]? {
        guard let storedTombstone else { return nil }
        let entity = changedObjectID.entity
        return storedTombstone.reduce(into: [:]) { result, pair in
            result[pair.key] = (entity.attributesByName[pair.key].map { $0.appValue(pair.value) } ?? pair.value.anyValue(for: .binaryData)) ?? NSNull()
        }
    }

    public var description: String { "PersistentHistoryChange(#\(changeID) \(changeType) \(changedObjectID))" }
}

/// One recorded save or batch request. Mirrors `NSPersistentHistoryTransaction`.
public final class PersistentHistoryTransaction: Sendable, CustomStringConvertible {
    /// The transaction's position; fetch history after it to get what came later.
    public let token: PersistentHistoryToken
    /// When it was committed.
    public let timestamp: Date
    /// The saving context's `transactionAuthor`.
    public let author: String?
    /// The saving context's `name`.
    public let contextName: String?
    /// The saving process (its name).
    public let processID: String?
    /// The saving program's bundle identifier (its executable name on Linux).
    public let bundleID: String?
    /// The store's UUID.
    public let storeID: String
    /// The changes (`nil` when the request asked for transactions only).
    public let changes: [PersistentHistoryChange]?

    package init(token: PersistentHistoryToken, timestamp: Date, author: String?, contextName: String?, processID: String?, bundleID: String?,
                 changes: [PersistentHistoryChange]?) {
        self.token = token
        self.timestamp = timestamp
        self.author = author
        self.contextName = contextName
        self.processID = processID
        self.bundleID = bundleID
        self.storeID = token.storeIdentifier
        self.changes = changes
    }

    /// The transaction's number.
    public var transactionNumber: Int64 { token.transactionNumber }

    /// A did-save notification with the transaction's object IDs, for
    /// ``ManagedObjectContext/mergeChanges(fromContextDidSave:)``. Mirrors `objectIDNotification()`.
    public func objectIDNotification() -> Notification {
        var info: [String: Any] = Self.merged([self]).userInfo
        info[SaveEvent.readsFreshRowsKey] = true     // the change may come from another coordinator
        return Notification(name: .NSManagedObjectContextDidSave, object: nil, userInfo: info)
    }

    /// The net effect of transactions in order, as one save event: an object inserted and then
    /// deleted is only deleted; inserted and then updated is inserted.
    package static func merged(_ transactions: [PersistentHistoryTransaction]) -> SaveEvent {
        var inserted = Set<ManagedObjectID>(), updated = Set<ManagedObjectID>(), deleted = Set<ManagedObjectID>()
        for transaction in transactions {
            for change in transaction.changes ?? [] {
                let id = change.changedObjectID
                switch change.changeType {
                case .insert:
                    deleted.remove(id)
                    inserted.insert(id)
                case .update:
                    if !inserted.contains(id) { updated.insert(id) }
                case .delete:
                    inserted.remove(id)
                    updated.remove(id)
                    deleted.insert(id)
                }
            }
        }
        return SaveEvent(insertedObjectIDs: inserted, updatedObjectIDs: updated, deletedObjectIDs: deleted,
                         contextName: transactions.last?.contextName, transactionAuthor: transactions.last?.author)
    }

    public var description: String {
        "PersistentHistoryTransaction(#\(transactionNumber) \(author ?? "-") \(contextName ?? "-"), \(changes?.count ?? 0) changes)"
    }
}
