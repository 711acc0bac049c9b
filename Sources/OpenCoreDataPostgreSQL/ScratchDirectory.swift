import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The folder a PostgreSQL migration copies the store's rows into (a scratch SQLite file): every
/// row of the store, so readable by its owner only (0700, whatever the umask), and named after
/// the process, so that one a crash left behind is removed by the next migration on the machine.
enum ScratchDirectory {
    static let prefix = "ocd-migration-"

    /// A new folder's location in the temporary folder: `ocd-migration-PID-UUID`.
    static func url(in parent: URL = FileManager.default.temporaryDirectory) -> URL {
        parent.appendingPathComponent("\(prefix)\(getpid())-\(UUID().uuidString)")
    }

    /// Creates the folder for its owner alone, after removing those of processes that ended.
    static func create(_ directory: URL) throws {
        removeAbandoned(in: directory.deletingLastPathComponent())
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    /// Removes the scratch folders in `parent` whose process no longer exists (a migration killed
    /// before it cleaned up). A process that exists, or that this user may not signal (another
    /// user's: its folder is not readable here either), keeps its folder.
    static func removeAbandoned(in parent: URL) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: parent.path) else { return }
        for name in names where name.hasPrefix(prefix) {
            guard let pid = Int32(name.dropFirst(prefix.count).prefix { $0 != "-" }), pid > 0 else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH {
                try? FileManager.default.removeItem(at: parent.appendingPathComponent(name))
            }
        }
    }
}
