import OpenCoreData
import Testing
import TestSupport

/// Predicates across relationships, in SQL (SQLite store) and in memory (in-memory store and
/// unsaved changes), against expectations computed here from the data itself.
@Suite(.dedicatedThread) struct RelationshipPredicateTests {
    /// Folders "work" (memos a, b, c) and "home" (memo d); memo e in no folder. Tags: a {swift,
    /// linux}, b {swift}, d {uikit}.
    private struct Fixture {
        var folders: [String: String]  // memo body → folder title
        var tags: [String: Set<String>]
    }
    private let fixture = Fixture(
        folders: ["a": "work", "b": "work", "c": "work", "d": "home"],
        tags: ["a": ["swift", "linux"], "b": ["swift"], "d": ["uikit"]])
    private let bodies = ["a", "b", "c", "d", "e"]

    private func seed(_ context: ManagedObjectContext) {
        var folders: [String: Folder] = [:]
        var tags: [String: Tag] = [:]
        for body in bodies {
            let memo = Memo(context: context)
            memo.body = body
            if let title = fixture.folders[body] {
                let folder = folders[title] ?? { let f = Folder(context: context); f.title = title; folders[title] = f; return f }()
                memo.folder = folder
            }
            for name in fixture.tags[body] ?? [] {
                let tag = tags[name] ?? { let t = Tag(context: context); t.name = name; tags[name] = t; return t }()
                memo.tags.insert(tag)
            }
        }
    }

    /// Each case: a format, its arguments, and the memos it must select (computed from the fixture).
    private var cases: [(String, [Any], Set<String>)] {
        let folderOf = { (body: String) in fixture.folders[body] }
        let tagsOf = { (body: String) in fixture.tags[body] ?? [] }
        let select = { (test: (String) -> Bool) in Set(bodies.filter(test)) }
        return [
            ("folder.title == %@", ["work"], select { folderOf($0) == "work" }),
            ("folder.title BEGINSWITH[c] 'HO'", [], select { folderOf($0)?.hasPrefix("ho") == true }),
            ("folder.title == nil", [], select { folderOf($0) == nil }),
            ("folder == nil", [], select { folderOf($0) == nil }),
            ("ANY tags.name == 'swift'", [], select { tagsOf($0).contains("swift") }),
            ("SOME tags.name IN {'linux', 'uikit'}", [], select { !tagsOf($0).isDisjoint(with: ["linux", "uikit"]) }),
            ("ALL tags.name == 'swift'", [], select { tagsOf($0).allSatisfy { $0 == "swift" } }),
            ("NONE tags.name == 'swift'", [], select { !tagsOf($0).contains("swift") }),
            ("tags.@count > 1", [], select { tagsOf($0).count > 1 }),
            ("tags.@count == 0", [], select { tagsOf($0).isEmpty }),
            ("folder.memos.@count >= 3", [], select { body in folderOf(body).map { f in fixture.folders.values.filter { $0 == f }.count >= 3 } ?? false }),
            ("SUBQUERY(tags, $t, $t.name BEGINSWITH 's').@count > 0", [], select { tagsOf($0).contains { $0.hasPrefix("s") } }),
            ("NOT (ANY tags.name == 'linux') AND folder.title == 'work'", [], select { !tagsOf($0).contains("linux") && folderOf($0) == "work" }),
        ]
    }

    @Test(arguments: StoreKind.allCases)
    func storedGraphsAnswerAsTheDataSays(kind: StoreKind) throws {
        let stack = try TestStack(kind, model: graphModel())
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            seed(context)
            try context.save()
        }
        let reader = stack.container.newBackgroundContext()
        try reader.performAndWait { () throws in
            for (format, arguments, expected) in cases {
                let request = FetchRequest<Memo>(entityName: "Memo")
                request.predicate = NSPredicate(format: format, argumentArray: arguments)
                let found = Set(try reader.fetch(request).map(\.body))
                #expect(found == expected, "\(format)")
            }
        }
    }

    @Test func unsavedGraphsAnswerTheSame() throws {
        let stack = try TestStack(.sqlite, model: graphModel())
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            seed(context)      // not saved: evaluated in memory over the context's graph
            for (format, arguments, expected) in cases {
                let request = FetchRequest<Memo>(entityName: "Memo")
                request.predicate = NSPredicate(format: format, argumentArray: arguments)
                #expect(Set(try context.fetch(request).map(\.body)) == expected, "\(format)")
            }
        }
    }

    @Test func comparingWithObjectsAndAggregates() throws {
        let stack = try TestStack(.sqlite, model: graphModel())
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            seed(context)
            try context.save()
            let work = try #require(try context.fetch(FetchRequest<Folder>(entityName: "Folder")).first { $0.title == "work" })
            let request = FetchRequest<Memo>(entityName: "Memo")
            request.predicate = NSPredicate(format: "folder == %@", work)
            #expect(Set(try context.fetch(request).map(\.body)) == ["a", "b", "c"])
            request.predicate = NSPredicate(format: "folder IN %@", [work.objectID])
            #expect(try context.count(for: request) == 3)
            let folders = FetchRequest<Folder>(entityName: "Folder")
            folders.predicate = NSPredicate(format: "memos.@count == 1")
            #expect(try context.fetch(folders).map(\.title) == ["home"])
        }
    }

    @Test func badRelationshipPathsAreClearErrors() throws {
        let stack = try TestStack(.sqlite, model: graphModel())
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            for format in ["tags.name == 'x'", "folder.nope == 1", "nope.title == 'x'", "ANY folder.title == 'x'", "tags.@bogus > 1"] {
                let request = FetchRequest<Memo>(entityName: "Memo")
                request.predicate = NSPredicate(format: format)
                let error = try #require(throws: CoreDataError.self, "\(format)") { try context.fetch(request) }
                #expect(error.code == .coreData)
            }
        }
    }
}
