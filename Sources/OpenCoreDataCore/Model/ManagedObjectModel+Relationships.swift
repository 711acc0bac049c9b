extension ManagedObjectModel {
    /// Connects every relationship to its destination entity and inverse, completing an inverse
    /// declared on one side only and finding it when exactly one relationship points back.
    /// Throws a clear error for an unknown destination or inverse, or an inverse that does not
    /// point back.
    func resolveRelationships() throws(CoreDataError) {
        let relationships = entities.flatMap { entity in entity.properties.compactMap { $0 as? RelationshipDescription } }
        // Destinations and inverses assigned as objects: their names now (code may have named
        // an entity after assigning it), and they must be this model's.
        for relationship in relationships {
            guard let source = relationship.entity else { continue }
            if let assigned = relationship.assignedDestination {
                guard entitiesByName[assigned.name] === assigned else {
                    throw CoreDataError(.coreData, """
                        The relationship '\(relationship.name)' of \(source.name) has as destination an entity \
                        '\(assigned.name)' that is not in the model. Add that entity to the model's entities.
                        """)
                }
                relationship.destinationEntityName = assigned.name
            }
            if let assigned = relationship.assignedInverse {
                guard let owner = assigned.entity, entitiesByName[owner.name] === owner else {
                    throw CoreDataError(.coreData, """
                        The relationship '\(relationship.name)' of \(source.name) has as inverse a \
                        relationship '\(assigned.name)' of no entity in the model. Add it to its destination's \
                        properties.
                        """)
                }
                relationship.inverseName = assigned.name
            }
        }
        for relationship in relationships {
            relationship.assignedDestination = nil
            relationship.assignedInverse = nil
        }
        for relationship in relationships {
            guard let source = relationship.entity else { continue }
            guard let destination = entitiesByName[relationship.destinationEntityName] else {
                throw CoreDataError(.coreData, """
                    The relationship '\(relationship.name)' of \(source.name) points to the entity \
                    '\(relationship.destinationEntityName)', which is not in the model. Add it to the model.
                    """)
            }
            relationship.frozenDestination = destination
            if relationship.inverseName == nil, let keyPath = relationship.inverseKeyPath {
                guard let name = destination.name(for: keyPath) else {
                    throw CoreDataError(.coreData, """
                        The inverse of '\(relationship.name)' on \(source.name) is not a relationship of \
                        \(destination.name).
                        """)
                }
                relationship.inverseName = name
            }
        }
        // Inverses named on one side only are completed on the other.
        for relationship in relationships {
            guard let name = relationship.inverseName, let source = relationship.entity, let destination = relationship.destinationEntity else {
                continue
            }
            guard let inverse = destination.relationshipsByName[name] else {
                throw CoreDataError(.coreData, """
                    The inverse '\(name)' of the relationship '\(relationship.name)' on \(source.name) is not \
                    a relationship of \(destination.name).
                    """)
            }
            guard let back = inverse.destinationEntityNameResolved(in: self), source.isKindOf(entity: back) || back.isKindOf(entity: source) else {
                throw CoreDataError(.coreData, """
                    The relationship '\(name)' of \(destination.name) cannot be the inverse of \
                    '\(relationship.name)' on \(source.name): it points to \(inverse.destinationEntityName).
                    """)
            }
            if let other = inverse.inverseName, other != relationship.name {
                throw CoreDataError(.coreData, """
                    The relationships '\(relationship.name)' of \(source.name) and '\(name)' of \
                    \(destination.name) disagree about their inverses ('\(name)' names '\(other)').
                    """)
            }
            inverse.inverseName = relationship.name
        }
        // Without a declared inverse: the only relationship pointing back, when it has none either.
        for relationship in relationships where relationship.inverseName == nil {
            guard let source = relationship.entity, let destination = relationship.destinationEntity else { continue }
            let candidates = destination.allProperties.compactMap { $0 as? RelationshipDescription }.filter { candidate in
                candidate !== relationship && candidate.inverseName == nil && candidate.destinationEntityName == source.name
            }
            let pointingHere = relationships.filter { $0.destinationEntity === destination && $0.entity === source && $0.inverseName == nil }
            if candidates.count == 1, pointingHere.count == 1 {
                candidates[0].inverseName = relationship.name
                relationship.inverseName = candidates[0].name
            }
        }
        for relationship in relationships {
            if let name = relationship.inverseName { relationship.frozenInverse = relationship.destinationEntity?.relationshipsByName[name] }
            if relationship.isToMany, relationship.inverseRelationship?.isToMany ?? true, relationship.isTransient == false,
               relationship.inverseRelationship == nil {
                throw CoreDataError(.coreData, """
                    The to-many relationship '\(relationship.name)' of \(relationship.entity?.name ?? "?") has \
                    no inverse. Declare one (@Relationship(inverse:) or inverseName): stores keep to-many \
                    relationships through their inverse.
                    """)
            }
        }
    }
}

extension RelationshipDescription {
    fileprivate func destinationEntityNameResolved(in model: ManagedObjectModel) -> EntityDescription? {
        destinationEntity ?? model.entitiesByName[destinationEntityName]
    }
}
