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
            (#Predicate { ($0.text1 ?? "none") == "none" }, [2, 4, 6]),
            (#Predicate { ($0.text1 ?? "note 1") == "note 1" }, [1, 2, 4, 6]),
            (#Predicate { ($0.text1 ?? $0.text2 ?? "") == "alpha" }, [2]),
            (#Predicate { $0.text1?.contains("3") ?? false }, [3]),
            (#Predicate { $0.text1?.contains("3") ?? true }, [2, 3, 4, 6]),
            (#Predicate { ($0.id > 4 ? $0.text2 : "x") == "beta" }, [5, 6]),
            (#Predicate { $0.id > 4 ? $0.text1 == nil : $0.id == 1 }, [1, 6]),
        ]
        for (predicate, expected) in cases {
            let request = FetchRequest<Note>(predicate: predicate, sortBy: [SortDescriptor(\.id)])
            #expect(try ids(context, request) == expected, "\(request.predicate?.predicateFormat ?? "")")
        }
        let reversed = FetchRequest<Note>(predicate: #Predicate { $0.id > 2 }, sortBy: [SortDescriptor(\.text2, order: .reverse), SortDescriptor(\.id, order: .reverse)])
        #expect(try ids(context, reversed) == [6, 5, 4, 3])
        // Foundation's sort descriptors assigned to a request, as NSSortDescriptor(_:) converts them.
        let assigned = Note.fetchRequest()
        assigned.sortDescriptors = [NSSortDescriptor(SortDescriptor(\Note.text2)), NSSortDescriptor(SortDescriptor(\Note.id, order: .reverse))]
        #expect(try ids(context, assigned) == [3, 2, 1, 6, 5, 4])
        _ = stack
    }

    @Test func unsupportedConstructsAreErrorsNamingThem() throws {
        let (stack, context) = try seeded(.inMemory)
        let integerDivision = FetchRequest<Note>(predicate: #Predicate { $0.id / 2 == 1 })
        let error = #expect(throws: CoreDataError.self) { try ids(context, integerDivision) }
        #expect(error?.message.contains("IntDivision") == true)
        let remainder = FetchRequest<Note>(predicate: #Predicate { $0.id % 2 == 1 })
        let remainderError = #expect(throws: CoreDataError.self) { try ids(context, remainder) }
        #expect(remainderError?.message.contains("IntRemainder") == true, "\(remainderError?.message ?? "")")
        _ = stack
    }

    /// Memos a (folder "work" in drawer "beta", tags swift + linux), b (folder "work", tag
    /// swift), c (folder "home", no drawer, no tags), d (no folder, tag uikit).
    private func graph(_ kind: StoreKind) throws -> (TestStack, ManagedObjectContext) {
        let stack = try TestStack(kind, model: graphModel())
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let beta = Drawer(context: context)
            beta.label = "beta"
            let work = Folder(context: context)
            work.title = "work"
            work.drawer = beta
            let home = Folder(context: context)
            home.title = "home"
            var tags: [String: Tag] = [:]
            for name in ["swift", "linux", "uikit"] {
                let tag = Tag(context: context)
                tag.name = name
                tags[name] = tag
            }
            for (body, folder, names) in [("a", work, ["swift", "linux"]), ("b", work, ["swift"]), ("c", home, []), ("d", nil, ["uikit"])] as [(String, Folder?, [String])] {
                let memo = Memo(context: context)
                memo.body = body
                memo.folder = folder
                for name in names { memo.tags.insert(tags[name]!) }
            }
            try context.save()
        }
        return (stack, context)
    }

    @Test(arguments: StoreKind.allCases)
    func typedPredicatesFollowRelationships(kind: StoreKind) throws {
        let (stack, context) = try graph(kind)
        let title = "work"
        let cases: [(Predicate<Memo>, [String])] = [
            (#Predicate { $0.folder?.title == title }, ["a", "b"]),
            (#Predicate { $0.folder?.title != "work" }, ["c", "d"]),
            (#Predicate { $0.folder?.drawer?.label == "beta" }, ["a", "b"]),
            (#Predicate { $0.folder == nil }, ["d"]),
            (#Predicate { $0.tags.contains { $0.name == "swift" } }, ["a", "b"]),
            (#Predicate { $0.tags.contains { $0.name.starts(with: "li") || $0.name == "uikit" } }, ["a", "d"]),
            (#Predicate { $0.tags.allSatisfy { $0.name == "swift" } }, ["b", "c"]),
            (#Predicate { !$0.tags.contains { $0.name == "swift" } && $0.folder != nil }, ["c"]),
            (#Predicate { $0.folder?.memos.contains { $0.body == "c" } == true }, ["c"]),
        ]
        try context.performAndWait { () throws in
            for (index, (predicate, expected)) in cases.enumerated() {
                let request = FetchRequest<Memo>(predicate: predicate, sortBy: [SortDescriptor(\.body)])
                #expect(try context.fetch(request).map(\.body) == expected, "case \(index): \(request.predicate?.predicateFormat ?? "")")
            }
        }
        _ = stack
    }

    @Test func membersComparedWithTheFetchedObjectAreAClearError() throws {
        let (stack, context) = try graph(.inMemory)
        let request = FetchRequest<Memo>(predicate: #Predicate { memo in memo.tags.contains { tag in tag.name == memo.body } })
        let error = #expect(throws: CoreDataError.self) { try context.performAndWait { try context.fetch(request) } }
        #expect(error?.message.contains("fetched object itself") == true, "\(error?.message ?? "")")
        _ = stack
    }
}
