import OpenCoreData
import Testing
import TestSupport

@Suite(.dedicatedThread) struct SmokeTests {
    @Test(arguments: StoreKind.allCases)
    func insertSaveFetch(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            for i in 0..<10 {
                let note = Note(context: context)
                note.id = Int32(i)
                note.text1 = "note \(i)"
            }
            try context.save()
            let request = Note.fetchRequest()
            request.predicate = NSPredicate(format: "id >= %d", 5)
            request.sortDescriptors = [NSSortDescriptor(key: "id", ascending: false)]
            let notes = try context.fetch(request)
            #expect(notes.map(\.id) == [9, 8, 7, 6, 5])
            #expect(notes.first?.text1 == "note 9")
        }
    }
}
