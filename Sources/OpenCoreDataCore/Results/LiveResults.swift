import Foundation

/// A request's results kept equal to a fresh fetch in one context: the engine behind
/// ``FetchedResultsController`` and ``ManagedObjectContext/results(for:sectionNameKeyPath:)``.
/// Owned by the context's queue: it is made, read and told about changes there.
///
/// After every ``GraphChange`` it is told about, the results are what `fetch` would return now
/// (the context's unsaved changes included), in sections, and the difference from before is
/// reported as a ``ResultsUpdate``. Where only the named objects can have changed — the predicate
/// reads only the fetched object's own attributes, there is no fetch window, sections come from
/// the object itself — the named objects are re-examined and merged into the rest, which keep
/// their order (O(n + k log k) for k named objects). Otherwise the request is fetched again
/// and compared.
package final class LiveResults: GraphObserver {
    /// One result: the object, what it was ordered by and its section when it was placed. A
    /// class: results are copied whole at every change, one reference each.
    package final class Entry {
        package let object: ManagedObject
        package let key: ResultOrder.Key
        package let section: String
        // The two marks are read once per result at every change: without the run-time
        // exclusivity check, which would cost more than the loops. Only the context's queue
        // touches them, and no access is held across a call.
        /// During one change: the object's old entry, to be replaced or dropped.
        @exclusivity(unchecked) package var isLeaving = false
        /// During one change: an entry placed by this change.
        @exclusivity(unchecked) package var isJoining = false

        init(object: ManagedObject, key: ResultOrder.Key, section: String) {
            self.object = object
            self.key = key
            self.section = section
        }
    }

    /// A run of results sharing a section name.
    package struct Section: Equatable {
        package var name: String
        package var start: Int
        package var count: Int
    }

    package let context: ManagedObjectContext
    private let fetch: () throws -> [ManagedObject]
    private let order: ResultOrder
    private let entity: EntityDescription
    private let includesSubentities: Bool
    private let predicate: BoundPredicate?
    private let sectionName: ((ManagedObject) -> String)?
    /// Whether only the named objects of a change can enter, leave or move.
    private let incremental: Bool

    package private(set) var entries: [Entry] = []
    package private(set) var sections: [Section] = []
    /// Each result's entry by object, to find the entries a change names without a table of
    /// every object per change.
    private var entryByObject: [ObjectIdentifier: Entry] = [:]
    /// The error of the last fetch made to follow a change (the results were left as they were).
    package private(set) var lastError: (any Error)?
    /// Called after each change that altered the results (on the context's queue).
    package var onUpdate: ((ResultsUpdate) -> Void)?
    private var isObserving = false

    /// Prepares results for a request (on the context's queue); `sectionNameKeyPath` names an
    /// attribute or a key path through to-one relationships, `sectionName` computes the name
    /// instead. Throws what the fetch would throw for a bad request.
    package init<T>(request: FetchRequest<T>, context: ManagedObjectContext,
                                        sectionNameKeyPath: String?, sectionName: ((ManagedObject) -> String)?) throws {
        guard request.resultType == .managedObjectResultType else {
            throw CoreDataError(.coreData, """
                Live results need managed objects: the request's resultType is \(request.resultType). Use a \
                FetchRequest of a managed object class.
                """)
        }
        guard !(request.sortDescriptors ?? []).isEmpty else {
            throw CoreDataError(.coreData, """
                A fetched results controller needs a fetch request with at least one sort descriptor (as in \
                Core Data): set request.sortDescriptors.
                """)
        }
        let plan = try context.plan(for: request)
        self.context = context
        self.entity = plan.entity
        self.includesSubentities = request.includesSubentities
        self.predicate = plan.storeRequest.predicate
        self.order = ResultOrder(plan.storeRequest.sort, entity: plan.storeRequest.entity)
        self.fetch = { [unowned context] in try context.fetchObjects(request) }
        var ownSection = true
        if let sectionName {
            self.sectionName = sectionName
        } else if let keyPath = sectionNameKeyPath {
            let keys = keyPath.split(separator: ".").map(String.init)
            try Self.checkSectionKeyPath(keys, from: plan.entity)
            ownSection = keys.count == 1
            self.sectionName = { object in Self.sectionName(of: object.value(forKeyPath: keys)) }
        } else {
            self.sectionName = nil
        }
        self.incremental = ownSection && plan.limit == 0 && plan.offset == 0 && !(plan.storeRequest.predicate?.followsRelationships ?? false)
    }

    /// Fetches the results and starts following the context's changes. Throws for a bad
    /// request or sections out of order.
    package func start() throws {
        let objects = try fetch()
        let fresh = objects.map(entry(for:))
        let grouped = try group(fresh, checked: true)
        entries = fresh
        sections = grouped
        entryByObject = Self.index(fresh)
        lastError = nil
        if !isObserving {
            context.addGraphObserver(self)
            isObserving = true
        }
    }

    /// Stops following changes.
    package func stop() {
        if isObserving { context.removeGraphObserver(self) }
        isObserving = false
    }

    // MARK: - Following changes

    package func graphDidChange(_ change: GraphChange, in context: ManagedObjectContext) {
        var updated = Set<ObjectIdentifier>()    // named as changed: reported as updates
        var named = Set<ObjectIdentifier>()      // to be placed again
        var candidates: [ManagedObject] = []
        for object in change.objects where named.insert(ObjectIdentifier(object)).inserted {
            updated.insert(ObjectIdentifier(object))
            if isOfEntity(object.entity) { candidates.append(object) }
        }
        for object in change.rechecked where named.insert(ObjectIdentifier(object)).inserted {
            if isOfEntity(object.entity) { candidates.append(object) }
        }
        let fresh: [Entry]
        let onlyNamed = !(change.everything || !incremental)
        if !onlyNamed {
            guard !(change.isEmpty) else { return }
            do { fresh = try fetch().map(entry(for:)) } catch {
                lastError = error
                return
            }
        } else {
            for id in change.objectIDs where isOfEntity(id.entity) {
                // Changed elsewhere and perhaps not registered here: it may start to match now
                // (Core Data's controller misses these; see DEVIATIONS.md).
                let object = context.object(with: id)
                if named.insert(ObjectIdentifier(object)).inserted {
                    updated.insert(ObjectIdentifier(object))
                    candidates.append(object)
                }
            }
            guard !candidates.isEmpty else { return }
            var joining: [Entry] = []
            for object in candidates {
                entryByObject[ObjectIdentifier(object)]?.isLeaving = true
                if isMember(object) {
                    let placed = entry(for: object)
                    placed.isJoining = true
                    joining.append(placed)
                }
            }
            joining.sort { order.precedes($0.key, $1.key) }
            fresh = merge(joining, into: entries)
            for object in candidates { entryByObject.removeValue(forKey: ObjectIdentifier(object)) }
            for entry in joining { entryByObject[ObjectIdentifier(entry.object)] = entry }
        }
        let grouped = (try? group(fresh, checked: false)) ?? []
        let update = ResultsUpdate(old: entries, oldSections: sections, new: fresh, newSections: grouped,
                                   named: named, updated: updated, onlyNamed: onlyNamed, order: order)
        if onlyNamed {
            for entry in fresh where entry.isJoining { entry.isJoining = false }
        } else {
            entryByObject = Self.index(fresh)
        }
        entries = fresh
        sections = grouped
        lastError = nil
        if !update.isEmpty { onUpdate?(update) }
    }

    private static func index(_ entries: [Entry]) -> [ObjectIdentifier: Entry] {
        var index: [ObjectIdentifier: Entry] = [:]
        index.reserveCapacity(entries.count)
        for entry in entries { index[ObjectIdentifier(entry.object)] = entry }
        return index
    }

    private func isOfEntity(_ other: EntityDescription) -> Bool {
        if other === entity || other.name == entity.name && other.managedObjectModel === entity.managedObjectModel { return true }
        return includesSubentities && other.isKindOf(entity: entity)
    }

    /// Whether the object belongs in the results now (a fault is loaded to tell).
    private func isMember(_ object: ManagedObject) -> Bool {
        guard object.belongs(to: context), !object.isDeletedFlag else { return false }
        object.willAccessValue()
        guard !object.isDeletedFlag, !object.isInaccessibleFlag, object.belongs(to: context) else { return false }
        return predicate.map { context.evaluate($0, on: object, as: entity) } ?? true
    }

    private func entry(for object: ManagedObject) -> Entry {
        object.willAccessValue()
        return Entry(object: object, key: order.key(of: object), section: sectionName?(object) ?? "")
    }

    /// The old results without their leaving entries, with the ordered `joining` entries placed
    /// among them, in one pass: each place is found by binary search in the old results (still
    /// ordered by the keys their entries hold) and the runs between are copied (O(n + k log n)
    /// for k joining).
    private func merge(_ joining: [Entry], into old: [Entry]) -> [Entry] {
        var result: [Entry] = []
        result.reserveCapacity(old.count + joining.count)
        var copied = 0
        func copy(upTo end: Int) {
            for index in copied ..< end where !old[index].isLeaving { result.append(old[index]) }
            copied = end
        }
        for entry in joining {
            // The first old entry this one precedes (keys never tie: the ID breaks ties).
            var low = copied, high = old.count
            while low < high {
                let middle = (low + high) / 2
                if order.precedes(entry.key, old[middle].key) { high = middle } else { low = middle + 1 }
            }
            copy(upTo: low)
            result.append(entry)
        }
        copy(upTo: old.count)
        return result
    }

    // MARK: - Sections

    /// Runs of equal section names. With `checked`, a name that comes back after another section
    /// is an error (the sort does not order the sections), as in Core Data.
    func group(_ entries: [Entry], checked: Bool) throws -> [Section] {
        // Without section names there is one section, even when empty (as in Core Data).
        guard sectionName != nil else { return [Section(name: "", start: 0, count: entries.count)] }
        var sections: [Section] = []
        var seen = Set<String>()
        for index in entries.indices {
            let entry = entries[index]
            if let last = sections.last, last.name == entry.section {
                sections[sections.count - 1].count += 1
                continue
            }
            if checked && !seen.insert(entry.section).inserted {
                throw CoreDataError(.coreData, """
                    The fetched object at index \(index) has an out of order section name '\(entry.section)'. \
                    Objects must be sorted by section name: make the first sort descriptor order the section \
                    key path.
                    """)
            }
            sections.append(Section(name: entry.section, start: index, count: 1))
        }
        return sections
    }

    /// The section name of a value, as Core Data writes it: strings as they are, numbers in
    /// decimal, nothing as "".
    static func sectionName(of value: Any?) -> String {
        switch value {
        case nil: ""
        case let string as String: string
        case let number as NSNumber: number.stringValue
        case let value?: String(describing: value)
        }
    }

    private static func checkSectionKeyPath(_ keys: [String], from entity: EntityDescription) throws {
        var current = entity
        for (index, key) in keys.enumerated() {
            if let relationship = current.relationshipsByName[key], !relationship.isToMany, index < keys.count - 1,
               let destination = relationship.destinationEntity {
                current = destination
                continue
            }
            guard index == keys.count - 1,
                  current.attributesByName[key] != nil || current.relationshipsByName[key].map({ !$0.isToMany }) == true else {
                throw CoreDataError(.coreData, """
                    The section name key path '\(keys.joined(separator: "."))' does not name an attribute of \
                    \(entity.name) (or of a to-one destination): '\(key)' is not one of \(current.name)'s.
                    """, key: key)
            }
        }
    }
}

extension ManagedObject {
    /// The value at a key path through to-one relationships (nil when a step is nil).
    fileprivate func value(forKeyPath keys: [String]) -> Any? {
        var current: ManagedObject = self
        for (index, key) in keys.enumerated() {
            let value = current.value(forKey: key)
            if index == keys.count - 1 { return value }
            guard let next = value as? ManagedObject else { return nil }
            current = next
        }
        return nil
    }
}
