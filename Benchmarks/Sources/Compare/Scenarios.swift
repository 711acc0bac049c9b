import Foundation
import OpenCoreData

/// Each scenario three ways — OpenCoreData, raw SQLite, GRDB — on fresh files, in one run.
struct Scenarios {
    let n: Int
    let runs: Int

    private func container(_ url: URL) throws -> PersistentContainer {
        let container = PersistentContainer(name: "Bench", managedObjectModel: ManagedObjectModel(Note.self))
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: url)]
        try container.loadPersistentStores()
        return container
    }

    /// A store of ours holding `n` notes, and the IDs of the notes.
    private func filledStore() throws -> (PersistentContainer, [ManagedObjectID]) {
        let container = try container(scratchFile("ours.sqlite"))
        let context = container.newBackgroundContext()
        let ids = try context.performAndWait { () throws -> [ManagedObjectID] in
            let notes = RawNote.rows(n).map { row -> Note in
                let note = Note(context: context)
                (note.id, note.text1, note.text2, note.text3) = (row.id, row.text1, row.text2, row.text3)
                return note
            }
            try context.save()
            return notes.map(\.objectID)
        }
        return (container, ids)
    }

    func all() throws -> [Result] {
        var results: [Result] = []
        var samples: [String: (ours: [Double], raw: [Double], grdb: [Double])] = [:]
        func add(_ name: String, ours: Double, raw: Double?, grdb: Double?) {
            var entry = samples[name] ?? ([], [], [])
            entry.ours.append(ours)
            if let raw { entry.raw.append(raw) }
            if let grdb { entry.grdb.append(grdb) }
            samples[name] = entry
        }
        let rows = RawNote.rows(n)
        let keys = rows.map(\.pk)
        let lookups = Array(keys.shuffled().prefix(Swift.min(10_000, n)))
        let middle = Int32(n / 2)
        for _ in 0..<runs {
            // Raw SQLite.
            let raw = RawSQLitePeer(path: scratchFile("raw.sqlite").path)
            let rawInsert = measure { raw.insert(rows) }
            let rawFetch = measure { precondition(raw.fetchAll().count == n) }
            let rawSelect = measure { precondition(raw.select(id: middle).count == 1) }
            let rawLookup = measure { precondition(raw.lookup(lookups) == lookups.count) }
            let sum = Int64(n) * Int64(n - 1) / 2
            let rawGroup = measure { precondition(raw.groupSums() == sum) }
            let rawUpdate = measure { raw.update(keys, text: "updated") }
            let rawDelete = measure { raw.delete(keys) }

            // GRDB.
            let grdb = try GRDBPeer(path: scratchFile("grdb.sqlite").path)
            let grdbInsert = try measure { try grdb.insert(rows) }
            let grdbFetch = try measure { let count = try grdb.fetchAll().count; precondition(count == n) }
            let grdbSelect = try measure { let count = try grdb.select(id: middle).count; precondition(count == 1) }
            let grdbLookup = try measure { let found = try grdb.lookup(lookups); precondition(found == lookups.count) }
            let grdbGroup = try measure { let found = try grdb.groupSums(); precondition(found == sum) }
            let grdbUpdate = try measure { try grdb.update(keys, text: "updated") }
            let grdbDelete = try measure { try grdb.delete(keys) }

            // Ours.
            let container = try container(scratchFile("ours.sqlite"))
            let writer = container.newBackgroundContext()
            let oursInsert = try OurOperations.insertAndSave(rows, in: writer)
            let oursFetch = try OurOperations.fetchAndReadAll(in: container.newBackgroundContext())
            let selector = container.newBackgroundContext()
            let oursSelect = try selector.performAndWait { () throws in
                try measure {
                    let request = Note.fetchRequest()
                    request.predicate = NSPredicate(format: "id == %d", middle)
                    let count = try selector.fetch(request).count
                    precondition(count == 1)
                }
            }
            let ids = try writer.performAndWait { try writer.fetch(FetchRequest<ManagedObjectID>(entityName: "Note")) }
            let oursLookup = try OurOperations.lookups(Array(ids.shuffled().prefix(lookups.count)), in: container.newBackgroundContext())
            let oursGroup = try OurOperations.groupSums(expecting: sum, in: container.newBackgroundContext())
            let oursUpdate = try OurOperations.updateAllAndSave(in: container.newBackgroundContext())
            let deleter = container.newBackgroundContext()
            let oursDelete = try deleter.performAndWait { () throws in
                let notes = try deleter.fetch(Note.fetchRequest())
                return try measure {
                    for note in notes { deleter.delete(note) }
                    try deleter.save()
                }
            }
            add("insert N objects + save", ours: oursInsert, raw: rawInsert, grdb: grdbInsert)
            add("fetch N objects, read every attribute", ours: oursFetch, raw: rawFetch, grdb: grdbFetch)
            add("fetch 1 by an unindexed attribute", ours: oursSelect, raw: rawSelect, grdb: grdbSelect)
            add("\(lookups.count) lookups by object ID / key", ours: oursLookup, raw: rawLookup, grdb: grdbLookup)
            add("sum N rows by group (dictionary results)", ours: oursGroup, raw: rawGroup, grdb: grdbGroup)
            add("update one attribute of N + save", ours: oursUpdate, raw: rawUpdate, grdb: grdbUpdate)
            add("delete N objects via a context", ours: oursDelete, raw: rawDelete, grdb: grdbDelete)
            add("merge a did-save of 10,000 updates", ours: try mergeScenario(), raw: nil, grdb: nil)

            // Batch requests against the same kind of work by the peers.
            let rawBatch = RawSQLitePeer(path: scratchFile("raw-batch.sqlite").path)
            let rawBatchInsert = measure { rawBatch.insert(rows) }
            let rawBatchDelete = measure { rawBatch.deleteAll() }
            let grdbBatch = try GRDBPeer(path: scratchFile("grdb-batch.sqlite").path)
            let grdbBatchInsert = try measure { try grdbBatch.insert(rows) }
            let grdbBatchDelete = try measure { try grdbBatch.deleteAll() }
            let batchContainer = try self.container(scratchFile("ours-batch.sqlite"))
            let batcher = batchContainer.newBackgroundContext()
            let dictionaries: [[String: Any]] = rows.map { row in
                var dictionary: [String: Any] = ["id": row.id]
                if let text1 = row.text1 { dictionary["text1"] = text1 }
                if let text2 = row.text2 { dictionary["text2"] = text2 }
                return dictionary
            }
            let (oursBatchInsert, oursBatchDelete) = try batcher.performAndWait { () throws in
                let insert = try measure { _ = try batcher.execute(BatchInsertRequest(entityName: "Note", objects: dictionaries)) }
                let delete = try measure { _ = try batcher.execute(BatchDeleteRequest(fetchRequest: Note.fetchRequest())) }
                return (insert, delete)
            }
            add("batch insert N rows", ours: oursBatchInsert, raw: rawBatchInsert, grdb: grdbBatchInsert)
            add("batch delete N rows", ours: oursBatchDelete, raw: rawBatchDelete, grdb: grdbBatchDelete)
        }
        for name in ["insert N objects + save", "fetch N objects, read every attribute", "fetch 1 by an unindexed attribute",
                     "\(lookups.count) lookups by object ID / key", "sum N rows by group (dictionary results)", "update one attribute of N + save", "delete N objects via a context",
                     "merge a did-save of 10,000 updates", "batch insert N rows", "batch delete N rows"] {
            guard let entry = samples[name] else { continue }
            let count = name.hasPrefix("merge") ? Swift.min(10_000, n) : (name.contains("lookups") ? lookups.count : n)
            results.append(Result(scenario: name, n: count, ours: median(entry.ours),
                                  raw: entry.raw.isEmpty ? nil : median(entry.raw), grdb: entry.grdb.isEmpty ? nil : median(entry.grdb)))
        }
        return results
    }

    /// A context holding 10,000 objects merges another context's save of updates to all of them.
    private func mergeScenario() throws -> Double {
        let count = Swift.min(10_000, n)
        let container = try container(scratchFile("merge.sqlite"))
        let saver = container.newBackgroundContext()
        try saver.performAndWait { () throws in
            for index in 0..<count {
                let note = Note(context: saver)
                note.id = Int32(index)
            }
            try saver.save()
        }
        let receiver = container.newBackgroundContext()
        let held = try receiver.performAndWait { try receiver.fetch(Note.fetchRequest()) }
        let box = NotificationBox()
        let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: saver, queue: nil) { box.notification = $0 }
        defer { NotificationCenter.default.removeObserver(observer) }
        try saver.performAndWait { () throws in
            for note in try saver.fetch(Note.fetchRequest()) { note.text1 = "merged" }
            try saver.save()
        }
        guard let notification = box.notification else { return -1 }
        return receiver.performAndWait {
            let elapsed = measure { receiver.mergeChanges(fromContextDidSave: notification) }
            precondition(held.allSatisfy { $0.text1 == "merged" })
            return elapsed
        }
    }
}

/// Carries one notification from the posting thread to the measuring code.
// @unchecked Sendable: written once by the posting thread before the saving call returns, read after.
final class NotificationBox: @unchecked Sendable {
    var notification: Notification?
}
