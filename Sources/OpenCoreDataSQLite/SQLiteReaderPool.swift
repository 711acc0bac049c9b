import Dispatch
import OpenCoreDataCore

/// Read-only connections lent to one reader at a time. In WAL mode each read sees the last
/// committed state and never waits for the writer.
final class SQLiteReaderPool: Sendable {
    private let path: String
    private let available = Locked<[SQLiteConnection]>([])
    private let slots: DispatchSemaphore
    private let closed = Locked(false)
    private let options: SQLiteStoreOptions

    init(path: String, size: Int, options: SQLiteStoreOptions) {
        self.path = path
        self.slots = DispatchSemaphore(value: size)
        self.options = options
    }

    /// Runs `body` with a reader connection (opened on first need), or on the snapshot of the
    /// query generation the read runs in (``QueryGenerationScope``), taken by its first read.
    func read<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        if closed.withLock({ $0 }) {
            throw CoreDataError(.persistentStoreOperation, "The SQLite store at \(path) was closed; add it to a coordinator again.")
        }
        if let generation = QueryGeneration.current,
           let snapshot = try generation.snapshot(for: path, open: { try SQLiteReadSnapshot.open(path: path, options: options) }) {
            return try snapshot.read(body)
        }
        slots.wait()
        defer { slots.signal() }
        let connection = try available.withLock { $0.popLast() } ?? options.readOnlyConnection(to: path)
        // Back to the pool only while the store is open: a connection lent before `close()`
        // is closed when its reader is done, not kept for a store nobody can use.
        defer { available.withLock { pool in if !closed.withLock({ $0 }) { pool.append(connection) } } }
        return try body(connection)
    }

    func close() {
        // Under the pool's lock, so that no reader puts its connection back in between.
        available.withLock { pool in
            closed.withLock { $0 = true }
            pool.removeAll()
        }
    }
}
