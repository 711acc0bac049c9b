import Foundation
import OpenCoreData

/// The files the tests read, all inside the repository (found from this file's path, so the tests
/// pass from any working directory):
/// - `Tests/Fixtures/<source>/`: stores and models written by Apple's Core Data and Xcode, byte
///   for byte from public repositories, each with its licence and the commit it came from
///   (`Tests/Fixtures/INDEX.md`);
/// - `Tests/Fixtures/Decoded/`: what independent reference decoders read from those files
///   (entities, version hashes, schema, metadata), which our readers must agree with;
/// - `Examples/`: the USGS feed the Earthquakes walkthrough imports.
enum Fixtures {
    /// The repository's root folder.
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // Support
        .deletingLastPathComponent()  // OpenCoreDataTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()

    /// `Tests/Fixtures`: one folder per source repository, with its original relative paths.
    static let root = repository.appendingPathComponent("Tests/Fixtures")

    /// The decoded reference files (JSON), one per store or compiled model.
    static let decoded = root.appendingPathComponent("Decoded")

    /// A fixture by its path below `Tests/Fixtures` (e.g. `"ddg-bsk/Tests/…/Bookmarks_V1.sqlite"`).
    static func url(_ relative: String) -> URL {
        root.appendingPathComponent(relative)
    }

    /// Copies a store with its -wal and -shm into a temporary folder (fixtures stay unchanged:
    /// opening a store writable checkpoints its -wal into the main file).
    /// A missing fixture throws: a path to nothing would open as a new, empty store.
    static func copy(_ relative: String, into directory: TemporaryDirectory) throws -> URL {
        let source = url(relative)
        guard FileManager.default.fileExists(atPath: source.path) else {
            throw RawSQLiteError(message: "the fixture \(relative) is missing from Tests/Fixtures")
        }
        let target = directory.file(source.lastPathComponent)
        for suffix in ["", "-wal", "-shm"] {
            let from = URL(fileURLWithPath: source.path + suffix)
            if FileManager.default.fileExists(atPath: from.path) {
                try FileManager.default.copyItem(at: from, to: URL(fileURLWithPath: target.path + suffix))
            }
        }
        return target
    }

    /// Whether a store records persistent history (has Core Data's history tables): an app
    /// opens such a store with `NSPersistentHistoryTrackingKey`, or gets it read-only.
    static func recordsHistory(_ store: URL) throws -> Bool {
        try !RawSQLite(store).rows("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('ATRANSACTION', 'ACHANGE')").isEmpty
    }

    /// Opens a copied fixture store as the app that wrote it would: with history tracking when
    /// the store records history.
    static func open(_ store: URL, model: ManagedObjectModel) throws -> PersistentContainer {
        let history = try recordsHistory(store)
        return try PersistentContainer.loaded(at: store, model: model) { description in
            if history { description.setOption(true, forKey: NSPersistentHistoryTrackingKey) }
        }
    }
}
