import Foundation

/// What every ``FetchedResultsController`` offers whatever its result type: the instance its
/// delegate is handed. Use it on the context's queue (as Core Data's controller), from
/// `perform` blocks or on the main queue for a main-queue context.
open class AnyFetchedResultsController {
    /// The context the results come from and whose changes they follow.
    public let managedObjectContext: ManagedObjectContext
    /// The key path whose value names each object's section, or `nil` for one section.
    public let sectionNameKeyPath: String?
    /// Accepted for Core Data compatibility. Ours keeps no section cache on disk: results are
    /// fetched by ``performFetch()`` and then followed in memory (see DEVIATIONS.md).
    public let cacheName: String?

    /// Told about changes. The controller follows its context's changes from ``performFetch()``
    /// on, with or without a delegate.
    public weak var delegate: (any FetchedResultsControllerDelegate)? {
        didSet { delegateTakesSnapshots = nil }
    }

    /// Whether the delegate implements the snapshot callback (learned at the first change).
    package var delegateTakesSnapshots: Bool?
    private let makeResults: () throws -> LiveResults
    private var ownResults: LiveResults?
    /// The results (a view's are those of the controller it shows).
    package var results: LiveResults? { shown?.results ?? ownResults }
    /// Result positions by object, built when `indexPath(forObject:)` is first asked.
    private var positions: [ObjectIdentifier: Int]?
    /// For a view (see ``untypedView``): the controller it shows. Weak: the controller keeps its
    /// view.
    package private(set) weak var shown: AnyFetchedResultsController?
    private var view: FetchedResultsController<any FetchRequestResult>?

    package init(context: ManagedObjectContext, sectionNameKeyPath: String?, cacheName: String?, makeResults: @escaping () throws -> LiveResults) {
        self.managedObjectContext = context
        self.sectionNameKeyPath = sectionNameKeyPath
        self.cacheName = cacheName
        self.makeResults = makeResults
    }

    /// A view of `controller`: the same results, sections and objects.
    package init(viewOf controller: AnyFetchedResultsController) {
        self.managedObjectContext = controller.managedObjectContext
        self.sectionNameKeyPath = controller.sectionNameKeyPath
        self.cacheName = controller.cacheName
        self.makeResults = { throw CoreDataError(.coreData, "A view of a fetched results controller does not fetch.") }
        self.shown = controller
    }

    deinit {
        ownResults?.stop()
    }

    /// The request a view shows: a copy of the controller's, untyped.
    package func requestForView() -> FetchRequest<any FetchRequestResult> {
        FetchRequest(entityName: "")
    }

    /// The controller as delegate methods written with Core Data's spelling take it
    /// (`NSFetchedResultsController<NSFetchRequestResult>`): itself when its result type is that,
    /// else a view of it with the same results (a different instance: compare
    /// ``FetchedResultsController/shownController`` with yours).
    package var untypedView: FetchedResultsController<any FetchRequestResult> {
        if let untyped = self as? FetchedResultsController<any FetchRequestResult> { return untyped }
        if let view { return view }
        let made = FetchedResultsController<any FetchRequestResult>(viewOf: self, request: requestForView())
        view = made
        return made
    }

    /// Fetches the results (on the context's queue). Throws ``CoreDataError`` for a request
    /// without sort descriptors, an unknown key, a section key path that is not an attribute, or
    /// objects whose section names are out of order (sort by the section key path first).
    /// Calling it again fetches anew (after changing the request's predicate, for example).
    public func performFetch() throws {
        managedObjectContext.checkQueue("performFetch()")
        if let shown { return try shown.performFetch() }
        let fresh = try makeResults()
        try fresh.start()
        ownResults?.stop()
        fresh.onUpdate = { [unowned self] update in self.deliver(update) }
        ownResults = fresh
        positions = nil
    }

    /// The results as managed objects, or `nil` before ``performFetch()``.
    public var fetchedManagedObjects: [ManagedObject]? {
        results.map { $0.entries.map(\.object) }
    }

    /// The sections, or `nil` before ``performFetch()``. Without a section key path there is
    /// always one section, named "", empty when there are no results (as in Core Data).
    public var sections: [any FetchedResultsSectionInfo]? {
        guard let results else { return nil }
        let objects = results.entries.map(\.object)
        return results.sections.map { section in
            FetchedResultsSection(name: section.name, indexTitle: indexTitle(forSectionName: section.name), numberOfObjects: section.count,
                                  managedObjects: objects[section.start ..< section.start + section.count])
        }
    }

    /// The object at an index path, as a managed object. An index path outside the results is a
    /// programming error (Core Data raises a range exception).
    public func managedObject(at indexPath: IndexPath) -> ManagedObject {
        guard let results, indexPath.count == 2, results.sections.indices.contains(indexPath.section),
              (0 ..< results.sections[indexPath.section].count).contains(indexPath.item) else {
            preconditionFailure("""
                No object at index path \(indexPath) of a fetched results controller with \
                \(results?.sections.map(\.count) ?? []) objects per section (call performFetch() first).
                """)
        }
        return results.entries[results.sections[indexPath.section].start + indexPath.item].object
    }

