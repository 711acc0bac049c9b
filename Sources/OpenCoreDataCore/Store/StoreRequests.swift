import Foundation

/// A sort key resolved against an entity: one of its attributes, or an attribute at the end of
/// a path of to-one relationships (`folder.title`).
package struct StoreSortKey: Sendable {
    /// One to-one relationship of a sort key's path: its slot in the entity before it, and its
    /// destination (where the next slot is).
    package struct Hop: Sendable {
        package var slot: Int
        package var destination: EntityDescription

        package init(slot: Int, destination: EntityDescription) {
            self.slot = slot
            self.destination = destination
        }
    }

    /// The attribute's slot, in the entity at the end of `path` (the fetched entity without one).
    package var slot: Int
    package var ascending: Bool
    package var comparator: SortComparator = .binary
    /// The to-one relationships followed before the attribute; empty for the entity's own.
    package var path: [Hop] = []

    package init(slot: Int, ascending: Bool, comparator: SortComparator = .binary, path: [Hop] = []) {
        self.slot = slot
        self.ascending = ascending
        self.comparator = comparator
        self.path = path
    }

    /// The path and attribute slot of a sort descriptor's key for a fetch of `entity`: an
    /// attribute (`title`) or an attribute through to-one relationships (`folder.title`).
    package static func resolve(_ key: String, in entity: EntityDescription) throws(CoreDataError) -> (path: [Hop], slot: Int) {
        var path: [Hop] = []
        var current = entity
        let names = key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        for name in names.dropLast() {
            let slot: Int, destination: EntityDescription
            switch current.keyPathStep(name) {
            case .toOne(let toOneSlot, let toOneDestination): (slot, destination) = (toOneSlot, toOneDestination)
            case .toMany:
                throw CoreDataError(.coreData, """
                    The sort descriptor uses the key path '\(key)', which goes through the to-many \
                    relationship '\(name)' of \(current.name); a fetch can sort only by attributes of the \
                    entity or of its to-one relationships' destinations (Core Data refuses it too). Sort by an \
                    attribute of \(current.name), or keep the value you want to sort by in one.
                    """, key: key)
            case .notARelationship:
                let known = current.relationshipsByName.values.filter { !$0.isToMany }.map(\.name).sorted().joined(separator: ", ")
                throw CoreDataError(.coreData, """
                    The sort descriptor uses the key path '\(key)', but '\(name)' is not a to-one relationship \
                    of \(current.name)\(known.isEmpty ? "" : "; its to-one relationships are: \(known)").
                    """, key: key)
            }
            path.append(Hop(slot: slot, destination: destination))
            current = destination
        }
        guard let slot = current.slotByName[names.last ?? key] else {
            let known = current.storedAttributes.map(\.name).joined(separator: ", ")
            throw CoreDataError(.coreData, """
                The sort descriptor uses the key '\(key)', which the entity \(current.name) does not have. Its \
                attributes are: \(known).
                """, key: key)
        }
        return (path, slot)
    }

    /// The type of the attribute sorted by, for a fetch of `entity`.
    package func attributeType(from entity: EntityDescription) -> AttributeType {
        (path.last?.destination ?? entity).storedAttributes[slot].attributeType
    }

    /// The value sorted by, for a row (its values in the fetched entity's slot order): through
    /// the path with `subject`'s graph; nil where a relationship on the way has no destination.
    package func value(_ subject: EvaluationSubject) -> ManagedValue {
        guard !path.isEmpty else { return subject.values[slot] }
        var current = subject
        for hop in path { current = current.destination(slot: hop.slot, as: hop.destination) }
        return current.values[slot]
    }

    /// Whether the values of the keys `a` (taken by ``value(_:)``) come before `b`'s; `nil` when
    /// they are the same.
    package static func precedes(_ a: [ManagedValue], _ b: [ManagedValue], by keys: [StoreSortKey]) -> Bool? {
        for (index, key) in keys.enumerated() {
            let order = key.comparator.compare(a[index], b[index])
            if order == .orderedSame { continue }
            return key.ascending ? order == .orderedAscending : order == .orderedDescending
        }
        return nil
    }

    /// `rows` (in any order) in the order of `keys`, ties by primary key as the SQL's `Z_PK`;
    /// `graph` reads the destinations of keys through relationships. Each row's sort values are
    /// taken once.
    package static func sorted(_ rows: [StoreRow], of entity: EntityDescription, by keys: [StoreSortKey], storeNumber: UInt32,
                               graph: (any GraphResolver)?) -> [StoreRow] {
        guard !keys.isEmpty else { return rows }
        let decorated = rows.map { row in (values: values(of: row, entity: entity, keys: keys, storeNumber: storeNumber, graph: graph), row: row) }
        return decorated.sorted { a, b in
            precedes(a.values, b.values, by: keys) ?? (a.row.primaryKey < b.row.primaryKey)
        }.map(\.row)
    }

    /// The values a row of a fetch of `entity` is sorted by (see ``value(_:)``).
    package static func values(of row: StoreRow, entity: EntityDescription, keys: [StoreSortKey], storeNumber: UInt32,
                               graph: (any GraphResolver)?) -> [ManagedValue] {
        let values = entity.adapt(row.snapshot.values, from: row.entity)
        guard keys.contains(where: { !$0.path.isEmpty }) else { return keys.map { values[$0.slot] } }
        let subject = EvaluationSubject(values: values, primaryKey: row.primaryKey,
                                        id: .permanent(row.entity, storeNumber: storeNumber, primaryKey: row.primaryKey), graph: graph)
        return keys.map { $0.value(subject) }
    }
}

