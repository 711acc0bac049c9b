import Foundation
import OpenCoreData

/// The strongest quakes, kept current: a fetched results controller on the view context, in
/// sections by magnitude band, that follows the store as other processes import into it (their
/// saves arrive as remote-change notifications; the view context merges the store's history, and
/// the controller updates). `ocd quakes watch` draws it in a terminal.
public final class QuakeWatch: FetchedResultsControllerDelegate, @unchecked Sendable {
    // @unchecked Sendable: `controller` and the delegate callbacks belong to the view context's
    // queue (set up in, and only touched from, its `perform` blocks); `observer` is written once
    // before `init` returns and read by `stop()`; `onChange` is immutable and Sendable.

    /// What the watch shows: the strongest quakes by magnitude band, and how many the store has.
    public struct Table: Sendable, Equatable {
        /// One band ("M5+": magnitudes from 5 to under 6) and its quakes, strongest first.
        public struct Band: Sendable, Equatable {
            public var name: String
            public var quakes: [QuakeStore.Summary]
        }

        public var bands: [Band]
        /// How many quakes the store holds.
        public var total: Int

        /// The table as lines of text.
        public var lines: [String] {
            let formatter = ISO8601DateFormatter()
            var lines = ["\(total) quakes; the strongest:"]
            for band in bands {
                lines.append(band.name)
                for quake in band.quakes {
                    let magnitude = quake.magnitude.map { String(format: "%.1f", $0) } ?? "?"
                    lines.append("""
                          \(magnitude.padding(toLength: 5, withPad: " ", startingAt: 0)) \
                        \(formatter.string(from: quake.time))  \(quake.place)
                        """)
                }
            }
            return lines
        }
    }

    /// The band of a magnitude: "M5+" for 5 to under 6, "unknown" without one.
    public static func band(of magnitude: Double?) -> String {
        guard let magnitude, magnitude.isFinite else { return "unknown" }
        return "M\(Int(magnitude.rounded(.down)))+"
    }

    private let store: QuakeStore
    private let onChange: @Sendable (Table) -> Void
    private var controller: FetchedResultsController<Quake>?
    private var observer: (any NSObjectProtocol)?

    /// Starts watching the `limit` strongest quakes; `onChange` gets the first table, then a new
    /// one after every change (on the view context's queue).
    public init(store: QuakeStore, limit: Int, onChange: @escaping @Sendable (Table) -> Void) async throws {
        self.store = store
        self.onChange = onChange
        let viewContext = store.container.viewContext
        try await viewContext.perform { () throws in
            let request = Quake.fetchRequest()
            request.sortDescriptors = [NSSortDescriptor(key: "magnitude", ascending: false), NSSortDescriptor(key: "time", ascending: false)]
            request.fetchLimit = limit
            let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: viewContext) { quake in
                QuakeWatch.band(of: quake.magnitude)
            }
            controller.delegate = self
            try controller.performFetch()
            self.controller = controller
            self.onChange(self.table())
        }
        // Another process's import: merge what the store's history recorded since last time.
        observer = NotificationCenter.default.addObserver(forName: .NSPersistentStoreRemoteChange,
                                                          object: store.container.persistentStoreCoordinator, queue: nil) { [store] _ in
            Task { try? await store.mergeHistoryIntoViewContext() }
        }
    }

    /// Stops following remote changes.
    public func stop() {
        if let observer { NotificationCenter.default.removeObserver(observer) }
        observer = nil
    }

    deinit { stop() }

    public func controllerDidChangeContent(_ controller: AnyFetchedResultsController) {
        onChange(table())
    }

    /// The table from the controller's sections (on the view context's queue).
    private func table() -> Table {
        let viewContext = store.container.viewContext
        let bands = (controller?.sections ?? []).map { section in
            Table.Band(name: section.name, quakes: (section.objects ?? []).compactMap { $0 as? Quake }.map {
                QuakeStore.Summary(code: $0.code, magnitude: $0.magnitude, place: $0.place, time: $0.time)
            })
        }
        return Table(bands: bands, total: (try? viewContext.count(for: Quake.fetchRequest())) ?? 0)
    }
}
