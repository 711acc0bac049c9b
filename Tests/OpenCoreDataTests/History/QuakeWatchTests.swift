import Earthquakes
import Foundation
import OpenCoreData
import Synchronization
import Testing
import TestSupport

/// `ocd quakes watch`'s engine: the strongest quakes by magnitude band, kept current while
/// another process imports the feed into the same store.
@Suite(.dedicatedThread) struct QuakeWatchTests {
    @Test func theTableFollowsAnImportByAnotherProcess() async throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Quakes.sqlite")
        let store = try QuakeStore(url: url)
        let tables = Mutex<[QuakeWatch.Table]>([])
        let watch = try await QuakeWatch(store: store, limit: 4) { table in tables.withLock { $0.append(table) } }
        defer { watch.stop() }
        #expect(tables.withLock { $0.map(\.total) } == [0])
        #expect(tables.withLock { $0.first?.bands.isEmpty } == true)

        setenv("OCD_QUAKE_WATCH_STORE", url.path, 1)
        setenv("OCD_QUAKE_WATCH_FEED", EarthquakesTests.shippedFeed.path, 1)
        await #expect(processExitsWith: .success) {
            // Another process imports the feed into the same file.
            let environment = ProcessInfo.processInfo.environment
            guard let path = environment["OCD_QUAKE_WATCH_STORE"], let feedPath = environment["OCD_QUAKE_WATCH_FEED"] else { exit(3) }
            let importer = try QuakeStore(url: URL(fileURLWithPath: path))
            try await importer.importFeed(try QuakeFeed(contentsOf: URL(fileURLWithPath: feedPath)))
            exit(0)
        }
        _ = await eventually { tables.withLock { $0.last?.total } == 146 }
        let table = try #require(tables.withLock { $0.last })
        #expect(table.total == 146)
        // The feed's four strongest, by band, strongest first.
        let feed = try QuakeFeed(contentsOf: EarthquakesTests.shippedFeed)
        let strongest = feed.records.sorted { ($0.magnitude ?? -1, $0.time) > ($1.magnitude ?? -1, $1.time) }.prefix(4)
        #expect(table.bands.flatMap(\.quakes).map(\.code) == strongest.map(\.code))
        #expect(table.bands.map(\.name) == ["M7+", "M5+"])
        #expect(table.bands.allSatisfy { band in band.quakes.allSatisfy { QuakeWatch.band(of: $0.magnitude) == band.name } })
    }
}
