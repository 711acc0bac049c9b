import Foundation
import OpenCoreData
import OpenCoreDataCore

/// Collects values from several threads, in the order they arrive.
// `Locked` (a pthread mutex) rather than `Mutex`: on Linux `Mutex` is a futex the thread sanitizer
// cannot see, and it reported the appends of two threads as a race.
final class Recorder<Value: Sendable>: Sendable {
    private let storage = Locked<[Value]>([])

    func append(_ value: Value) { storage.withLock { $0.append(value) } }
    var values: [Value] { storage.withLock { $0 } }
}

/// The calling thread's identity.
func currentThreadID() -> UInt {
    UInt(pthread_self())
}

/// `context.perform { }` from synchronous code: in `async` code Swift picks the async overload
/// (as with Core Data), so tests that want fire-and-forget go through here.
func enqueue(_ context: ManagedObjectContext, _ block: @escaping @Sendable () -> Void) {
    context.perform(block)
}

/// `container.performBackgroundTask { }` from synchronous code (see `enqueue`).
func enqueueBackgroundTask(_ container: PersistentContainer, _ block: @escaping @Sendable (ManagedObjectContext) -> Void) {
    container.performBackgroundTask(block)
}

/// Collects notifications posted on any thread.
// @unchecked Sendable: the array is behind a lock; the notifications are only read after the
// posting thread is done with them (the tests wait for the posting call to return).
final class NotificationRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [Notification] = []

    func append(_ notification: Notification) {
        lock.lock()
        storage.append(notification)
        lock.unlock()
    }

    var values: [Notification] {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }
}
