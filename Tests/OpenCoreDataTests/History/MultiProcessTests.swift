import Foundation
import OpenCoreData
import Testing
import TestSupport

/// Several processes sharing one store — an SQLite file on one machine, a PostgreSQL schema as
/// services on several machines share it: no acknowledged save is lost, optimistic locking holds
/// across processes, history numbers every process's saves in one order, and remote changes
/// reach the others.
// Serialized: the children find their store through environment variables set before they start.
@Suite(.serialized, .dedicatedThread) struct MultiProcessTests {
    /// The stores several processes can share.
    static var sharedKinds: [StoreKind] { StoreKind.allCases.filter { $0 != .inMemory } }
    static let processes = 4
    static let savesPerProcess = 10
    private static let options: [String: any Sendable] = [NSPersistentHistoryTrackingKey: true, NSPersistentStoreRemoteChangeNotificationPostOptionKey: true]

    /// The store of the parent's folder, as a child opens it (it never removes it).
    private static func childStack() throws -> TestStack {
        let environment = ProcessInfo.processInfo.environment
        guard let path = environment["OCD_MULTIPROCESS_STORE"], let kind = environment["OCD_MULTIPROCESS_KIND"].flatMap(StoreKind.init(rawValue:)) else {
            throw CoreDataError(.persistentStoreOpen, "The child was started without OCD_MULTIPROCESS_STORE and OCD_MULTIPROCESS_KIND.")
        }
        return try TestStack(kind, model: ManagedObjectModel(Entry.self), directory: TemporaryDirectory(existing: URL(fileURLWithPath: path)), options: options)
    }

    @Test(arguments: sharedKinds)
    func fourProcessesIncrementOneCounterAndEverySaveIsKeptAndNumbered(kind: StoreKind) async throws {
        let directory = TemporaryDirectory()
        let stack = try TestStack(kind, model: ManagedObjectModel(Entry.self), directory: directory, options: Self.options)
        let setup = stack.container.newBackgroundContext()
        try setup.performAndWait { () throws in
            Entry(context: setup).code = "counter"
            try setup.save()
        }
        let recorder = NotificationRecorder()
        let observer = NotificationCenter.default.addObserver(forName: .NSPersistentStoreRemoteChange, object: stack.container.persistentStoreCoordinator, queue: nil) {
            recorder.append($0)
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        setenv("OCD_MULTIPROCESS_STORE", directory.url.path, 1)
        setenv("OCD_MULTIPROCESS_KIND", kind.rawValue, 1)

        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<Self.processes {
                group.addTask {
                    await #expect(processExitsWith: .success) {
                        // A child: ten saves, each adding its own entry and adding one to the shared
                        // counter; a save that loses the race (133020) starts again from the store.
                        let stack = try MultiProcessTests.childStack()
                        let author = "process \(ProcessInfo.processInfo.processIdentifier)"
                        var saved = 0, attempts = 0
                        while saved < MultiProcessTests.savesPerProcess {
                            attempts += 1
                            guard attempts < 500 else { exit(4) }
                            let context = stack.container.newBackgroundContext()
                            context.transactionAuthor = author
                            let done = try context.performAndWait { () throws -> Bool in
                                let request = FetchRequest<Entry>(entityName: "Entry")
                                request.predicate = FetchPredicate(format: "code == %@", "counter")
                                guard let counter = try context.fetch(request).first else { exit(5) }
                                counter.value += 1
                                Entry(context: context).code = "\(author) #\(saved)"
                                do {
                                    try context.save()
                                    return true
                                } catch let error as CoreDataError where error.code == .managedObjectMerge {
                                    return false
                                }
                            }
                            if done { saved += 1 }
                        }
                        exit(0)
                    }
                }
            }
        }

        let total = Self.processes * Self.savesPerProcess
        let reader = stack.container.newBackgroundContext()
        let (counter, entries, transactions) = try reader.performAndWait { () throws in
            let counter = FetchRequest<Entry>(entityName: "Entry")
            counter.predicate = FetchPredicate(format: "code == %@", "counter")
            let entries = FetchRequest<Entry>(entityName: "Entry")
            entries.predicate = FetchPredicate(format: "code BEGINSWITH %@", "process ")
            let history = try reader.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)).transactions
            return (try reader.fetch(counter).first?.value, Set(try reader.fetch(entries).map(\.code)), history)
        }
        // Every acknowledged save is there, once: no increment lost to a concurrent writer.
        #expect(counter == Int64(total))
        #expect(entries.count == total)
        // One transaction per save, numbered in one strictly increasing order, each process's ten.
        let children = transactions.filter { $0.author?.hasPrefix("process ") ?? false }
        #expect(children.count == total)
        #expect(transactions.map(\.transactionNumber) == transactions.map(\.transactionNumber).sorted())
        #expect(Set(transactions.map(\.transactionNumber)).count == transactions.count)
        #expect(Dictionary(grouping: children, by: { $0.author ?? "" }).values.map(\.count).sorted() == Array(repeating: Self.savesPerProcess, count: Self.processes))

        // The parent heard of the children's saves: a remote-change notification whose token
        // reaches the last transaction.
        let last = transactions.last?.transactionNumber ?? 0
        let heard = await eventually {
            recorder.values.contains { (($0.userInfo?[NSPersistentHistoryTokenKey] as? PersistentHistoryToken)?.transactionNumber ?? 0) >= last }
        }
        #expect(heard, "no remote-change notification reached transaction \(last)")
    }
}
