import Foundation
import OpenCoreDataCore

/// The identity of a stored model, as SwiftData's `PersistentIdentifier`: `Sendable` (pass it
/// between contexts and actors, then ask a context for its model), `Hashable`, `Codable` (as
/// the object's URI, `x-coredata://<store>/<Entity>/p<key>`).
///
/// A model's identifier is temporary until its context saves it; read it again after the save
/// to keep one that other contexts, and later launches, resolve.
public struct PersistentIdentifier: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The URI every comparison uses: the same model has the same URI however the identifier
    /// was made (read from a model or decoded).
    let uri: String
    /// The object's ID when the identifier came from a model (resolved without the coordinator).
    let objectID: ManagedObjectID?

    init(_ objectID: ManagedObjectID) {
        self.uri = objectID.uriRepresentation().absoluteString
        self.objectID = objectID
    }

    /// The identifier of a model not inserted into any context: unique to that model instance.
    init(unsaved model: ObjectIdentifier) {
        self.uri = "x-coredata:///unsaved/\(UInt(bitPattern: model.hashValue))"
        self.objectID = nil
    }

    /// The name of the model's entity (its class's name).
    public var entityName: String {
        if let objectID { return objectID.entity.name }
        return URL(string: uri)?.pathComponents.dropFirst().first ?? ""
    }

    /// The identifier of the store holding the model; nil while the identifier is temporary.
    public var storeIdentifier: String? {
        if let objectID { return objectID.isTemporaryID ? nil : URL(string: uri)?.host }
        guard let host = URL(string: uri)?.host, !host.isEmpty else { return nil }
        return host
    }

    /// Whether the identifier is temporary (the model is not saved yet).
    public var isTemporary: Bool {
        objectID?.isTemporaryID ?? (storeIdentifier == nil)
    }

    public var description: String { uri }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.uri == rhs.uri }

    public func hash(into hasher: inout Hasher) { hasher.combine(uri) }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let url = URL(string: text), url.scheme == "x-coredata", url.pathComponents.count >= 3 else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: """
                '\(text)' is not a model identifier: expected x-coredata://<store>/<Entity>/p<key>, as an \
                encoded PersistentIdentifier is written.
                """)
        }
        self.uri = text
        self.objectID = nil
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(uri)
    }
}