/// A fetch as a store sees it: entity, resolved predicate and order, window.
package struct StoreFetchRequest: Sendable {
    package var entity: EntityDescription
    package var predicate: BoundPredicate?
    package var sort: [StoreSortKey]
    package var limit: Int
    package var offset: Int
    package var includesSubentities: Bool
    /// The identifiers of the stores to read (`nil`: every store that holds the entity).
    package var storeIdentifiers: [String]?

    package init(entity: EntityDescription, predicate: BoundPredicate? = nil, sort: [StoreSortKey] = [], limit: Int = 0, offset: Int = 0,
                 includesSubentities: Bool = true, storeIdentifiers: [String]? = nil) {
        self.entity = entity
        self.predicate = predicate
        self.sort = sort
        self.limit = limit
        self.offset = offset
        self.includesSubentities = includesSubentities
        self.storeIdentifiers = storeIdentifiers
    }
}

/// Everything one context save writes, applied by a store in one transaction.
package struct StoreSaveRequest: Sendable {
    package struct Insert: Sendable {
        package var entity: EntityDescription
        package var primaryKey: Int64
        package var values: [ManagedValue]
    }
    package struct Update: Sendable {
        package var entity: EntityDescription
        package var primaryKey: Int64
        /// The version the context read; the row must still have it.
        package var expectedVersion: Int64
        /// The slots to write (all slots for `.overwrite`-style full writes).
        package var slots: [Int]
        package var values: [ManagedValue]
        /// Every changed slot, to-many ones (`valueSlotCount + index`) included: for history.
        package var changedSlots: [Int] = []

        package init(entity: EntityDescription, primaryKey: Int64, expectedVersion: Int64, slots: [Int], values: [ManagedValue],
                     changedSlots: [Int] = []) {
            self.entity = entity
            self.primaryKey = primaryKey
            self.expectedVersion = expectedVersion
            self.slots = slots
            self.values = values
            self.changedSlots = changedSlots
        }
    }
    package struct Delete: Sendable {
        package var entity: EntityDescription
        package var primaryKey: Int64
        package var expectedVersion: Int64
        /// The object's last values, for history tombstones (`nil` when unknown).
        package var values: [ManagedValue]? = nil
    }

    /// A row added to or removed from a many-to-many relationship.
    package struct JoinChange: Sendable, Hashable {
        package var relationship: RelationshipDescription
        package var source: Int64
        package var destination: Int64
        package var isInsert: Bool

        package static func == (a: JoinChange, b: JoinChange) -> Bool {
            a.relationship === b.relationship && a.source == b.source && a.destination == b.destination && a.isInsert == b.isInsert
        }
        package func hash(into hasher: inout Hasher) {
            hasher.combine(ObjectIdentifier(relationship))
            hasher.combine(source)
            hasher.combine(destination)
        }
    }

    /// The new order of the members of an ordered to-many relationship.
    package struct OrderChange: Sendable {
        package var relationship: RelationshipDescription
        package var source: Int64
        package var members: [Int64]
    }

    package var inserts: [Insert] = []
    package var updates: [Update] = []
    package var deletes: [Delete] = []
    /// Many-to-many changes, from one side of each pair.
    package var joins: [JoinChange] = []
    /// Ordered relationships whose order or membership changed.
    package var orders: [OrderChange] = []
    /// Who saves, for persistent history.
    package var author = HistoryAuthor()
    /// Whether the save is recorded in persistent history (not when a store is copied: the
    /// copy receives the source's history instead).
    package var recordsHistory = true

    package init() {}
    package var isEmpty: Bool { inserts.isEmpty && updates.isEmpty && deletes.isEmpty && joins.isEmpty }

    /// Whether the row (`entity`, `primaryKey`) comes before (`otherEntity`, `otherKey`) in the
    /// order every save writes and holds rows in (table, then key): two saves that take the same
    /// rows in one order wait for each other instead of deadlocking.
    package static func writesBefore(_ entity: EntityDescription, _ primaryKey: Int64,
                                     _ otherEntity: EntityDescription, _ otherKey: Int64) -> Bool {
        (entity.rootEntity.name, primaryKey) < (otherEntity.rootEntity.name, otherKey)
    }
}

