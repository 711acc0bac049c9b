import OpenCoreData
import Testing
import TestSupport

@Suite(.dedicatedThread) struct TypedPredicateTests {
    private func seeded(_ kind: StoreKind) throws -> (TestStack, ManagedObjectContext) {
        let stack = try TestStack(kind)
        let context = try stack.seededContext(ids: 1...6) { note, id in
            note.text1 = id % 2 == 0 ? nil : "note \(id)"
            note.text2 = id <= 3 ? "alpha" : "beta"
        }
        return (stack, context)
    }

    private func ids(_ context: ManagedObjectContext, _ request: FetchRequest<Note>) throws -> [Int32] {
        try context.performAndWait { try context.fetch(request).map(\.id) }
    }

    @Test(arguments: StoreKind.allCases)
    func typedPredicatesAndSortsTranslate(kind: StoreKind) throws {
        let (stack, context) = try seeded(kind)
        let limit: Int32 = 3
        let wanted: [Int32] = [2, 5]
        let cases: [(Predicate<Note>, [Int32])] = [
            (#Predicate { $0.id == 4 }, [4]),
            (#Predicate { $0.id > limit && $0.text1 != nil }, [5]),
            (#Predicate { $0.id < 2 || $0.id >= 6 }, [1, 6]),
            (#Predicate { !($0.id <= 4) }, [5, 6]),
            (#Predicate { $0.text1 == nil }, [2, 4, 6]),
            (#Predicate { $0.text1 == "note 3" }, [3]),
            (#Predicate { wanted.contains($0.id) }, [2, 5]),
            (#Predicate { $0.text2?.starts(with: "al") == true }, [1, 2, 3]),
            (#Predicate { $0.text1?.contains("5") == true }, [5]),
            (#Predicate { $0.text1?.contains("5") == false }, [1, 3]),
            (#Predicate { $0.text1?.contains("5") == nil }, [2, 4, 6]),
            (#Predicate { $0.text2!.contains("et") }, [4, 5, 6]),
        ]
        for (predicate, expected) in cases {
            let request = FetchRequest<Note>(predicate: predicate, sortBy: [SortDescriptor(\.id)])
            #expect(try ids(context, request) == expected, "\(request.predicate?.predicateFormat ?? "")")
        }
        let reversed = FetchRequest<Note>(predicate: #Predicate { $0.id > 2 }, sortBy: [SortDescriptor(\.text2, order: .reverse), SortDescriptor(\.id, order: .reverse)])
        #expect(try ids(context, reversed) == [6, 5, 4, 3])
        _ = stack
    }

    @Test func unsupportedConstructsAreErrorsNamingThem() throws {
        let (stack, context) = try seeded(.inMemory)
        let integerDivision = FetchRequest<Note>(predicate: #Predicate { $0.id / 2 == 1 })
        let error = #expect(throws: CoreDataError.self) { try ids(context, integerDivision) }
        #expect(error?.message.contains("IntDivision") == true)
        let coalesce = FetchRequest<Note>(predicate: #Predicate { ($0.text1 ?? "") == "" })
        let coalesceError = #expect(throws: CoreDataError.self) { try ids(context, coalesce) }
        #expect(coalesceError?.message.contains("NilCoalesce") == true)
        _ = stack
    }
}
