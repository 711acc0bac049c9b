import Foundation
import OpenCoreData
import Testing
import TestSupport

/// Sorting by an attribute of a to-one's destination (`folder.title`, `folder.drawer.label`), in
/// SQL on every store, in memory over unsaved changes, across stores and in a sectioned results
/// controller; expected orders are computed here from the data itself.
@Suite(.dedicatedThread) struct SortThroughRelationshipTests {
    /// Memo body → its folder's title; folder title → its drawer's label. Memo e has no folder,
    /// folder "archive" no drawer. Titles mix cases so that binary and case-insensitive orders differ.
    private struct Graph {
        var folderOf: [String: String] = ["a": "work", "b": "Home", "c": "archive", "d": "work", "e": "", "f": "Home"]
        var drawerOf: [String: String] = ["work": "beta", "Home": "alpha"]
        var bodies: [String] { folderOf.keys.sorted() }
        func title(_ body: String) -> String? { folderOf[body].flatMap { $0.isEmpty ? nil : $0 } }
        func label(_ body: String) -> String? { title(body).flatMap { drawerOf[$0] } }
    }

    private func seed(_ graph: Graph, in context: ManagedObjectContext) {
        var drawers: [String: Drawer] = [:]
        var folders: [String: Folder] = [:]
        for (title, label) in graph.drawerOf {
            let drawer = Drawer(context: context)
            drawer.label = label
            drawers[title] = drawer
        }
        for body in graph.bodies {
            let memo = Memo(context: context)
            memo.body = body
            guard let title = graph.title(body) else { continue }
            memo.folder = folders[title] ?? {
                let folder = Folder(context: context)
                folder.title = title
                folder.drawer = drawers[title]
                folders[title] = folder
                return folder
            }()
        }
    }

    /// The bodies ordered by `value` (nil first ascending, last descending, as SQLite and the
    /// in-memory store order a missing value), then by body ascending.
    private func expected(_ graph: Graph, by value: (String) -> String?, ascending: Bool, folding: Bool = false) -> [String] {
        graph.bodies.sorted { a, b in
            let x = value(a).map { folding ? $0.lowercased() : $0 }, y = value(b).map { folding ? $0.lowercased() : $0 }
            if x != y {
                switch (x, y) {
                case (nil, _): return ascending
                case (_, nil): return !ascending
                case let (x?, y?): return ascending ? Array(x.utf8).lexicographicallyPrecedes(y.utf8) : Array(y.utf8).lexicographicallyPrecedes(x.utf8)
                }
            }
            return a < b
        }
    }

    private func fetch(_ context: ManagedObjectContext, _ key: String, ascending: Bool, selector: String? = nil, offset: Int = 0, limit: Int = 0) throws -> [String] {
        let request = FetchRequest<Memo>(entityName: "Memo")
        let first = selector.map { NSSortDescriptor(key: key, ascending: ascending, selector: $0) } ?? NSSortDescriptor(key: key, ascending: ascending)
        request.sortDescriptors = [first, NSSortDescriptor(key: "body", ascending: true)]
        request.fetchOffset = offset
        request.fetchLimit = limit
        return try context.fetch(request).map(\.body)
    }

    private func checkOrders(_ context: ManagedObjectContext, _ graph: Graph) throws {
        for ascending in [true, false] {
            let byTitle = expected(graph, by: graph.title, ascending: ascending)
            #expect(try fetch(context, "folder.title", ascending: ascending) == byTitle, "folder.title ascending: \(ascending)")
            #expect(try fetch(context, "folder.title", ascending: ascending, offset: 2, limit: 3) == Array(byTitle.dropFirst(2).prefix(3)), "window, ascending: \(ascending)")
            #expect(try fetch(context, "folder.drawer.label", ascending: ascending) == expected(graph, by: graph.label, ascending: ascending), "folder.drawer.label ascending: \(ascending)")
            #expect(try fetch(context, "folder.title", ascending: ascending, selector: "caseInsensitiveCompare:")
                    == expected(graph, by: graph.title, ascending: ascending, folding: true), "caseInsensitiveCompare: ascending: \(ascending)")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func storedRowsAreSortedByTheirDestinationsAttribute(kind: StoreKind) throws {
        let stack = try TestStack(kind, model: graphModel())
        let writer = stack.container.newBackgroundContext()
        try writer.performAndWait { () throws in
            seed(Graph(), in: writer)
            try writer.save()
        }
        let reader = stack.container.newBackgroundContext()
        try reader.performAndWait { () throws in try checkOrders(reader, Graph()) }
    }

    @Test func unsavedChangesAreSortedAsTheContextSeesThem() throws {
        let stack = try TestStack(.sqlite, model: graphModel())
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            seed(Graph(), in: context)
            try context.save()
            // Rename a folder and add a memo to another, without saving.
            var graph = Graph()
            let folders = try context.fetch(FetchRequest<Folder>(entityName: "Folder"))
            try #require(folders.first { $0.title == "archive" }).title = "zebra"
            for (body, title) in graph.folderOf where title == "archive" { graph.folderOf[body] = "zebra" }
            let memo = Memo(context: context)
            memo.body = "g"
            let home = try #require(folders.first { $0.title == "Home" })
            memo.folder = home
            graph.folderOf["g"] = "Home"
            try checkOrders(context, graph)
        }
    }

