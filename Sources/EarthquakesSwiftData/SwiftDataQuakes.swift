import Foundation
import SwiftData
import Earthquakes

/// Apple's Earthquakes sample written the SwiftData way: a `@ModelActor` imports a feed on a
/// context of its own, the main context lists the newest quakes. `ocd quakes import --swiftdata`
/// and `ocd quakes list --swiftdata` run it on the store the Core Data sample uses.
public final class SwiftDataQuakes: Sendable {
    /// The container: the quakes store.
    public let container: ModelContainer

    /// Opens (creating) the store at `url`.
    public init(url: URL) throws {
        container = try ModelContainer(for: Quake.self, configurations: ModelConfiguration("Earthquakes", url: url))
    }

    /// Imports a feed on a model actor (quakes already stored are updated); returns how many
    /// quakes were written.
    @discardableResult
    public func importFeed(_ feed: QuakeFeed) async throws -> Int {
        try await QuakeImporter(modelContainer: container).insert(feed.records)
    }

    /// The newest quakes, read on the main context.
    @MainActor
    public func newest(_ limit: Int) throws -> [QuakeStore.Summary] {
        var descriptor = FetchDescriptor<Quake>(sortBy: [SortDescriptor(\.time, order: .reverse)])
        descriptor.fetchLimit = limit
        return try container.mainContext.fetch(descriptor).map {
            QuakeStore.Summary(code: $0.code, magnitude: $0.magnitude, place: $0.place, time: $0.time)
        }
    }

    /// How many quakes the store holds.
    @MainActor
    public func count() throws -> Int {
        try container.mainContext.fetchCount(FetchDescriptor<Quake>())
    }
}

/// Inserts a feed's quakes on a context of its own, off the main actor.
@ModelActor
actor QuakeImporter {
    func insert(_ records: [QuakeRecord]) throws -> Int {
        for record in records { modelContext.insert(Quake(record)) }
        try modelContext.save()
        return records.count
    }
}
