import Foundation
import OpenCoreData

public final class QuakeWatch: FetchedResultsControllerDelegate, @unchecked Sendable {
    // @unchecked Sendable: `controller` and the delegate callbacks belong to the view
    // context's queue; `observer` is written once before `init` returns.
    private let store: QuakeStore
    private var controller: FetchedResultsController<Quake>?
    private var observer: (any NSObjectProtocol)?

    public static func band(of magnitude: Double?) -> String {
        guard let magnitude, magnitude.isFinite else { return "unknown" }
        return "M\(Int(magnitude.rounded(.down)))+"
    }

    public init(store: QuakeStore, limit: Int) async throws {
        self.store = store
        let viewContext = store.container.viewContext
        try await viewContext.perform { () throws in
            let request = Quake.fetchRequest()
            request.sortDescriptors = [NSSortDescriptor(key: "magnitude", ascending: false)]
            request.fetchLimit = limit
            let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: viewContext) { quake in
                QuakeWatch.band(of: quake.magnitude)
            }
            controller.delegate = self
            try controller.performFetch()
            self.controller = controller
        }
    }
}
