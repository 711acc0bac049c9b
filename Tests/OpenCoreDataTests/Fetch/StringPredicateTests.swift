import OpenCoreData
import Testing
import TestSupport

/// Notes whose text1 are, by id: 1 "Émile", 2 "emile", 3 "EMILE", 4 "Zoë", 5 "100% sure", 6 "a_b",
/// 7 "it's", 8 "", 9 nil, 10 "file10", 11 "file9", 12 "File2".
private func seedTexts(_ stack: TestStack) throws -> ManagedObjectContext {
    let texts: [String?] = ["Émile", "emile", "EMILE", "Zoë", "100% sure", "a_b", "it's", "", nil, "file10", "file9", "File2"]
    let context = stack.container.newBackgroundContext()
    try context.performAndWait { () throws in
        for (index, text) in texts.enumerated() {
            let note = Note(context: context)
            note.id = Int32(index + 1)
            note.text1 = text
        }
        try context.save()
    }
    return context
}

private func ids(_ context: ManagedObjectContext, _ format: String, _ arguments: [Any] = []) throws -> [Int32] {
    try context.performAndWait { () throws in
        let request = Note.fetchRequest()
        request.predicate = NSPredicate(format: format, argumentArray: arguments)
        request.sortDescriptors = [NSSortDescriptor(key: "id", ascending: true)]
        return try context.fetch(request).map(\.id)
    }
}

@Suite(.dedicatedThread) struct StringPredicateTests {
    static var cases: [(String, [Any], [Int32])] { [
        ("text1 CONTAINS 'mil'", [], [1, 2]),
        ("text1 CONTAINS[c] 'MIL'", [], [1, 2, 3]),
        ("text1 CONTAINS[cd] 'e'", [], [1, 2, 3, 4, 5, 10, 11, 12]),
        ("text1 CONTAINS[d] 'E'", [], [1, 3]),
        ("text1 CONTAINS ''", [], []),
        ("text1 BEGINSWITH 'E'", [], [3]),
        ("text1 BEGINSWITH[cd] 'e'", [], [1, 2, 3]),
        ("text1 ENDSWITH[c] 'LE'", [], [1, 2, 3]),
        ("text1 ENDSWITH 'ë'", [], [4]),
        ("text1 ENDSWITH[d] 'e'", [], [1, 2, 4, 5]),
        ("text1 LIKE 'e*'", [], [2]),
        ("text1 LIKE[c] 'e?ile'", [], [2, 3]),
        ("text1 LIKE[cd] '?mile'", [], [1, 2, 3]),
        ("text1 LIKE '100% *'", [], [5]),
        ("text1 LIKE '100%% *'", [], [5]),
        ("text1 LIKE 'a_b'", [], [6]),
        ("text1 LIKE '*'", [], [1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12]),
        ("text1 LIKE ''", [], [8]),
        ("text1 MATCHES '[a-z]+'", [], [2]),
        ("text1 MATCHES[c] 'file[0-9]+'", [], [10, 11, 12]),
        ("text1 MATCHES 'mil'", [], []),
        ("text1 ==[c] 'EMILE'", [], [2, 3]),
        ("text1 ==[cd] 'emile'", [], [1, 2, 3]),
        ("text1 !=[cd] 'emile' AND id < 10", [], [4, 5, 6, 7, 8, 9]),      // nil != "emile"
        ("text1 IN[c] {'zoë', 'IT\\'S'}", [], [4, 7]),
        ("text1 == \"it's\"", [], [7]),
        ("text1 CONTAINS %@", ["%"], [5]),
        ("NOT text1 CONTAINS[c] 'e'", [], [4, 6, 7, 8, 9]),
    ] }

    @Test(arguments: StoreKind.allCases)
    func stringOperatorsAndModifiers(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = try seedTexts(stack)
        for (format, arguments, expected) in Self.cases {
            #expect(try ids(context, format, arguments) == expected, "\(format)")
            let predicate = NSPredicate(format: format, argumentArray: arguments)
            #expect(NSPredicate(format: predicate.predicateFormat) == predicate, "\(format) → \(predicate.predicateFormat)")
        }
    }

