public import Foundation
import OpenCoreDataCore

/// A position in a store's history (SwiftData's `HistoryToken`): fetch the transactions after
/// the last one you read, and keep the token (it is `Codable`) to carry on after a relaunch.
public protocol HistoryToken: Codable, Comparable, Hashable, Sendable {}

/// The token of a ``DefaultHistoryTransaction``.
public struct DefaultHistoryToken: HistoryToken {
    // @unchecked-free: `PersistentHistoryToken` is an immutable `Sendable` class.
    let token: PersistentHistoryToken

    init(_ token: PersistentHistoryToken) { self.token = token }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.token < rhs.token }
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.token.isEqual(rhs.token) }
    public func hash(into hasher: inout Hasher) { hasher.combine(token.hash) }

    public init(from decoder: any Decoder) throws {
        token = try PersistentHistoryToken(from: decoder)
    }

    public func encode(to encoder: any Encoder) throws {
        try token.encode(to: encoder)
    }
}

/// One recorded save (SwiftData's `HistoryTransaction`).
public protocol HistoryTransaction: Hashable, Identifiable, Sendable {
    /// The type of the transaction's token.
    associatedtype TokenType: HistoryToken
    /// The models the transaction inserted, updated and deleted.
    var changes: [HistoryChange] { get }
    /// The transaction's number in its store.
    var transactionIdentifier: Int64 { get }
    /// The transaction's position: fetch after it to get what came later.
    var token: TokenType { get }
    /// The author the saving context named (`ModelContext.author`).
    var author: String? { get }
    /// The process's bundle identifier (its executable's name here).
    var bundleIdentifier: String { get }
    /// The saving process's identifier.
    var processIdentifier: String { get }
    /// The store's identifier.
    var storeIdentifier: String { get }
    /// When the transaction was committed.
    var timestamp: Date { get }
}

/// A recorded save of a container's store, with its changes.
public struct DefaultHistoryTransaction: HistoryTransaction {
    public let changes: [HistoryChange]
    public let transactionIdentifier: Int64
    public let token: DefaultHistoryToken
    public let author: String?
    public let bundleIdentifier: String
    public let processIdentifier: String
    public let storeIdentifier: String
    public let timestamp: Date

    /// The transaction's identity: its store and number.
    public var id: String { "\(storeIdentifier)/\(transactionIdentifier)" }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.id == rhs.id }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// One change of a transaction (SwiftData's `HistoryChange`).
public enum HistoryChange: Sendable {
    /// A model was inserted.
    case insert(any HistoryInsert)
    /// Some of a model's attributes changed.
    case update(any HistoryUpdate)
    /// A model was deleted.
    case delete(any HistoryDelete)

    /// The change's number.
    public var changeIdentifier: Int64 {
        switch self {
        case .insert(let change): change.changeIdentifier
        case .update(let change): change.changeIdentifier
        case .delete(let change): change.changeIdentifier
        }
    }

    /// The model the change is about.
    public var changedPersistentIdentifier: PersistentIdentifier {
        switch self {
        case .insert(let change): change.changedPersistentIdentifier
        case .update(let change): change.changedPersistentIdentifier
        case .delete(let change): change.changedPersistentIdentifier
        }
    }

    /// The number of the change's transaction.
    public var transactionIdentifier: Int64 {
        switch self {
        case .insert(let change): change.transactionIdentifier
        case .update(let change): change.transactionIdentifier
        case .delete(let change): change.transactionIdentifier
        }
    }
}

/// What every kind of change tells.
public protocol HistoryChangeDescribing: Sendable {
    /// The model class of the changed model.
    associatedtype Model: PersistentModel
    /// The change's number.
    var changeIdentifier: Int64 { get }
    /// The model the change is about.
    var changedPersistentIdentifier: PersistentIdentifier { get }
    /// The number of the change's transaction.
    var transactionIdentifier: Int64 { get }
}

/// An insertion.
public protocol HistoryInsert: HistoryChangeDescribing {}
/// An update.
public protocol HistoryUpdate: HistoryChangeDescribing {
    /// The attributes that changed.
    var updatedAttributes: [PartialKeyPath<Model>] { get }
}
/// A deletion.
public protocol HistoryDelete: HistoryChangeDescribing {
    /// The values of the deleted model's attributes marked `.preserveValueOnDeletion`.
    var tombstone: HistoryTombstone<Model> { get }
}

/// An insertion of a `Model`.
public struct DefaultHistoryInsert<Model: PersistentModel>: HistoryInsert {
    public let changeIdentifier: Int64
    public let changedPersistentIdentifier: PersistentIdentifier
    public let transactionIdentifier: Int64
}

/// An update of a `Model`.
public struct DefaultHistoryUpdate<Model: PersistentModel>: HistoryUpdate, @unchecked Sendable {
    // @unchecked: the key paths are immutable objects; the rest are values.
    public let changeIdentifier: Int64
    public let changedPersistentIdentifier: PersistentIdentifier
    public let transactionIdentifier: Int64
    public let updatedAttributes: [PartialKeyPath<Model>]
}

/// A deletion of a `Model`.
public struct DefaultHistoryDelete<Model: PersistentModel>: HistoryDelete {
    public let changeIdentifier: Int64
    public let changedPersistentIdentifier: PersistentIdentifier
    public let transactionIdentifier: Int64
    public let tombstone: HistoryTombstone<Model>
}

/// The preserved values of a deleted model, by key path.
public struct HistoryTombstone<Model: PersistentModel>: @unchecked Sendable {
    // @unchecked: built once from the history's stored values (strings, numbers, dates, data,
    // UUIDs, URLs: value types) and never changed.
    let values: [String: Any]

    /// A preserved value; nil when the attribute was not preserved or was nil.
    public subscript<Value>(keyPath: KeyPath<Model, Value>) -> Value? {
        guard let name = Model.schemaMetadata.first(where: { $0.keypath == keyPath })?.name, let value = values[name],
              !(value is NSNull) else { return nil }
        if let value = value as? Value { return value }
        // Stored as the attribute's type (Int64 for an `Int` property): read as the property's.
        guard let type = Value.self as? any ManagedAttributeValue.Type else { return nil }
        return Self.converted(value, to: type) as? Value
    }

    private static func converted<T: ManagedAttributeValue>(_ value: Any, to type: T.Type) -> T? {
        ManagedValue(converting: value, to: T.attributeType).flatMap(T.init(managedValue:))
    }
}