    /// Where an object is in the results, or `nil` when it is not among them.
    public func indexPath(forObject object: ManagedObject) -> IndexPath? {
        if let shown { return shown.indexPath(forObject: object) }
        guard let results else { return nil }
        if positions == nil {
            var map: [ObjectIdentifier: Int] = [:]
            map.reserveCapacity(results.entries.count)
            for (index, entry) in results.entries.enumerated() { map[ObjectIdentifier(entry.object)] = index }
            positions = map
        }
        guard let index = positions?[ObjectIdentifier(object)] else { return nil }
        return ResultsUpdate.indexPath(index, in: results.sections)
    }

    /// The index title of a section name: its capitalised first letter. Override to change it
    /// (or answer the delegate's `controller(_:sectionIndexTitleForSectionName:)`).
    open func sectionIndexTitle(forSectionName sectionName: String) -> String? {
        sectionName.first.map { String($0).uppercased() }
    }

    /// The index titles of the sections, each once, in order.
    open var sectionIndexTitles: [String] {
        var seen = Set<String>()
        return (results?.sections ?? []).compactMap { indexTitle(forSectionName: $0.name) }.filter { seen.insert($0).inserted }
    }

    /// The section an index title leads to: the first with that title (or `sectionIndex` when
    /// none has it).
    open func section(forSectionIndexTitle title: String, at sectionIndex: Int) -> Int {
        (results?.sections ?? []).firstIndex { indexTitle(forSectionName: $0.name) == title } ?? sectionIndex
    }

    /// The results as section names and object IDs (`nil` before ``performFetch()``).
    public var snapshot: FetchedResultsSnapshot? {
        results.map { Self.snapshot(of: $0, reloaded: []) }
    }

    /// Core Data deletes a controller's on-disk section cache; ours keeps none, so there is
    /// nothing to delete. Kept so that code calling it compiles and runs.
    public static func deleteCache(withName name: String?) {}

    // MARK: - Telling the delegate

    private func indexTitle(forSectionName name: String) -> String? {
        if let delegate = (shown ?? self).delegate { return delegate.controller(untypedView, sectionIndexTitleForSectionName: name) }
        return sectionIndexTitle(forSectionName: name)
    }

    private func deliver(_ update: ResultsUpdate) {
        positions = nil
        guard let delegate, let results else { return }
        if delegateTakesSnapshots != false {
            var reloaded: [ManagedObjectID] = []
            for change in update.objectChanges { if case .update(let object, _, _) = change { reloaded.append(object.objectID) } }
            delegateTakesSnapshots = true
            delegate.controller(self, didChangeContentWith: Self.snapshot(of: results, reloaded: reloaded))
            if delegateTakesSnapshots == true { return }
        }
        guard update.hasChanges else { return }
        // Through the Core Data spelling of each callback; unless the delegate implements that
        // one, it passes the call on to the `AnyFetchedResultsController` one, with `self`.
        let me = untypedView
        delegate.controllerWillChangeContent(me)
        for (index, section) in update.deletedSections {
            let info = FetchedResultsSection(name: section.name, indexTitle: indexTitle(forSectionName: section.name), numberOfObjects: section.count,
                                             managedObjects: ArraySlice(update.old[section.start ..< section.start + section.count].map(\.object)))
            delegate.controller(me, didChange: info, atSectionIndex: index, for: .delete)
        }
        let objects = update.insertedSections.isEmpty ? [] : results.entries.map(\.object)
        for (index, section) in update.insertedSections {
            let info = FetchedResultsSection(name: section.name, indexTitle: indexTitle(forSectionName: section.name), numberOfObjects: section.count,
                                             managedObjects: objects[section.start ..< section.start + section.count])
            delegate.controller(me, didChange: info, atSectionIndex: index, for: .insert)
        }
        for change in update.objectChanges {
            switch change {
            case .delete(let object, let at): delegate.controller(me, didChange: object, at: at, for: .delete, newIndexPath: nil)
            case .insert(let object, let at): delegate.controller(me, didChange: object, at: nil, for: .insert, newIndexPath: at)
            case .move(let object, let from, let to): delegate.controller(me, didChange: object, at: from, for: .move, newIndexPath: to)
            case .update(let object, let at, let now): delegate.controller(me, didChange: object, at: at, for: .update, newIndexPath: now)
            }
        }
        delegate.controllerDidChangeContent(me)
    }

    package static func snapshot(of results: LiveResults, reloaded: [ManagedObjectID]) -> FetchedResultsSnapshot {
        let entries = results.entries
        return FetchedResultsSnapshot(
            sections: results.sections.map { section in
                .init(name: section.name, objectIDs: entries[section.start ..< section.start + section.count].map(\.object.objectID))
            },
            reloadedObjectIDs: reloaded)
    }
}
