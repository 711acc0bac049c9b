import Foundation
import Synchronization

/// Core Data's concurrency debugging: when on, every use of a context or a managed object
/// off its context's queue traps with a message naming the object, the context and the
/// thread.
///
/// On when the process is launched with `-com.apple.CoreData.ConcurrencyDebug 1` (as with
/// Core Data) or with the environment variable `OPENCOREDATA_CONCURRENCY_DEBUG=1`; tests can
/// also set ``isEnabled``.
public enum ConcurrencyDebug {
    private static let flag = Atomic<Bool>(launchRequested())

    /// Whether the checks are on.
    public static var isEnabled: Bool {
        get { flag.load(ordering: .relaxed) }
        set { flag.store(newValue, ordering: .relaxed) }
    }

    private static func launchRequested() -> Bool {
        let arguments = ProcessInfo.processInfo.arguments
        if let index = arguments.firstIndex(of: "-com.apple.CoreData.ConcurrencyDebug"),
           index + 1 < arguments.count, let level = Int(arguments[index + 1]), level > 0 {
            return true
        }
        if let value = ProcessInfo.processInfo.environment["OPENCOREDATA_CONCURRENCY_DEBUG"], let level = Int(value), level > 0 {
            return true
        }
        return false
    }

    /// Traps when `object` is used off its context's queue.
    package static func checkAccess(to object: ManagedObject, file: StaticString = #fileID, line: UInt = #line) {
        guard let context = object.managedObjectContext, !context.queue.isCurrent else { return }
        preconditionFailure(
            """
                Concurrency violation: the managed object \(object.objectID) of context '\(context.debugName)' \
                was used on \(threadDescription()), which is not the context's queue. Use it inside \
                context.perform { } or performAndWait { }.
                """,
            file: file, line: line)
    }

    /// Traps when `context` is used off its queue.
    package static func checkAccess(to context: ManagedObjectContext, _ operation: String, file: StaticString = #fileID, line: UInt = #line) {
        guard !context.queue.isCurrent else { return }
        preconditionFailure(
            """
                Concurrency violation: \(operation) was called on context '\(context.debugName)' from \
                \(threadDescription()), which is not the context's queue. Call it inside context.perform { } \
                or performAndWait { }.
                """,
            file: file, line: line)
    }

    private static func threadDescription() -> String {
        let name = Thread.current.name.flatMap { $0.isEmpty ? nil : $0 }
        return "thread \(name ?? "\(Thread.current)")"
    }
}
