import ArgumentParser
import Foundation
import OpenCoreData

/// `ocd demo graph`: relationships, inverses, predicates across them, cascade deletes.
struct GraphDemo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "graph",
        abstract: "Relationships kept consistent on both sides, queried across, deleted by rule."
    )

    func run() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-graph-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let container = PersistentContainer(name: "Memos", managedObjectModel: ManagedObjectModel(Folder.self, Memo.self, Tag.self))
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: folder.appendingPathComponent("Memos.sqlite"))]
        try container.loadPersistentStores()
        let context = container.newBackgroundContext()
        try context.performAndWait { () throws in
            let work = Folder(context: context), home = Folder(context: context)
            work.title = "Work"
            home.title = "Home"
            let swift = Tag(context: context), linux = Tag(context: context)
            swift.name = "swift"
            linux.name = "linux"
            for (body, folder, tags) in [("port the store", work, [swift, linux]), ("write the docs", work, [swift]), ("water the plants", home, [])] {
                let memo = Memo(context: context)
                memo.body = body
                memo.folder = folder                 // the inverse follows: folder.memos now holds it
                memo.tags = Set(tags)                // and each tag's memos
            }
            print("Work holds \(work.memos.count) memos; \"swift\" tags \(swift.memos.count).")
            let moved = try requireMemo(work.memos.first { $0.body == "write the docs" })
            home.memos.insert(moved)                 // moving from the to-many side
            print("Moved \"\(moved.body)\": Work \(work.memos.count), Home \(home.memos.count), its folder is \(moved.folder?.title ?? "-").")
            try context.save()

            for format in ["folder.title == 'Work'", "ANY tags.name == 'swift'", "tags.@count == 0", "SUBQUERY(tags, $t, $t.name BEGINSWITH 'l').@count > 0"] {
                let request = Memo.fetchRequest()
                request.predicate = NSPredicate(format: format)
                request.sortDescriptors = [NSSortDescriptor(key: "body", ascending: true)]
                print("  \(format.padding(toLength: 56, withPad: " ", startingAt: 0)) → \(try context.fetch(request).map(\.body))")
            }

            context.delete(work)                     // cascade: its memos go too; tags only forget them
            try context.save()
            print("Deleted Work: \(try context.count(for: Memo.fetchRequest())) memos left; \"linux\" tags \(linux.memos.count).")
        }
    }
}

/// Unwraps a lookup the demo knows succeeds, with a clear error otherwise.
private func requireMemo(_ memo: Memo?) throws -> Memo {
    guard let memo else { throw CoreDataError(.coreData, "The demo's memo is missing.") }
    return memo
}
