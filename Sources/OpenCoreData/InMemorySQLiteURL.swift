import Foundation

extension URL {
    /// Whether this is `/dev/null`, which Core Data takes as an SQLite store kept in memory (the
    /// usual test stack). Such a store is opened with the in-memory engine, and the file
    /// operations (destroy, replace, metadata, migration staging) never touch the device.
    var namesInMemorySQLiteStore: Bool { isFileURL && standardizedFileURL.path == "/dev/null" }
}
