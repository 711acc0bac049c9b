import Earthquakes
import Foundation
import OpenCoreData
import Testing
import TestSupport

/// The Earthquakes sample: a real USGS feed (shipped in Examples/quakes), batch-imported.
@Suite(.dedicatedThread) struct EarthquakesTests {
    static let shippedFeed = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Examples/quakes/all_day.geojson")

    @Test func theShippedFeedDecodes() throws {
        let feed = try QuakeFeed(contentsOf: Self.shippedFeed)
        #expect(feed.records.count == 146)
        #expect(Set(feed.records.map(\.code)).count == 146)
        #expect(feed.records.allSatisfy { $0.magnitude != nil && !$0.place.isEmpty })
    }

    @Test func aNullMagnitudeIsAQuakeWithoutMagnitude() throws {
        let json = #"{"type":"FeatureCollection","features":[{"type":"Feature","id":"nc1","properties":{"mag":null,"place":"Somewhere","time":1594870627920},"geometry":{"type":"Point","coordinates":[-117.5,35.6,11.2]}}]}"#
        let feed = try QuakeFeed(data: Data(json.utf8))
        #expect(feed.records.first?.magnitude == nil)
        #expect(feed.records.first?.depth == 11.2)
        #expect(throws: CoreDataError.self) { try QuakeFeed(data: Data(#"{"type":"FeatureCollection"}"#.utf8)) }
    }

    @Test func importingTwiceUpdatesInsteadOfDuplicatingAndTheViewContextFollows() async throws {
        let directory = TemporaryDirectory()
        let store = try QuakeStore(url: directory.file("Quakes.sqlite"))
        let feed = try QuakeFeed(contentsOf: Self.shippedFeed)
        #expect(try await store.importFeed(feed) == 146)
        #expect(try await store.count() == 146)
        let newest = try #require(try await store.newest(1).first)

        // The view context holds the newest quake; a corrected feed changes its magnitude.
        let viewContext = store.container.viewContext
        let held = Held()      // keeps the object registered in the view context
        try await viewContext.perform { () throws in
            let request = Quake.fetchRequest()
            request.predicate = NSPredicate(format: "code == %@", newest.code)
            let quake = try #require(try viewContext.fetch(request).first)
            held.quake = quake
        }
        var corrected = feed.records
        corrected[corrected.firstIndex { $0.code == newest.code } ?? 0].magnitude = 9.9
        let correctedFeed = try QuakeFeed(records: corrected)
        #expect(try await store.importFeed(correctedFeed) == 146)
        #expect(try await store.count() == 146)
        let magnitude = await viewContext.perform { held.quake?.magnitude }
        #expect(magnitude == 9.9)
    }
}

/// Holds a managed object across `perform` calls on its context's queue (only used there).
private final class Held: @unchecked Sendable {
    var quake: Quake?
}