    @Test(arguments: [false, true])
    func rowsOfSeveralStoresAreMergedByTheirDestinationsAttribute(inMemory: Bool) throws {
        let directory = TemporaryDirectory()
        let container = PersistentContainer(name: "Multi", managedObjectModel: graphModel())
        container.persistentStoreDescriptions = ["A.sqlite", "B.sqlite"].map { inMemory ? PersistentStoreDescription(type: .inMemory) : PersistentStoreDescription(url: directory.file($0)) }
        try container.loadPersistentStores()
        let stores = container.persistentStoreCoordinator.persistentStores
        let context = container.newBackgroundContext()
        try context.performAndWait { () throws in
            // Two folders per store; a relationship stays in its store.
            for (index, title) in ["m", "c", "x", "a"].enumerated() {
                let folder = Folder(context: context)
                folder.title = title
                for n in 1...2 {
                    let memo = Memo(context: context)
                    memo.body = "\(title)\(n)"
                    memo.folder = folder
                    if index % 2 == 1 { try context.assign(memo, to: stores[1]) }
                }
                if index % 2 == 1 { try context.assign(folder, to: stores[1]) }
            }
            try context.save()
        }
        let reader = container.newBackgroundContext()
        try reader.performAndWait { () throws in
            let all = ["a1", "a2", "c1", "c2", "m1", "m2", "x1", "x2"]
            #expect(try fetch(reader, "folder.title", ascending: true) == all)
            #expect(try fetch(reader, "folder.title", ascending: false) == ["x1", "x2", "m1", "m2", "c1", "c2", "a1", "a2"])
            #expect(try fetch(reader, "folder.title", ascending: true, offset: 3, limit: 3) == ["c2", "m1", "m2"])
        }
    }

    @Test func aControllerSectionedByTheDestinationsAttributeKeepsItsSectionsInOrder() throws {
        let stack = try TestStack(.sqlite, model: graphModel())
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            seed(Graph(), in: context)
            try context.save()
            let request = FetchRequest<Memo>(entityName: "Memo")
            request.predicate = NSPredicate(format: "folder != nil")
            request.sortDescriptors = [NSSortDescriptor(key: "folder.title", ascending: true), NSSortDescriptor(key: "body", ascending: true)]
            let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: "folder.title", cacheName: nil)
            try controller.performFetch()
            let layout = (controller.sections ?? []).map { $0.name + ":" + ($0.objects ?? []).compactMap { ($0 as? Memo)?.body }.joined(separator: ",") }
            #expect(layout == ["Home:b,f", "archive:c", "work:a,d"])
            // A memo moved to another folder moves to that folder's section.
            let a = try #require(controller.fetchedObjects?.first { $0.body == "a" })
            let archive = try #require(controller.fetchedObjects?.first { $0.body == "c" }?.folder)
            a.folder = archive
            try context.save()
            let moved = (controller.sections ?? []).map { $0.name + ":" + ($0.objects ?? []).compactMap { ($0 as? Memo)?.body }.joined(separator: ",") }
            #expect(moved == ["Home:b,f", "archive:a,c", "work:d"])
        }
    }

    @Test func keysThroughToManyOrUnknownRelationshipsAreClearErrors() throws {
        let stack = try TestStack(.sqlite, model: graphModel())
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            for (key, words) in [("tags.name", "to-many relationship 'tags'"), ("folder.nope", "does not have"), ("nope.title", "not a to-one relationship"),
                                 ("body.count", "not a to-one relationship"), ("folder", "does not have")] {
                let request = FetchRequest<Memo>(entityName: "Memo")
                request.sortDescriptors = [NSSortDescriptor(key: key, ascending: true)]
                let error = try #require(throws: CoreDataError.self, "\(key)") { try context.fetch(request) }
                #expect(error.code == .coreData)
                #expect(error.message.contains(words), "\(key): \(error.message)")
            }
        }
    }
}
