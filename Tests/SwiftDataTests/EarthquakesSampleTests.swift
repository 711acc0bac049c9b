#if os(Linux)
import Earthquakes
import EarthquakesSwiftData
import Foundation
import Testing
import TestSupport

/// The Earthquakes sample both ways on one store: what the Core Data sample imports, the
/// SwiftData sample reads, and imports again as updates.
@Suite(.dedicatedThread) struct EarthquakesSampleTests {
    static let feedURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Examples/quakes/all_day.geojson")

    @Test func bothSamplesShareTheStore() async throws {
        let url = try temporaryStoreURL(named: "Earthquakes.sqlite")
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let feed = try QuakeFeed(contentsOf: Self.feedURL)

        let coreData = try QuakeStore(url: url)
        try await coreData.importFeed(feed)
        let expected = try await coreData.newest(10)
        #expect(try await coreData.count() == 146)

        let swiftData = try SwiftDataQuakes(url: url)
        #expect(try await swiftData.count() == 146)
        #expect(try await swiftData.newest(10) == expected)

        #expect(try await swiftData.importFeed(feed) == 146)
        #expect(try await swiftData.count() == 146)
        #expect(try await swiftData.newest(10) == expected)
        try await coreData.mergeHistoryIntoViewContext()
        #expect(try await coreData.count() == 146)
    }
}
#endif
