import ArgumentParser
import Earthquakes
#if os(Linux)
import EarthquakesSwiftData
#endif
import Foundation
import OpenCoreData

/// `ocd quakes`: Apple's Earthquakes sample on Linux.
struct QuakesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quakes",
        abstract: "Import a USGS GeoJSON feed with a batch insert, list the newest quakes, or watch the strongest live.",
        subcommands: [ImportQuakes.self, ListQuakes.self, WatchQuakes.self]
    )
}

/// Where the quakes store lives.
struct QuakeStoreOption: ParsableArguments {
    @Option(name: .long, help: "The store file (default: the Earthquakes store in the data folder).")
    var store: String?

    @Flag(name: .long, help: "Use the sample written with SwiftData's API (@Model, @ModelActor, ModelContext), on the same store.")
    var swiftdata = false

    func open() throws -> QuakeStore {
        try QuakeStore(url: store.map { URL(fileURLWithPath: $0) })
    }

    #if os(Linux)
    func openSwiftData() throws -> SwiftDataQuakes {
        try SwiftDataQuakes(url: store.map { URL(fileURLWithPath: $0) } ?? QuakeStore.defaultURL)
    }
    #endif
}

/// `ocd quakes import <feed.geojson>`.
struct ImportQuakes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "import", abstract: "Batch-import a feed (again: updates, never duplicates).")

    @Argument(help: "A USGS GeoJSON feed, e.g. Examples/quakes/all_day.geojson.")
    var feed: String

    @OptionGroup var location: QuakeStoreOption

    func run() async throws {
        if location.swiftdata { return try await runSwiftData() }
        let store = try location.open()
        let feed = try QuakeFeed(contentsOf: URL(fileURLWithPath: feed))
        let before = try await store.count()
        let started = Date()
        let written = try await store.importFeed(feed) { done, total in
            let width = 30
            let filled = total == 0 ? width : done * width / total
            FileHandle.standardError.write(Data("""
                \r[\(String(repeating: "#", count: filled))\(String(repeating: " ", count: width - filled))] \
                \(done)/\(total)
                """.utf8))
        }
        FileHandle.standardError.write(Data("\n".utf8))
        let elapsed = Date().timeIntervalSince(started)
        printImport(written: written, before: before, after: try await store.count(), elapsed: elapsed, by: "")
        print("Store: \(store.url?.path ?? "?")")
        try await printNewest(store, limit: 5)
    }
}

extension ImportQuakes {
    /// The import through the SwiftData sample: a model actor inserts the feed's quakes.
    func runSwiftData() async throws {
        #if os(Linux)
        let quakes = try location.openSwiftData()
        let feed = try QuakeFeed(contentsOf: URL(fileURLWithPath: feed))
        let before = try await quakes.count()
        let started = Date()
        let written = try await quakes.importFeed(feed)
        let elapsed = Date().timeIntervalSince(started)
        printImport(written: written, before: before, after: try await quakes.count(), elapsed: elapsed, by: " with SwiftData")
        printSummaries(try await quakes.newest(5))
        #else
        throw ValidationError("--swiftdata runs the sample on Linux's SwiftData module; on Apple platforms use Apple's.")
        #endif
    }
}

/// `ocd quakes list`.
struct ListQuakes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the newest quakes in the store.")

    @Option(name: .shortAndLong, help: "How many.")
    var limit = 10

    @OptionGroup var location: QuakeStoreOption

    func run() async throws {
        if location.swiftdata {
            #if os(Linux)
            let quakes = try location.openSwiftData()
            print("\(try await quakes.count()) quakes (read with SwiftData)")
            printSummaries(try await quakes.newest(limit))
            return
            #else
            throw ValidationError("--swiftdata runs the sample on Linux's SwiftData module; on Apple platforms use Apple's.")
            #endif
        }
        let store = try location.open()
        print("\(try await store.count()) quakes in \(store.url?.path ?? "?")")
        try await printNewest(store, limit: limit)
    }
}

/// `ocd quakes watch`: a live table of the strongest quakes that updates while another process
/// imports (`ocd quakes import` in another terminal).
struct WatchQuakes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Show the strongest quakes by magnitude band, updated live as other processes import.")

    @Option(name: .shortAndLong, help: "How many quakes to show.")
    var limit = 10

    @Option(name: .long, help: "Exit once the store holds at least this many quakes.")
    var untilCount: Int?

    @Option(name: .long, help: "Give up (exit 1) after this many seconds.")
    var timeout: Double?

    @OptionGroup var location: QuakeStoreOption

    func run() async throws {
        let store = try location.open()
        let target = untilCount
        let (tables, continuation) = AsyncStream.makeStream(of: QuakeWatch.Table.self)
        let watch = try await QuakeWatch(store: store, limit: limit) { continuation.yield($0) }
        defer { watch.stop() }
        let interactive = isatty(STDOUT_FILENO) == 1
        if let timeout {
            Task {
                try await Task.sleep(for: .seconds(timeout))
                FileHandle.standardError.write(Data("ocd quakes watch: gave up after \(timeout) s\n".utf8))
                Foundation.exit(1)
            }
        }
        for await table in tables {
            // A terminal is redrawn in place; a pipe gets each table in turn.
            let text = (interactive ? "\u{1B}[H\u{1B}[2J" : "") + table.lines.joined(separator: "\n") + "\n" + (interactive ? "" : "\n")
            FileHandle.standardOutput.write(Data(text.utf8))
            if let target, table.total >= target { return }
        }
    }
}

/// What an import did: the quakes written, how many were new and how many updated.
private func printImport(written: Int, before: Int, after: Int, elapsed: TimeInterval, by means: String) {
    print("""
        Imported \(written) quakes\(means) in \(String(format: "%.0f", elapsed * 1000)) ms: \
        \(after - before) new, \(written - (after - before)) updated; the store holds \(after).
        """)
}

private func printNewest(_ store: QuakeStore, limit: Int) async throws {
    printSummaries(try await store.newest(limit))
}

private func printSummaries(_ quakes: [QuakeStore.Summary]) {
    let formatter = ISO8601DateFormatter()
    for quake in quakes {
        let magnitude = quake.magnitude.map { String(format: "M%.1f", $0) } ?? "M?  "
        print("  \(formatter.string(from: quake.time))  \(magnitude)  \(quake.place)")
    }
}