/// A row whose version changed (or that vanished) since a context read it.
package struct StoreConflict: Sendable {
    package var entity: EntityDescription
    package var primaryKey: Int64
    package var expectedVersion: Int64
    /// The row as it is in the store now; `nil` when it was deleted.
    package var current: RowSnapshot?

    package init(entity: EntityDescription, primaryKey: Int64, expectedVersion: Int64, current: RowSnapshot?) {
        self.entity = entity
        self.primaryKey = primaryKey
        self.expectedVersion = expectedVersion
        self.current = current
    }
}

/// How a store's part of a save ended.
package enum StoreSaveOutcome: Sendable {
    /// Written and committed.
    case committed
    /// Rows changed underneath; nothing was written.
    case conflicts([StoreConflict])
    /// `beforeCommit` said no; nothing was written.
    case withdrawn

    /// The outcome of `body`, run inside a transaction the caller began: committed when the
    /// outcome is ``committed``, rolled back when it is not or when `body` (or the commit) throws
    /// — a failed rollback then leaves the first error to the caller. The one way a store's
    /// save transaction ends.
    package static func settling(commit: () throws -> Void, rollback: () throws -> Void,
                                 _ body: () throws -> StoreSaveOutcome) throws -> StoreSaveOutcome {
        do {
            let outcome = try body()
            if case .committed = outcome { try commit() } else { try rollback() }
            return outcome
        } catch {
            try? rollback()
            throw error
        }
    }
}

/// How many rows a batch operation touched, and which when asked.
package struct BatchOutcome: Sendable {
    package var count: Int
    package var keys: [Int64]?
    package init(count: Int, keys: [Int64]?) {
        self.count = count
        self.keys = keys
    }
}

/// Who made a change, as persistent history records it.
package struct HistoryAuthor: Sendable {
    package var author: String?
    package var contextName: String?
    package var processID: String? = HistoryAuthor.processName
    package var bundleID: String? = HistoryAuthor.bundleIdentifier

    // Looked up once per process (every save makes an author).
    private static let processName = ProcessInfo.processInfo.processName
    private static let bundleIdentifier = Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName

    package init(author: String? = nil, contextName: String? = nil) {
        self.author = author
        self.contextName = contextName
    }

    /// The author of a transaction another store recorded.
    package init(of transaction: HistoryTransactionRecord) {
        author = transaction.author
        contextName = transaction.contextName
        processID = transaction.processID
        bundleID = transaction.bundleID
    }
}

