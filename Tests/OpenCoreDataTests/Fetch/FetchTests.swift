// `import OpenCoreData` alone: it re-exports Foundation, and its NSPredicate / NSSortDescriptor
// win over Foundation's (a file that also imports Foundation gets "ambiguous for type lookup").
import OpenCoreData
import Testing
import TestSupport

/// Ten notes: ids 1…10; text1 "n<id>" for odd ids, nil for even ones; text2 "group a" for ids ≤ 5.
private func seed(_ stack: TestStack) throws -> ManagedObjectContext {
    let context = stack.container.newBackgroundContext()
    try context.performAndWait { () throws in
        for id in 1...10 {
            let note = Note(context: context)
            note.id = Int32(id)
            note.text1 = id % 2 == 1 ? "n\(id)" : nil
            note.text2 = id <= 5 ? "group a" : "group b"
        }
        try context.save()
    }
    return context
}

private func ids(_ context: ManagedObjectContext, _ predicate: NSPredicate?, sort: [NSSortDescriptor] = [NSSortDescriptor(key: "id", ascending: true)]) throws -> [Int32] {
    try context.performAndWait { () throws in
        let request = Note.fetchRequest()
        request.predicate = predicate
        request.sortDescriptors = sort
        return try context.fetch(request).map(\.id)
    }
}