    /// A window over rows a string operator selects, scattered through a table larger than the
    /// chunks PostgreSQL reads them in: the same notes as the whole result, cut.
    @Test(arguments: StoreKind.allCases)
    func aWindowOverStringMatchesIsTheWholeResultCut(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = try stack.seededContext(ids: 1...1_500) { note, id in
            note.text1 = id % 7 == 0 ? "Émile \(id)" : (id % 11 == 0 ? nil : "plain \(id)")
            note.text2 = "\(id % 4)"
        }
        try context.performAndWait { () throws in
            let matching = (1...1_500).filter { $0 % 7 == 0 }.map(Int32.init)
            for (offset, limit, ascending) in [(0, 5, false), (3, 4, true), (150, 30, true), (200, 10, false), (0, 1_000, true)] {
                let request = Note.fetchRequest()
                request.predicate = NSPredicate(format: "text1 BEGINSWITH[cd] 'emile'")
                request.sortDescriptors = [NSSortDescriptor(key: "text2", ascending: ascending), NSSortDescriptor(key: "id", ascending: ascending)]
                request.fetchOffset = offset
                request.fetchLimit = limit
                let all = matching.sorted { a, b in
                    let (x, y) = ("\(a % 4)", "\(b % 4)")
                    return x != y ? (ascending ? x < y : x > y) : (ascending ? a < b : a > b)
                }
                let expected = Array(all.dropFirst(offset).prefix(limit))
                #expect(try context.fetch(request).map(\.id) == expected, "offset \(offset), limit \(limit)")
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func stringOperatorsOnOtherTypesAndBadPatternsAreErrors(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = try seedTexts(stack)
        let onNumber = #expect(throws: CoreDataError.self) { try ids(context, "id CONTAINS '1'") }
        #expect(onNumber?.message.contains("apply to String attributes") == true)
        #expect(throws: CoreDataError.self) { try ids(context, "text1 MATCHES '('") }
        #expect(throws: CoreDataError.self) { try ids(context, "text1 CONTAINS 3") }
        let modifier = #expect(throws: CoreDataError.self) { try ids(context, "id <[c] 3") }
        #expect(modifier?.message.contains("applies to string comparisons") == true)
        #expect(throws: CoreDataError.self) { try ids(context, "text1 CONTAINS[x] 'a'") }
        #expect(throws: CoreDataError.self) { try ids(context, "ANY text1 == 'a'") }
    }

    @Test(arguments: StoreKind.allCases)
    func sortSelectors(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = try seedTexts(stack)
        func order(_ selector: String?) throws -> [Int32] {
            try context.performAndWait { () throws in
                let request = Note.fetchRequest()
                request.predicate = NSPredicate(format: "id >= 10")
                request.sortDescriptors = [selector.map { NSSortDescriptor(key: "text1", ascending: true, selector: $0) } ?? NSSortDescriptor(key: "text1", ascending: true)]
                return try context.fetch(request).map(\.id)
            }
        }
        #expect(try order(nil) == [12, 10, 11])                               // "File2" < "file10" < "file9" by bytes
        #expect(try order("compare:") == [12, 10, 11])
        #expect(try order("caseInsensitiveCompare:") == [10, 12, 11])         // file10 < File2 < file9
        #expect(try order("localizedStandardCompare:") == [12, 11, 10])       // numbers by value: 2 < 9 < 10
        try context.performAndWait { () throws in
            let request = Note.fetchRequest()
            request.sortDescriptors = [NSSortDescriptor(key: "text1", ascending: true, selector: "frobnicate:")]
            #expect(throws: CoreDataError.self) { try context.fetch(request) }
        }
    }

    /// A pattern that closes the group the anchors are wrapped around (`a)|(b`) is not a regular
    /// expression on its own: refused, never matching strings that only start or end right.
    @Test(arguments: StoreKind.allCases)
    func matchesPatternsCannotEscapeTheirAnchoring(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = try seedTexts(stack)
        for pattern in ["emile)|(file10", "(?:emile)|(?:file9", "emile\\Q)|(x"] {
            #expect(throws: CoreDataError.self, "\(pattern)") { try ids(context, "text1 MATCHES %@", [pattern]) }
        }
        #expect(try ids(context, "text1 MATCHES %@", ["emile|file10"]) == [2, 10])
        #expect(try ids(context, "text1 MATCHES %@", ["mile|file1"]) == [])
        _ = stack
    }
}
