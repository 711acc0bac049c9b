/// One change a store records in persistent history, as the shared store rules hand it to an
/// engine: every store records the same changes for the same save or batch request and differs
/// only in how it keeps them.
package struct StoreHistoryChange: Sendable {
    package var type: PersistentHistoryChange.ChangeType
    package var entity: EntityDescription
    package var primaryKey: Int64
    /// For updates: the changed slots (attributes, to-ones, then to-manys by index).
    package var changedSlots: [Int]?
    /// For deletions: the row's last values (in the entity's slots), for the tombstone; `nil` when
    /// unknown.
    package var values: [ManagedValue]?

    package init(type: PersistentHistoryChange.ChangeType, entity: EntityDescription, primaryKey: Int64, changedSlots: [Int]? = nil,
                 values: [ManagedValue]? = nil) {
        self.type = type
        self.entity = entity
        self.primaryKey = primaryKey
        self.changedSlots = changedSlots
        self.values = values
    }

    /// The names of the changed properties (updates only).
    package var updatedNames: Set<String>? {
        guard type == .update else { return nil }
        return changedSlots.map { entity.names(ofChangedSlots: $0) }
    }

    /// The values a deletion keeps in history, one per tombstone attribute of the entity, in
    /// ``EntityDescription/tombstoneAttributes`` order (`.null` where unknown); empty for other
    /// changes.
    package var tombstoneValues: [ManagedValue] {
        guard type == .delete else { return [] }
        return entity.tombstoneAttributes.map { attribute in
            guard let values, let slot = entity.slotByName[attribute.name], slot < values.count else { return .null }
            return values[slot]
        }
    }

    /// A change as another store recorded it, to be recorded again (a store's copy receives its
    /// history): the changed slots of an update, a deletion's tombstone values in their slots.
    package init?(_ record: HistoryChangeRecord) {
        guard let type = PersistentHistoryChange.ChangeType(rawValue: record.changeType) else { return nil }
        let entity = record.entity
        var values: [ManagedValue]?
        if let tombstone = record.tombstone {
            var slots = [ManagedValue](repeating: .null, count: entity.valueSlotCount)
            for (name, value) in tombstone { if let slot = entity.slotByName[name], slot < slots.count { slots[slot] = value } }
            values = slots
        }
        self.init(type: type, entity: entity, primaryKey: record.primaryKey,
                  changedSlots: record.updatedNames.map { entity.changedSlots(ofNames: $0) }, values: values)
    }
}
