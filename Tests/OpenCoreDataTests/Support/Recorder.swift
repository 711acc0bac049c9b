import Foundation
import OpenCoreData
import Synchronization

/// Collects values from several threads, in the order they arrive.
final class Recorder<Value: Sendable>: Sendable {
    private let storage = Mutex<[Value]>([])

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
