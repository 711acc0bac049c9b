import Foundation

/// A property of an entity: the common part of attributes (and, later, relationships).
/// Mirrors `NSPropertyDescription`.
///
/// Descriptions are mutable while a model is being built; once a coordinator uses the model
/// they are frozen, and changing them is a programmer error (as in Core Data).
// @unchecked Sendable: every stored property is written only before the model is frozen
// (checked by `checkMutable()`); after that the description is read-only and shared freely.
public class PropertyDescription: @unchecked Sendable, CustomStringConvertible {
    /// The property's name, also its key for `value(forKey:)`.
    public var name: String { didSet { checkMutable() } }
    // Read without a run-time access record at every save's validation: set while the model is
    // built, then only read once it is frozen (a change then traps).
    /// Whether the property may be `nil` when saved. Core Data's `isOptional`.
    @exclusivity(unchecked) public var isOptional: Bool = true { didSet { checkMutable() } }
    /// Whether the property is transient (kept in memory, never stored).
    public var isTransient: Bool = false { didSet { checkMutable() } }
    /// Whether the property is read-only.
    public var isReadOnly: Bool = false { didSet { checkMutable() } }
    /// Changes the version hash without changing the property, as in Core Data.
    public var versionHashModifier: String? { didSet { checkMutable() } }
    /// The name this property had in an earlier model version (for migration).
    public var renamingIdentifier: String? { didSet { checkMutable() } }
    /// Application data attached to the property.
    public var userInfo: [String: String] = [:] { didSet { checkMutable() } }

    /// The entity this property belongs to (set when the property is added to an entity).
    // unowned, not weak: a weak reference gives the entity a side table, which makes every
    // retain/release of it (one per object ID copy) take the slow path. The entity owns its
    // properties, so it outlives them in every normal use.
    public internal(set) unowned(safe) var entity: EntityDescription?

    /// Makes a property description.
    public init(name: String) { self.name = name }

    package func checkMutable() {
        if let entity, entity.isFrozen {
            preconditionFailure("""
                The property '\(name)' of entity '\(entity.name)' cannot be changed: its model is in use by a \
                persistent store coordinator. Build a new model instead.
                """)
        }
    }

    /// Core Data's property base hash: name, a flag word, the version-hash modifier.
    package var baseVersionHash: [UInt8] {
        var bytes = Array(name.utf8)
        let flags: UInt16 = (isOptional ? 1 : 0) | (isTransient ? 2 : 0) | (isReadOnly ? 4 : 0)
        bytes += [UInt8(flags & 0xff), UInt8(flags >> 8)]
        if let versionHashModifier { bytes += Array(versionHashModifier.utf8) }
        return SHA256.hash(bytes)
    }

    /// The property's version hash (SHA-256), as Core Data computes it.
    public var versionHash: Data { Data(baseVersionHash) }

    public var description: String { "\(type(of: self))(\(name))" }
}
