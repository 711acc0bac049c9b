import OpenCoreData
import Testing
import TestSupport

@Suite(.dedicatedThread) struct CompoundPredicateTests {
    @Test(arguments: StoreKind.allCases)
    func compoundPredicatesAndTypedArithmetic(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = try stack.seededContext(ids: 1...6)
        try context.performAndWait { () throws in
            func ids(_ predicate: NSPredicate) throws -> [Int32] {
                let request = Note.fetchRequest()
                request.predicate = predicate
                request.sortDescriptors = [NSSortDescriptor(key: "id", ascending: true)]
                return try context.fetch(request).map(\.id)
            }
            let low = NSPredicate(format: "id < 3")
            let high = NSPredicate(format: "id > 4")
            let either = NSCompoundPredicate(orPredicateWithSubpredicates: [low, high])
            #expect(try ids(either) == [1, 2, 5, 6])
            #expect(try ids(NSCompoundPredicate(andPredicateWithSubpredicates: [NSPredicate(format: "id > 1"), low])) == [2])
            #expect(try ids(NSCompoundPredicate(notPredicateWithSubpredicate: either)) == [3, 4])
            #expect(either.compoundPredicateType == .or && either.subpredicates.count == 2)
            #expect(either.predicateFormat == "id < 3 OR id > 4")
            let broken = NSCompoundPredicate(andPredicateWithSubpredicates: [low, NSPredicate(format: "id ==")])
            #expect(throws: CoreDataError.self) { try ids(broken) }

            let typed = FetchRequest<Note>(predicate: #Predicate { $0.id * 2 + 1 > 9 }, sortBy: [SortDescriptor(\.id)])
            #expect(try context.fetch(typed).map(\.id) == [5, 6])
        }
    }
}
