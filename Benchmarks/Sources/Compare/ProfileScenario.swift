import Foundation
import OpenCoreData

/// One of our scenarios alone, once, for a profiler (`valgrind --tool=callgrind`, which counts
/// instructions repeatably on a noisy machine):
/// `Compare --profile insert|fetch|update|delete [N]`. The setup is included in the profile;
/// callgrind's per-function counts separate it.
enum ProfileScenario {
    static func run(_ name: String, n: Int) throws {
        let url = scratchFile("profile.sqlite")
        let container = PersistentContainer(name: "Profile", managedObjectModel: ManagedObjectModel(Note.self))
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: url)]
        try container.loadPersistentStores()
        let context = container.newBackgroundContext()
        try context.performAndWait { () throws in
            for row in RawNote.rows(n) {
                let note = Note(context: context)
                (note.id, note.text1, note.text2, note.text3) = (row.id, row.text1, row.text2, row.text3)
            }
            try context.save()
            guard name != "insert" else { return }
            context.reset()
            let notes = try context.fetch(Note.fetchRequest())
            switch name {
            case "fetch":
                var checksum = 0
                for note in notes { checksum &+= Int(note.id) &+ (note.text1?.utf8.count ?? 0) &+ (note.text2?.utf8.count ?? 0) }
                precondition(checksum != 0)
            case "update":
                for note in notes { note.text2 = "updated" }
                try context.save()
            case "delete":
                for note in notes { context.delete(note) }
                try context.save()
            default:
                throw CoreDataError(.coreData, "Unknown scenario '\(name)': use insert, fetch, update or delete.")
            }
        }
    }
}
