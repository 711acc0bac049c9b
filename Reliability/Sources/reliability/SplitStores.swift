import Foundation
import OpenCoreData

/// The workload's model split over two stores of one coordinator: accounts and entries in the
/// "Ledger" file, the counter in the "Tally" file. A save that adds entries and steps the counter
/// writes both files (each store's part commits inside the other's commit: see DEVIATIONS.md).
struct SplitStores {
    let ledger: String
    let tally: String

    /// The two files `path-ledger.sqlite` and `path-tally.sqlite`.
    init(_ path: String) {
        ledger = path + "-ledger.sqlite"
        tally = path + "-tally.sqlite"
    }

    var files: [String] { [ledger, tally] }

    /// A container on both files, history on.
    func open() throws -> PersistentContainer {
        let model = Workload.model()
        model.configurations = ["Ledger": ["Account", "Entry"], "Tally": ["Counter"]]
        let container = PersistentContainer(name: "Reliability", managedObjectModel: model)
        container.persistentStoreDescriptions = [("Ledger", ledger), ("Tally", tally)].map { configuration, file in
            let description = PersistentStoreDescription(url: URL(fileURLWithPath: file))
            description.configuration = configuration
            description.setOption(true, forKey: NSPersistentHistoryTrackingKey)
            return description
        }
        try container.loadPersistentStores()
        return container
    }

    /// Makes both files (unless they exist) with the workload's `.setup` (one history transaction
    /// in each), closed and checkpointed.
    func make() throws {
        guard !FileManager.default.fileExists(atPath: ledger) else { return }
        let container = try open()
        try container.viewContext.performAndWait { () throws in try Workload.perform(.setup, number: 0, in: container.viewContext) }
        Workload.close(container)
        for file in files { _ = try RawStore(file, writable: true).rows("PRAGMA wal_checkpoint(TRUNCATE)") }
    }

    /// Copies both files over to `other`'s.
    func copy(to other: SplitStores) throws {
        for (from, to) in zip(files, other.files) { try FileManager.default.copyItem(atPath: from, toPath: to) }
    }

    /// Fails unless both files pass `integrity_check` and keep their key counters.
    func checkIntact() throws {
        for file in files {
            let raw = try RawStore(file)
            let integrity = try raw.integrity()
            guard integrity == "ok" else { throw Failure("integrity_check of \((file as NSString).lastPathComponent): \(integrity)") }
            let problems = try raw.keyCountersProblems()
            guard problems.isEmpty else { throw Failure("key counters: \(problems.joined(separator: ", "))") }
        }
    }
}
