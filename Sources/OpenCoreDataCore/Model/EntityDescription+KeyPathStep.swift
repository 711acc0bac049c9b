/// One step of a key path from an entity (`folder` of `folder.title`): what the name is there.
package enum KeyPathStep {
    /// A to-one relationship: its slot in the entity's values and its destination.
    case toOne(slot: Int, destination: EntityDescription)
    /// A to-many relationship (a key path cannot go on through it without ANY, SUBQUERY, …).
    case toMany(RelationshipDescription)
    /// No relationship of that name (an attribute, or nothing).
    case notARelationship
}

extension EntityDescription {
    /// What `name` is as a step of a key path from this entity, in a frozen model: the walk of
    /// to-one key paths shared by sort keys and string predicates (each says in its own words why
    /// a step cannot be taken). Typed predicates walk their own way: they are translated before
    /// the entity is in a model, where relationships have no slots yet.
    package func keyPathStep(_ name: String) -> KeyPathStep {
        guard let relationship = relationshipsByName[name] else { return .notARelationship }
        if relationship.isToMany { return .toMany(relationship) }
        guard let slot = toOneSlotByName[name], let destination = relationship.destinationEntity else { return .notARelationship }
        return .toOne(slot: slot, destination: destination)
    }
}
