import Dispatch
import OpenCoreDataCore

/// Read-only connections lent to one reader at a time. In WAL mode each read sees the last
/// committed state and never waits for the writer.
final class SQLiteReaderPool: Sendable {
    private let path: String
    private let available = Locked<[SQLiteConnection]>([])
    private let slots: DispatchSemaphore
    private let closed = Locked(false)

    init(path: String, size: Int) {
        self.path = path
        self.slots = DispatchSemaphore(value: size)
    }

    /// Runs `body` with a reader connection (opened on first need).
    func read<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        if closed.withLock({ $0 }) {
            throw CoreDataError(.persistentStoreOperation, "The SQLite store at \(path) was closed; add it to a coordinator again.")
        }
        slots.wait()
        defer { slots.signal() }
        let connection = try available.withLock { $0.popLast() } ?? SQLiteConnection(path: path, readOnly: true)
        defer { available.withLock { $0.append(connection) } }
        return try body(connection)
    }

    func close() {
        closed.withLock { $0 = true }
        available.withLock { $0.removeAll() }
    }
}
