import Dispatch
import Foundation

/// Notices every commit to a store file, by any connection of any process: a connection of its
/// own polls `PRAGMA data_version`, which changes when another connection has committed.
/// Polling every 20 ms on a background queue costs one tiny query; it needs no file-system
/// notifications (which Linux and macOS do differently) and sees WAL commits that leave the
/// main file untouched.
// @unchecked Sendable: `connection` and `lastVersion` are used only on `queue`; `timer` is
// created in init and only cancelled afterwards.
final class SQLiteChangeWatcher: @unchecked Sendable {
    private let connection: SQLiteConnection
    private let queue = DispatchQueue(label: "OpenCoreData.SQLiteChangeWatcher")
    private let timer: DispatchSourceTimer
    private var lastVersion: Int64 = -1

    /// The interval between polls.
    static let interval: DispatchTimeInterval = .milliseconds(20)

    init(path: String, handler: @escaping @Sendable () -> Void) throws {
        connection = try SQLiteConnection(path: path, readOnly: true)
        timer = DispatchSource.makeTimerSource(queue: queue)
        queue.sync { lastVersion = (try? version()) ?? -1 }
        timer.schedule(deadline: .now() + Self.interval, repeating: Self.interval, leeway: .milliseconds(5))
        timer.setEventHandler { [weak self] in
            guard let self, let current = try? self.version() else { return }
            if current != self.lastVersion {
                self.lastVersion = current
                handler()
            }
        }
        timer.resume()
    }

    private func version() throws -> Int64 {
        let statement = try connection.cachedStatement("PRAGMA data_version")
        defer { statement.reset() }
        return try statement.step() ? statement.int64(at: 0) : -1
    }

    func stop() {
        timer.cancel()
    }

    deinit { timer.cancel() }
}
