import OpenCoreData
import Testing
import TestSupport

/// A to-many relationship's members compared with objects (`ANY tags == %@`, `%@ IN tags`,
/// `tags CONTAINS %@`), in SQL on every store and in memory over unsaved objects, against
/// expectations computed here from the data itself.
@Suite(.dedicatedThread) struct ToManyMembershipPredicateTests {
    /// Memo body → the names of its tags; memos c and e have none.
    private let tagsOf: [String: Set<String>] = ["a": ["swift", "linux"], "b": ["swift"], "c": [], "d": ["uikit"], "e": []]

    private func seed(_ context: ManagedObjectContext) {
        var tags: [String: Tag] = [:]
        for name in ["swift", "linux", "uikit", "unused"] {
            let tag = Tag(context: context)
            tag.name = name
            tags[name] = tag
        }
        for (body, names) in tagsOf {
            let memo = Memo(context: context)
            memo.body = body
            for name in names { memo.tags.insert(tags[name]!) }
        }
    }

    /// Each case: a format, the tag names whose objects are its arguments (one list argument when
    /// `asList`), and the memos it must select.
    private var cases: [(format: String, tags: [String], asList: Bool, expected: Set<String>)] {
        let select = { (test: (Set<String>) -> Bool) in Set(tagsOf.filter { test($0.value) }.keys) }
        return [
            ("ANY tags == %@", ["swift"], false, select { $0.contains("swift") }),
            ("%@ IN tags", ["linux"], false, select { $0.contains("linux") }),
            ("tags CONTAINS %@", ["uikit"], false, select { $0.contains("uikit") }),
            ("tags CONTAINS %@", ["unused"], false, []),
            ("ANY tags IN %@", ["swift", "uikit"], true, select { !$0.isDisjoint(with: ["swift", "uikit"]) }),
            ("NONE tags == %@", ["swift"], false, select { !$0.contains("swift") }),
            ("ALL tags == %@", ["swift"], false, select { $0.allSatisfy { $0 == "swift" } }),
            ("ANY tags != %@", ["swift"], false, select { $0.contains { $0 != "swift" } }),
            ("NOT (%@ IN tags) AND ANY tags == %@", ["linux", "swift"], false, select { !$0.contains("linux") && $0.contains("swift") }),
        ]
    }

    private func check(_ context: ManagedObjectContext, objectIDs: Bool) throws {
        let tags = try context.fetch(FetchRequest<Tag>(entityName: "Tag"))
        func argument(_ name: String) throws -> Any {
            let tag = try #require(tags.first { $0.name == name })
            return objectIDs ? tag.objectID as Any : tag as Any
        }
        for (format, names, asList, expected) in cases {
            var arguments: [Any] = []
            for name in names { arguments.append(try argument(name)) }
            let request = FetchRequest<Memo>(entityName: "Memo")
            request.predicate = NSPredicate(format: format, argumentArray: asList ? [arguments] : arguments)
            #expect(Set(try context.fetch(request).map(\.body)) == expected, "\(format) \(names)")
            #expect(try context.count(for: request) == expected.count, "count: \(format) \(names)")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func savedMembersAreComparedWithObjectsInTheStore(kind: StoreKind) throws {
        let stack = try TestStack(kind, model: graphModel())
        let writer = stack.container.newBackgroundContext()
        try writer.performAndWait { () throws in
            seed(writer)
            try writer.save()
        }
        let reader = stack.container.newBackgroundContext()
        try reader.performAndWait { () throws in
            try check(reader, objectIDs: false)
            try check(reader, objectIDs: true)
        }
    }

    @Test func unsavedMembersAreComparedWithUnsavedObjects() throws {
        let stack = try TestStack(.sqlite, model: graphModel())
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            seed(context)      // not saved: the tags have temporary IDs, evaluated in memory
            try check(context, objectIDs: false)
        }
    }

    @Test func selfComparedWithAnUnsavedObjectFindsIt() throws {
        let stack = try TestStack(.sqlite, model: graphModel())
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            seed(context)
            try context.save()
            let fresh = Tag(context: context)
            fresh.name = "fresh"
            let request = FetchRequest<Tag>(entityName: "Tag")
            request.predicate = NSPredicate(format: "SELF == %@", fresh)
            #expect(try context.fetch(request).map(\.name) == ["fresh"])
            let swift = try #require(try context.fetch(FetchRequest<Tag>(entityName: "Tag")).first { $0.name == "swift" })
            request.predicate = NSPredicate(format: "SELF IN %@", [fresh, swift])
            #expect(Set(try context.fetch(request).map(\.name)) == ["fresh", "swift"])
            request.predicate = NSPredicate(format: "SELF != %@", swift)
            #expect(Set(try context.fetch(request).map(\.name)) == ["fresh", "linux", "uikit", "unused"])
        }
    }

    @Test func membersComparedWithPlainValuesAreClearErrors() throws {
        let stack = try TestStack(.sqlite, model: graphModel())
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            for (format, arguments) in [("ANY tags == %@", ["swift"] as [Any]), ("tags CONTAINS %@", [3]), ("ANY tags > %@", [3]), ("%@ IN tags", ["x"])] {
                let request = FetchRequest<Memo>(entityName: "Memo")
                request.predicate = NSPredicate(format: format, argumentArray: arguments)
                let error = try #require(throws: CoreDataError.self, "\(format)") { try context.fetch(request) }
                #expect(error.code == .coreData)
                #expect(error.message.contains("tags"), "\(error.message)")
            }
        }
    }
}
