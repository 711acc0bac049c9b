#if os(Linux)
import Foundation
import SwiftData
import Testing
import TestSupport

/// The history API as SwiftData code uses it: transactions after a token, their inserts,
/// updates and deletes by model class, the author, tombstones, and deleting old history.
@Suite(.dedicatedThread) struct HistoryTests {
    @Test func transactionsTellWhatChangedAfterAToken() throws {
        let container = try ModelContainer(for: Note.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        context.author = "editor"
        let note = Note(heading: "Plan")
        note.serial = 42
        context.insert(note)
        try context.save()
        let first = try #require(try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).last)
        #expect(first.author == "editor")
        guard case .insert(let insert)? = first.changes.first, let noteInsert = insert as? DefaultHistoryInsert<Note> else {
            Issue.record("the first transaction's change is not an insert of a Note: \(first.changes)")
            return
        }
        #expect(noteInsert.changedPersistentIdentifier == note.persistentModelID)

        note.heading = "Plan B"
        try context.save()
        context.delete(note)
        try context.save()

        let token = first.token
        let later = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > token }))
        #expect(later.count == 2)
        guard case .update(let update)? = later.first?.changes.first, let noteUpdate = update as? DefaultHistoryUpdate<Note> else {
            Issue.record("the second transaction's change is not an update of a Note")
            return
        }
        #expect(noteUpdate.updatedAttributes == [\Note.heading])
        guard case .delete(let delete)? = later.last?.changes.first, let noteDelete = delete as? DefaultHistoryDelete<Note> else {
            Issue.record("the third transaction's change is not a delete of a Note")
            return
        }
        #expect(noteDelete.tombstone[\.serial] == 42)
        #expect(noteDelete.tombstone[\.heading] == nil)

        let restored = try JSONDecoder().decode(DefaultHistoryToken.self, from: try JSONEncoder().encode(token))
        #expect(restored == token)
    }

    @Test func oldHistoryIsDeletedAndOnlyOldHistory() throws {
        let container = try ModelContainer(for: Note.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        for heading in ["a", "b", "c"] {
            context.insert(Note(heading: heading))
            try context.save()
        }
        let all = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        #expect(all.count == 3)
        let second = all[1].token
        let newest = all[2].token
        #expect(throws: (any Error).self) {
            try context.deleteHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token == newest }))
        }
        #expect(try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).count == 3)
        try context.deleteHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token <= second }))
        #expect(try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).map(\.token) == [newest])
    }
}
#endif