@Suite(.dedicatedThread) struct FetchTests {
    static var cases: [(String, [Any], [Int32])] { [
        ("id == 3", [], [3]),
        ("id = 3", [], [3]),
        ("id != 3 AND id < 5", [], [1, 2, 4]),
        ("id <> 3 AND id <= 4", [], [1, 2, 4]),
        ("id > 8", [], [9, 10]),
        ("id >= 9", [], [9, 10]),
        ("id =< 2", [], [1, 2]),
        ("id => 10", [], [10]),
        ("3 > id", [], [1, 2]),
        ("id == %d", [4], [4]),
        ("id == %i OR id == %ld", [1, 2], [1, 2]),
        ("id > %f", [8.5], [9, 10]),
        ("%K == %@", ["id", 5], [5]),
        ("text1 == %@", ["n7"], [7]),
        ("text1 == nil", [], [2, 4, 6, 8, 10]),
        ("text1 != nil AND id > 5", [], [7, 9]),
        ("text1 != 'n1' AND id < 4", [], [2, 3]),
        ("NOT (text1 == 'n1') AND id < 4", [], [2, 3]),
        ("!(id > 2)", [], [1, 2]),
        ("id < 3 || id > 9", [], [1, 2, 10]),
        ("id < 3 && text1 != nil", [], [1]),
        ("(id < 3 OR id > 8) AND NOT text1 == nil", [], [1, 9]),
        ("text2 == \"group a\" AND text1 == NULL", [], [2, 4]),
        ("id IN {2, 4, 6}", [], [2, 4, 6]),
        ("id IN %@", [[1, 10]], [1, 10]),
        ("id BETWEEN {3, 5}", [], [3, 4, 5]),
        ("TRUEPREDICATE", [], Array(1...10)),
        ("FALSEPREDICATE", [], []),
        ("text1 > 'n5'", [], [7, 9]),
        ("text1 == text1", [], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]),
        ("id == 1.0", [], [1]),
        ("id == YES", [], [1]),
        ("id + 1 == 4", [], [3]),
        ("id * 2 > 17", [], [9, 10]),
        ("(id - 1) * 2 >= 16", [], [9, 10]),
        ("id / 4 == 2.5", [], [10]),
        ("id / 0 == 1", [], []),
        ("10 - id < 2", [], [9, 10]),
        ("(id > 8) AND (id + 0 < 10)", [], [9]),
        ("id > 1 + 2 * 4", [], [10]),
    ] }

    @Test(arguments: StoreKind.allCases)
    func theFormatGrammarSelectsTheRightObjects(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = try seed(stack)
        for (format, arguments, expected) in Self.cases {
            let predicate = NSPredicate(format: format, argumentArray: arguments)
            #expect(try ids(context, predicate) == expected, "\(format)")
            // The printed format parses back to the same predicate and selection.
            let reparsed = NSPredicate(format: predicate.predicateFormat)
            #expect(reparsed == predicate, "\(format) → \(predicate.predicateFormat)")
        }
    }

    /// `NSPredicate(block:)` tests objects in memory; a fetch request refuses it with 134060.
    @Test(arguments: StoreKind.allCases)
    func blockPredicatesTestObjectsInMemoryAndAreRefusedByFetches(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = try seed(stack)
        let even = NSPredicate { object, _ in ((object as? Note)?.id ?? 1) % 2 == 0 }
        #expect(even == even && even != NSPredicate { _, _ in true })
        let error = #expect(throws: CoreDataError.self) { try ids(context, even) }
        #expect(error?.code == .coreData)
        let kept = try context.performAndWait { () throws in
            try context.fetch(Note.fetchRequest()).filter { try even.evaluate(with: $0) }.map(\.id).sorted()
        }
        #expect(kept == [2, 4, 6, 8, 10])
    }

    @Test(arguments: StoreKind.allCases)
    func sortingLimitsAndOffsets(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = try seed(stack)
        #expect(try ids(context, nil, sort: [NSSortDescriptor(key: "id", ascending: false)]) == [10, 9, 8, 7, 6, 5, 4, 3, 2, 1])
        // nil sorts first ascending, as in SQLite; ties fall back to the primary key.
        #expect(try ids(context, nil, sort: [NSSortDescriptor(key: "text1", ascending: true)]) == [2, 4, 6, 8, 10, 1, 3, 5, 7, 9])
        #expect(try ids(context, nil, sort: [NSSortDescriptor(key: "text2", ascending: false), NSSortDescriptor(key: "id", ascending: false)]) == [10, 9, 8, 7, 6, 5, 4, 3, 2, 1])
        // Key paths, as Xcode's templates write them.
        #expect(try ids(context, nil, sort: [NSSortDescriptor(keyPath: \Note.text1, ascending: false), NSSortDescriptor(keyPath: \Note.id, ascending: true)])
                == [9, 7, 5, 3, 1, 2, 4, 6, 8, 10])
        #expect(NSSortDescriptor(keyPath: \Note.id, ascending: false) == NSSortDescriptor(key: "id", ascending: false))
        try context.performAndWait { () throws in
            let request = Note.fetchRequest()
            request.sortDescriptors = [NSSortDescriptor(key: "id", ascending: true)]
            request.fetchLimit = 3
            request.fetchOffset = 2
            #expect(try context.fetch(request).map(\.id) == [3, 4, 5])
            #expect(try context.count(for: request) == 3)
            request.fetchLimit = 0
            request.fetchOffset = 8
            #expect(try context.fetch(request).map(\.id) == [9, 10])
            #expect(try context.count(for: request) == 2)
            let all = Note.fetchRequest()
            all.predicate = NSPredicate(format: "text1 != nil")
            #expect(try context.count(for: all) == 5)
            // A limit of Int.max with an offset is everything after the offset (also where the
            // window is applied in Swift: PostgreSQL with Core Data's string operators).
            request.fetchLimit = Int.max
            request.fetchOffset = 7
            #expect(try context.fetch(request).map(\.id) == [8, 9, 10])
            request.predicate = NSPredicate(format: "text2 CONTAINS[cd] %@", "GROUP")
            #expect(try context.fetch(request).map(\.id) == [8, 9, 10])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func pendingChangesCountUnlessTurnedOff(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = try seed(stack)
        try context.performAndWait { () throws in
            let request = Note.fetchRequest()
            request.predicate = NSPredicate(format: "id > 8")
            request.sortDescriptors = [NSSortDescriptor(key: "id", ascending: true)]
            let inserted = Note(context: context)
            inserted.id = 50
            let nine = try context.fetch(request)[0]
            nine.id = 1                                   // no longer matches
            let oneRequest = Note.fetchRequest()
            oneRequest.predicate = NSPredicate(format: "id == 1")
            let one = try #require(try context.fetch(oneRequest).first)
            one.id = 20                                   // now matches
            let ten = try context.fetch(request).first { $0.id == 10 }
            context.delete(try #require(ten))
            #expect(try context.fetch(request).map(\.id) == [20, 50])
            #expect(try context.count(for: request) == 2)
            request.fetchLimit = 1
            #expect(try context.fetch(request).map(\.id) == [20])
            request.fetchLimit = 0
            request.includesPendingChanges = false
            #expect(Set(try context.fetch(request).map(\.objectID)).count == 2)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func registeredObjectsKeepTheirInMemoryState(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = try seed(stack)
        try context.performAndWait { () throws in
            let request = Note.fetchRequest()
            request.predicate = NSPredicate(format: "id == 1")
            let note = try #require(try context.fetch(request).first)
            note.text3 = "unsaved"
            let again = try context.fetch(request)
            #expect(again.first === note)
            #expect(again.first?.text3 == "unsaved")
        }
    }

    @Test func malformedPredicatesAreErrorsWithAPosition() throws {
        let stack = try TestStack(.sqlite)
        let context = try seed(stack)
        let cases: [(String, [Any], String)] = [
            ("id == == 3", [], "at offset 6"),
            ("id ==", [], "the end of the format"),
            ("(id == 3", [], "expected ')'"),
            ("id == 'open", [], "never closed"),
            ("id == %d", [], "needs an argument"),
            ("id == %d", [1, 2], "2 arguments were given but the format uses only 1"),
            ("id == %d", ["x"], "%d needs an integer argument"),
            ("id # 3", [], "but found '#' (at offset 3)"),
            ("id == 3 ^", [], "unexpected character '^'"),
            ("id == 3 AND", [], "the end of the format"),
        ]
        for (format, arguments, fragment) in cases {
            let predicate = NSPredicate(format: format, argumentArray: arguments)
            #expect(throws: CoreDataError.self) { try predicate.validate() }
            let error = #expect(throws: CoreDataError.self, "\(format)") { try ids(context, predicate) }
            #expect(error?.message.contains(fragment) == true, "\(format): \(error?.message ?? "")")
            #expect(error?.message.contains("Unable to parse the predicate format") == true)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func unknownKeysTypeMismatchesAndBadRequestsAreErrors(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = try seed(stack)
        let unknown = #expect(throws: CoreDataError.self) { try ids(context, NSPredicate(format: "age == 3")) }
        #expect(unknown?.message.contains("does not have") == true)
        #expect(unknown?.message.contains("id, text1, text2, text3") == true)
        let mismatch = #expect(throws: CoreDataError.self) { try ids(context, NSPredicate(format: "id == 'x'")) }
        #expect(mismatch?.message.contains("Integer 32") == true)
        let stringOrder = #expect(throws: CoreDataError.self) { try ids(context, NSPredicate(format: "text1 > 3")) }
        #expect(stringOrder?.key == "text1")
        #expect(throws: CoreDataError.self) { try ids(context, nil, sort: [NSSortDescriptor(key: "nope", ascending: true)]) }
        #expect(throws: CoreDataError.self) { try ids(context, NSPredicate(format: "id == $LIMIT")) }
        #expect(try ids(context, NSPredicate(format: "id == $LIMIT").withSubstitutionVariables(["LIMIT": 4])) == [4])
        try context.performAndWait { () throws in
            let missing = FetchRequest<ManagedObject>(entityName: "Missing")
            let error = #expect(throws: CoreDataError.self) { try context.fetch(missing) }
            #expect(error?.message.contains("Note, Sample") == true)
            let wrongClass = FetchRequest<Note>(entityName: "Sample")
            #expect(throws: CoreDataError.self) { try context.fetch(wrongClass) }
            let negative = Note.fetchRequest()
            negative.fetchLimit = -1
            #expect(throws: CoreDataError.self) { try context.fetch(negative) }
        }
    }

    @Test func injectionAttemptsReturnNothingAndLeaveTheStoreIntact() throws {
        let stack = try TestStack(.sqlite)
        let context = try seed(stack)
        #expect(try ids(context, NSPredicate(format: "text1 == %@", "n1' OR 1=1 --")) == [])
        #expect(try ids(context, NSPredicate(format: "text1 == %@", "\"; DROP TABLE ZNOTE; --")) == [])
        let key = #expect(throws: CoreDataError.self) { try ids(context, NSPredicate(format: "%K == 1", "id; DROP TABLE ZNOTE")) }
        #expect(key?.code == .coreData)
        #expect(try ids(context, nil).count == 10)
    }

    @Test func untypedRequestsAndSelfComparisons() throws {
        let stack = try TestStack(.sqlite)
        let context = try seed(stack)
        try context.performAndWait { () throws in
            let request = FetchRequest<ManagedObject>(entityName: "Note")
            request.predicate = NSPredicate(format: "id <= 2")
            request.sortDescriptors = [NSSortDescriptor(key: "id", ascending: true)]
            let objects = try context.fetch(request)
            #expect(objects.compactMap { $0.value(forKey: "id") as? Int32 } == [1, 2])
            let byObject = Note.fetchRequest()
            byObject.predicate = NSPredicate(format: "SELF == %@", objects[1])
            #expect(try context.fetch(byObject).map(\.id) == [2])
            byObject.predicate = NSPredicate(format: "SELF IN %@", objects.map(\.objectID))
            #expect(try context.count(for: byObject) == 2)
            let evaluated = try NSPredicate(format: "id == 2").evaluate(with: objects[1])
            #expect(evaluated)
        }
    }
}
