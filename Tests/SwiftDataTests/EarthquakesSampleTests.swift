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
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("quakes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Earthquakes.sqlite")
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
