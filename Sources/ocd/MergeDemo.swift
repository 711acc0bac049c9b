import ArgumentParser
import Foundation
import OpenCoreData

/// `ocd demo merge`: the five merge policies on one conflicting note, then automatic merging.
struct MergeDemo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "The five merge policies on one conflicting note, then automatic merging on and off."
    )

    func run() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-merge-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }

        print("One note, texts (A, A, A), version 1. Context V sets text2 and text3 to \"V\";")
        print("context B sets text1 and text3 to \"B\" and saves (version 2); then V saves.\n")
        print("policy                        text1  text2  text3  outcome")
        let policies: [(String, MergePolicy)] = [
            ("error (default)", .error), ("mergeByPropertyStoreTrump", .mergeByPropertyStoreTrump),
            ("mergeByPropertyObjectTrump", .mergeByPropertyObjectTrump), ("overwrite", .overwrite), ("rollback", .rollback),
        ]
        for (index, (name, policy)) in policies.enumerated() {
            let container = try makeContainer(folder.appendingPathComponent("policy\(index).sqlite"))
            let (texts, outcome) = try conflict(in: container, policy: policy)
            let cells = texts.map { ($0 ?? "nil").padding(toLength: 7, withPad: " ", startingAt: 0) }.joined()
            print(name.padding(toLength: 30, withPad: " ", startingAt: 0) + cells + outcome)
        }

        print("\nAutomatic merging (the view context holds the note; a background context saves \"v2\"):")
        for automatic in [true, false] {
            let container = try makeContainer(folder.appendingPathComponent("auto-\(automatic).sqlite"))
            let line = try await automaticMerging(in: container, automatic: automatic)
            print("  automaticallyMergesChangesFromParent = \(automatic): \(line)")
        }
    }

    private func makeContainer(_ url: URL) throws -> PersistentContainer {
        let container = PersistentContainer(name: "Merge", managedObjectModel: ManagedObjectModel(Note.self))
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: url)]
        try container.loadPersistentStores()
        return container
    }

    private func conflict(in container: PersistentContainer, policy: MergePolicy) throws -> ([String?], String) {
        let setup = container.newBackgroundContext()
        let id = try setup.performAndWait { () throws in
            let note = Note(context: setup)
            (note.text1, note.text2, note.text3) = ("A", "A", "A")
            try setup.save()
            return note.objectID
        }
        let v = container.newBackgroundContext()
        v.mergePolicy = policy
        let b = container.newBackgroundContext()
        let vNote = try v.performAndWait { try v.existingObject(with: id) } as? Note
        let bNote = try b.performAndWait { try b.existingObject(with: id) } as? Note
        v.performAndWait { vNote?.text2 = "V"; vNote?.text3 = "V" }
        try b.performAndWait { () throws in
            bNote?.text1 = "B"
            bNote?.text3 = "B"
            try b.save()
        }
        let outcome = v.performAndWait { () -> String in
            do {
                try v.save()
                return "saved"
            } catch let error as CoreDataError {
                let versions = error.conflicts.first.map { " (version \($0.oldVersionNumber) → \($0.newVersionNumber))" } ?? ""
                return "threw \(error.code.rawValue)\(versions); nothing written"
            } catch {
                return "threw \(error)"
            }
        }
        let check = container.newBackgroundContext()
        let texts = try check.performAndWait { () throws -> [String?] in
            let note = try check.existingObject(with: id) as? Note
            return [note?.text1, note?.text2, note?.text3]
        }
        return (texts, outcome)
    }

    private func automaticMerging(in container: PersistentContainer, automatic: Bool) async throws -> String {
        let viewContext = container.viewContext
        viewContext.automaticallyMergesChangesFromParent = automatic
        let background = container.newBackgroundContext()
        let id = try await background.perform { () throws in
            let note = Note(context: background)
            note.text1 = "v1"
            try background.save()
            return note.objectID
        }
        let holder = try await viewContext.perform { try viewContext.existingObject(with: id).objectID }
        try await background.perform { () throws in
            (background.object(with: id) as? Note)?.text1 = "v2"
            try background.save()
        }
        try await Task.sleep(for: .milliseconds(50))          // let the main queue run the merge
        return try await viewContext.perform { () throws in
            let note = try viewContext.existingObject(with: holder) as? Note
            let seen = note?.text1 ?? "nil"
            guard !automatic else { return "sees \"\(seen)\", merged on the main queue after the save" }
            viewContext.refreshAllObjects()
            return "still sees \"\(seen)\" until refreshAllObjects(), then \"\(note?.text1 ?? "nil")\""
        }
    }
}
