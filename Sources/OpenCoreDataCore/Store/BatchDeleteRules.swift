/// What a store does for a batch delete that follows delete rules: read, detach and remove rows.
/// The rules themselves — which relationships to follow, deny, nullify, cascade, rows reached
/// twice — are `BatchDeleteRules`'s, so every store applies them alike.
///
/// Keys are primary keys of the table of a hierarchy's root entity. A store runs the whole
/// delete in one transaction (or on a copy of its state), so that a deny leaves it untouched.
package protocol BatchDeleteRows {
    /// The rows among `keys` that exist, grouped by their own entity (delete rules are per
    /// entity), groups in the order their first row appears. A store that records history
    /// takes what it needs of the rows here, before any relationship is detached.
    mutating func rows(_ keys: [Int64], of root: EntityDescription) throws -> [(entity: EntityDescription, keys: [Int64])]
    /// The keys of the destinations of `relationship` from the rows `keys` of `entity`.
    mutating func destinations(of relationship: RelationshipDescription, from keys: [Int64], of entity: EntityDescription) throws -> [Int64]
    /// Detaches the destinations of `relationship` from the rows `keys` of `entity`: clears the
    /// to-one inverse that points at them (bumping the destinations' versions) or removes their
    /// many-to-many pairs. A to-one whose inverse is a to-many needs nothing: its key is in the
    /// deleted row.
    mutating func detach(_ relationship: RelationshipDescription, from keys: [Int64], of entity: EntityDescription) throws
    /// Removes the rows `keys` of the root entity's table.
    mutating func remove(_ keys: [Int64], of root: EntityDescription) throws
}

/// The delete rules of a batch delete (`BatchDeleteRequest` on entities with relationships), as
/// Core Data applies them in the store: deny refuses the request (1600) while a deleted row has
/// destinations; nullify detaches the destinations; cascade detaches and deletes them, and their
/// own rules apply in turn; no action leaves them as they are. A row reached twice (cascades
/// can loop) is deleted once.
package enum BatchDeleteRules {
    /// Deletes the rows `keys` of `root`'s table and whatever their rules reach.
    package static func delete(_ keys: [Int64], of root: EntityDescription, in rows: inout some BatchDeleteRows) throws {
        var seen: [ObjectIdentifier: Set<Int64>] = [:]
        try delete(keys, of: root, in: &rows, seen: &seen)
    }

    private static func delete(_ keys: [Int64], of root: EntityDescription, in rows: inout some BatchDeleteRows,
                               seen: inout [ObjectIdentifier: Set<Int64>]) throws {
        let fresh = keys.filter { seen[ObjectIdentifier(root), default: []].insert($0).inserted }
        guard !fresh.isEmpty else { return }
        for (entity, entityKeys) in try rows.rows(fresh, of: root) {
            for relationship in entity.toOneRelationships + entity.toManyRelationships where relationship.deleteRule != .noAction {
                guard let destination = relationship.destinationEntity else { continue }
                let destinations = try rows.destinations(of: relationship, from: entityKeys, of: entity)
                if relationship.deleteRule == .deny, !destinations.isEmpty {
                    throw CoreDataError.batchDeleteDenied(entity, relationship, holding: destinations.count)
                }
                try rows.detach(relationship, from: entityKeys, of: entity)
                if relationship.deleteRule == .cascade {
                    try delete(destinations, of: destination.rootEntity, in: &rows, seen: &seen)
                }
            }
        }
        try rows.remove(fresh, of: root)
    }
}
