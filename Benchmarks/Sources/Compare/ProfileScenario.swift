import Foundation
import OpenCoreData

/// One of our scenarios alone, once, for a profiler (`valgrind --tool=callgrind`, which counts
/// instructions repeatably on a noisy machine):
/// `Compare --profile insert|fetch|update|delete|iterate|batch-insert|batch-delete|lookup|fetch-one|quake-import [N]`
/// (`iterate`: batches of 500, as the memory scenario reads; `batch-insert`: one
/// `BatchInsertRequest` of N dictionaries, beside `raw-insert`; `batch-delete`: one
/// `BatchDeleteRequest` of every row; `lookup`: every object by its ID; `fetch-one`: a fetch
/// request per object, matching it by its ID); the peers doing the same work are
/// `raw-insert`, `grdb-fetch`, … The setup is included in the profile: subtract the profile of
/// the scenario before (insert before fetch, iterate, batch-delete, lookup and fetch-one, fetch before update and delete), each setup being
/// the previous scenario, to get one step's instructions.
enum ProfileScenario {
    static func run(_ name: String, n: Int) throws {
        if name == "raw-quake-import" { _ = HistoryScenario.rawImport(n: n, path: scratchFile("profile-raw-quakes.sqlite").path); return }
        if name.hasPrefix("raw-") || name.hasPrefix("grdb-") { return try runPeer(name, n: n) }
        if name == "quake-import" {
            // The Earthquakes import: a batch insert through a managed-object handler, into a
            // store with history tracking and a unique `code`.
            let container = try HistoryScenario.profileContainer(scratchFile("profile-quakes.sqlite"))
            markPhase("quake-import")
            try HistoryScenario.importQuakes(n: n, into: container)
            markPhase("end")
            return
        }
        let url = scratchFile("profile.sqlite")
        let container = PersistentContainer(name: "Profile", managedObjectModel: ManagedObjectModel(Note.self))
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: url)]
        try container.loadPersistentStores()
        let context = container.newBackgroundContext()
        try context.performAndWait { () throws in
            if name == "batch-insert" {
                // As the batch insert scenario does: the rows as dictionaries (made before the
                // request, as the scenario makes them before its clock starts), one request.
                let dictionaries: [[String: Any]] = RawNote.rows(n).map { row in
                    var dictionary: [String: Any] = ["id": row.id]
                    if let text1 = row.text1 { dictionary["text1"] = text1 }
                    if let text2 = row.text2 { dictionary["text2"] = text2 }
                    return dictionary
                }
                markPhase("batch-insert")
                _ = try context.execute(BatchInsertRequest(entityName: "Note", objects: dictionaries))
                markPhase("end")
                return
            }
            for row in RawNote.rows(n) {
                let note = Note(context: context)
                (note.id, note.text1, note.text2, note.text3) = (row.id, row.text1, row.text2, row.text3)
            }
            try context.save()
            guard name != "insert" else { return }
            context.reset()
            // Every object's ID, the objects forgotten: what `lookup` and `fetch-one` start from.
            let ids = name == "lookup" || name == "fetch-one" ? try context.fetch(FetchRequest<ManagedObjectID>(entityName: "Note")) : []
            if !ids.isEmpty { context.reset() }
            if name == "lookup" {
                // As the lookup scenario does: each object by its ID (a fault the store fulfils),
                // one attribute read.
                markPhase("lookup")
                var found = 0
                for id in ids where (try context.existingObject(with: id) as? Note)?.text1 != nil { found += 1 }
                precondition(found == ids.count)
                markPhase("end")
                return
            }
            if name == "fetch-one" {
                // A fetch request per object, each matching one row by its ID (a fetch's fixed
                // cost: planning, building and running its query).
                markPhase("fetch-one")
                var found = 0
                for id in ids {
                    let request = Note.fetchRequest()
                    request.predicate = NSPredicate(format: "self == %@", id)
                    found += try context.fetch(request).count
                }
                precondition(found == ids.count)
                markPhase("end")
                return
            }
            if name == "batch-delete" {
                markPhase("batch-delete")
                _ = try context.execute(BatchDeleteRequest(fetchRequest: Note.fetchRequest()))
                markPhase("end")
                return
            }
            if name == "iterate" {
                // As the memory scenario iterates: batches of 500, two attributes read.
                let request = Note.fetchRequest()
                request.fetchBatchSize = 500
                var checksum = 0
                for note in try context.fetchBatched(request) { checksum &+= Int(note.id) &+ (note.text1?.utf8.count ?? 0) }
                precondition(checksum != 0)
                return
            }
            if name == "fetch" { markPhase("fetch") }
            let notes = try context.fetch(Note.fetchRequest())
            switch name {
            case "fetch":
                markPhase("read")
                var checksum = 0
                for note in notes { checksum &+= Int(note.id) &+ (note.text1?.utf8.count ?? 0) &+ (note.text2?.utf8.count ?? 0) }
                precondition(checksum != 0)
                markPhase("end")
            case "update":
                markPhase("update")
                for note in notes { note.text2 = "updated" }
                markPhase("save")
                try context.save()
                markPhase("end")
            case "delete":
                markPhase("delete")
                for note in notes { context.delete(note) }
                markPhase("save")
                try context.save()
                markPhase("end")
            default:
                throw CoreDataError(.coreData, "Unknown scenario '\(name)': use insert, fetch, update, delete, iterate, batch-insert, batch-delete, lookup, fetch-one or quake-import.")
            }
        }
    }

    /// With `OCD_PROFILE_PHASES` set, prints the monotonic clock (seconds) at the start of a
    /// phase, to cut a `perf record -k CLOCK_MONOTONIC` profile with `perf report --time`.
    private static func markPhase(_ name: String) {
        guard ProcessInfo.processInfo.environment["OCD_PROFILE_PHASES"] != nil else { return }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        FileHandle.standardError.write(Data("phase \(name) \(Double(now.tv_sec) + Double(now.tv_nsec) / 1e9)\n".utf8))
    }

    /// A peer's steps, cumulative as ours are: insert N rows; then fetch them all and read every
    /// column; then update one column of each, or delete each, by key in one transaction.
    private static func runPeer(_ name: String, n: Int) throws {
        let steps = ["insert", "fetch", "update", "delete", "batch-delete"]
        let (peer, step) = name.hasPrefix("raw-") ? ("raw", String(name.dropFirst(4))) : ("grdb", String(name.dropFirst(5)))
        guard steps.contains(step) else {
            throw CoreDataError(.coreData, "Unknown scenario '\(name)': use raw- or grdb- followed by insert, fetch, update, delete or batch-delete.")
        }
        let rows = RawNote.rows(n)
        let keys = rows.map(\.pk)
        let path = scratchFile("profile-\(peer).sqlite").path
        if peer == "raw" {
            let raw = RawSQLitePeer(path: path)
            raw.insert(rows)
            guard step != "insert" else { return }
            if step == "batch-delete" { return raw.deleteAll() }
            precondition(raw.fetchAll().count == n)
            if step == "update" { raw.update(keys, text: "updated") }
            if step == "delete" { raw.delete(keys) }
        } else {
            let grdb = try GRDBPeer(path: path)
            try grdb.insert(rows)
            guard step != "insert" else { return }
            if step == "batch-delete" { return try grdb.deleteAll() }
            let count = try grdb.fetchAll().count
            precondition(count == n)
            if step == "update" { try grdb.update(keys, text: "updated") }
            if step == "delete" { try grdb.delete(keys) }
        }
    }
}