/// One change as a store records it.
package struct HistoryChangeRecord: Sendable {
    package var changeID: Int64
    package var changeType: Int
    package var entity: EntityDescription
    package var primaryKey: Int64
    package var updatedNames: Set<String>?
    package var tombstone: [String: ManagedValue]?

    package init(changeID: Int64, changeType: Int, entity: EntityDescription, primaryKey: Int64, updatedNames: Set<String>?,
                 tombstone: [String: ManagedValue]?) {
        self.changeID = changeID
        self.changeType = changeType
        self.entity = entity
        self.primaryKey = primaryKey
        self.updatedNames = updatedNames
        self.tombstone = tombstone
    }
}

/// One transaction as a store records it.
package struct HistoryTransactionRecord: Sendable {
    package var number: Int64
    package var timestamp: Date
    package var author: String?
    package var contextName: String?
    package var processID: String?
    package var bundleID: String?
    package var changes: [HistoryChangeRecord]

    package init(number: Int64, timestamp: Date, author: String?, contextName: String?, processID: String?, bundleID: String?,
                 changes: [HistoryChangeRecord]) {
        self.number = number
        self.timestamp = timestamp
        self.author = author
        self.contextName = contextName
        self.processID = processID
        self.bundleID = bundleID
        self.changes = changes
    }
}

extension EntityDescription {
    /// The property names of changed slots (attributes, to-ones, then to-manys by index).
    package func names(ofChangedSlots slots: [Int]) -> Set<String> {
        var names = Set<String>()
        for slot in slots {
            if slot < storedAttributes.count { names.insert(storedAttributes[slot].name) }
            else if slot < valueSlotCount { names.insert(toOneRelationships[slot - storedAttributes.count].name) }
            else if slot - valueSlotCount < toManyRelationships.count { names.insert(toManyRelationships[slot - valueSlotCount].name) }
        }
        return names
    }

    /// The slots of the named properties: the inverse of ``names(ofChangedSlots:)``.
    package func changedSlots(ofNames names: Set<String>) -> [Int] {
        var slots: [Int] = []
        for (index, attribute) in storedAttributes.enumerated() where names.contains(attribute.name) { slots.append(index) }
        for (index, relationship) in toOneRelationships.enumerated() where names.contains(relationship.name) {
            slots.append(storedAttributes.count + index)
        }
        for (index, relationship) in toManyRelationships.enumerated() where names.contains(relationship.name) { slots.append(valueSlotCount + index) }
        return slots
    }
}

extension CoreDataError {
    /// 1600 for a batch delete that a deny rule refuses (the same in every store).
    package static func batchDeleteDenied(_ entity: EntityDescription, _ relationship: RelationshipDescription, holding count: Int) -> CoreDataError {
        CoreDataError(.validationRelationshipDeniedDelete,
                      """
                          The batch delete of \(entity.name) is refused: the relationship \
                          '\(relationship.name)' has the deny rule and still holds \(count) object(s). Delete \
                          or detach them first.
                          """,
                      key: relationship.name)
    }

    /// Throws 134301 when history after transaction `number` was deleted: transactions are
    /// numbered without gaps, so the oldest one left (or, with none left, the last one issued)
    /// tells.
    package static func checkHistoryToken(_ number: Int64, oldest: Int64?, last: Int64) throws(CoreDataError) {
        guard oldest.map({ $0 > number + 1 }) ?? (last > number) else { return }
        throw CoreDataError(.persistentHistoryTokenExpired, """
            The history token (transaction \(number)) refers to history that was deleted. Fetch the history \
            from the start (fetchHistory(after: nil)) and refetch your objects.
            """)
    }
}
