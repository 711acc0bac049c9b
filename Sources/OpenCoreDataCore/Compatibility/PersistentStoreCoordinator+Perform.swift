import Foundation

extension PersistentStoreCoordinator {
    /// Runs `block` later, on a queue of the coordinator's, one block at a time (and never beside a
    /// ``performAndWait(_:)`` block). The coordinator is thread-safe without it; it is there for
    /// code that uses it, as Core Data's coordinator does. Mirrors `perform(_:)`.
    public func perform(_ block: @escaping @Sendable () -> Void) {
        let lock = performLock
        performQueue.async {
            lock.lock()
            defer { lock.unlock() }
            block()
        }
    }

    /// Runs `block` now, on the calling thread, one block at a time with the ones given to
    /// ``perform(_:)``, and returns its result; it may call `performAndWait` again. Mirrors
    /// `performAndWait(_:)`.
    public func performAndWait<T>(_ block: () throws -> T) rethrows -> T {
        performLock.lock()
        defer { performLock.unlock() }
        return try block()
    }

    /// The store added from `url` (compared as standardized file URLs), or `nil`. Mirrors
    /// `persistentStore(for:)`.
    public func persistentStore(for url: URL) -> PersistentStore? {
        let wanted = url.standardizedFileURL
        return persistentStores.first { $0.url?.standardizedFileURL == wanted }
    }
}
