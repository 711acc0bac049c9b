import OpenCoreData
import Testing
import TestSupport

/// Dictionary results come from the store (in SQL on the SQL stores): what the store holds,
/// without making objects, and the same on every store for any mix of projection, grouping,
/// aggregates, distinct, having, order and window.
@Suite(.dedicatedThread) struct DictionaryResultTests {
    /// Notes 1…6: text2 "alpha" for 1–3, "beta" for 4–6.
    private func seeded(_ kind: StoreKind) throws -> (TestStack, ManagedObjectContext) {
        let stack = try TestStack(kind)
        let context = try stack.seededContext(ids: 1...6) { note, id in note.text2 = id <= 3 ? "alpha" : "beta" }
        return (stack, context)
    }

    private func totals(_ context: ManagedObjectContext, predicate: NSPredicate? = nil) throws -> NSDictionary? {
        let request = FetchRequest<NSDictionary>(entityName: "Note")
        request.predicate = predicate
        request.propertiesToFetch = [
            ExpressionDescription(name: "n", function: "count:", keyPath: "id"),
            ExpressionDescription(name: "total", function: "sum:", keyPath: "id"),
            ExpressionDescription(name: "lowest", function: "min:", keyPath: "id"),
        ]
        let rows = try context.fetch(request)
        #expect(rows.count == 1)
        return rows.first
    }

    @Test(arguments: StoreKind.allCases)
    func unsavedChangesDoNotCountAsInCoreData(kind: StoreKind) throws {
        let (stack, context) = try seeded(kind)
        try context.performAndWait { () throws in
            let notes = try context.fetch(Note.fetchRequest()).sorted { $0.id < $1.id }
            Note(context: context).id = 100
            context.delete(notes[0])
            notes[1].text2 = "gamma"
            let row = try totals(context)
            #expect(row?["n"] as? Int64 == 6)
            #expect(row?["total"] as? Int64 == 21)
            #expect(row?["lowest"] as? Int32 == 1)
            let groups = FetchRequest<NSDictionary>(entityName: "Note")
            groups.propertiesToFetch = ["text2"]
            groups.returnsDistinctResults = true
            groups.sortDescriptors = [NSSortDescriptor(key: "text2", ascending: true)]
            #expect(try context.fetch(groups).compactMap { $0["text2"] as? String } == ["alpha", "beta"])
            try context.save()
            #expect(try totals(context)?["total"] as? Int64 == 21 - 1 + 100)
            #expect(try context.fetch(groups).compactMap { $0["text2"] as? String } == ["alpha", "beta", "gamma"])
        }
        _ = stack
    }

    @Test(arguments: StoreKind.allCases)
    func aDictionaryFetchMakesNoObjects(kind: StoreKind) throws {
        let (stack, _) = try seeded(kind)
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let request = FetchRequest<NSDictionary>(entityName: "Note")
            request.propertiesToFetch = ["id", "text2"]
            #expect(try context.fetch(request).count == 6)
            #expect(try totals(context)?["n"] as? Int64 == 6)
            request.propertiesToFetch = []
            #expect(try context.fetch(request).map(\.count) == Array(repeating: 0, count: 6))
            #expect(context.registeredObjects.isEmpty)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aggregatesOverNoRowsGiveOneRow(kind: StoreKind) throws {
        let (stack, context) = try seeded(kind)
        try context.performAndWait { () throws in
            let row = try totals(context, predicate: NSPredicate(format: "id > 100"))
            #expect(row?["n"] as? Int64 == 0)
            #expect(row?["total"] as? Int64 == 0)
            #expect(row?["lowest"] == nil)
        }
        _ = stack
    }

    /// Seeded requests over 120 samples with repeating values and nils, each compared across the
    /// stores (SQL where the store can, Swift over the rows where it cannot).
    @Test func everyStoreGivesTheSameResults() throws {
        let kinds = StoreKind.allCases
        var stacks: [TestStack] = []
        var contexts: [ManagedObjectContext] = []
        for kind in kinds {
            let stack = try TestStack(kind)
            let context = stack.container.newBackgroundContext()
            try context.performAndWait { () throws in
                for index in 0..<120 {
                    let sample = Sample(context: context)
                    sample.small = Int16(index % 5)
                    sample.medium = Int32(index)
                    sample.large = Int64((index * 7919) % 23) - 11
                    sample.ratio = Double(index % 9) * 0.25
                    sample.single = Float(index % 4) * 0.5
                    sample.flag = index % 3 == 0
                    sample.title = ["red", "green", "blue", "Red", "éclair"][index % 5]
                    sample.created = Date(timeIntervalSinceReferenceDate: Double(index % 11) * 3600)
                    sample.note = index % 4 == 0 ? nil : "n\(index % 6)"
                    sample.amount = Decimal(index % 3)
                    sample.code = "c\(index)"
                }
                try context.save()
            }
            stacks.append(stack)
            contexts.append(context)
        }
        var generator = SeededGenerator(seed: 2026_11_27)
        for round in 0..<150 {
            let request = Self.randomRequest(using: &generator)
            var results: [[String]] = []
            for context in contexts {
                results.append(try context.performAndWait { try context.fetch(request).map(Self.describe) })
            }
            for (kind, result) in zip(kinds.dropFirst(), results.dropFirst()) {
                #expect(result == results[0], "round \(round), \(kind) against sqlite: \(Self.describe(request))")
            }
        }
        _ = stacks
    }

    private static let groupable = ["small", "flag", "title", "note", "created", "amount"]
    private static let numeric = ["small", "medium", "large", "ratio", "single", "flag"]
    private static let ordered = ["medium", "ratio", "created", "title", "note", "flag", "large"]

    private static func randomRequest(using generator: inout SeededGenerator) -> FetchRequest<NSDictionary> {
        let request = FetchRequest<NSDictionary>(entityName: "Sample")
        var properties: [Any] = []
        var groups: [String] = []
        let aggregating = Bool.random(using: &generator)
        if aggregating {
            let count = Int.random(in: 0...2, using: &generator)
            groups = Array(groupable.shuffled(using: &generator).prefix(count))
            properties += groups
            for index in 0..<Int.random(in: 1...3, using: &generator) {
                let function = ["count:", "sum:", "average:", "min:", "max:"].randomElement(using: &generator)!
                let key = (function == "sum:" || function == "average:" ? numeric : ordered + ["amount"]).randomElement(using: &generator)!
                properties.append(ExpressionDescription(name: "a\(index)", function: function, keyPath: key))
            }
            request.propertiesToGroupBy = groups.isEmpty ? nil : groups
            if Int.random(in: 0..<4, using: &generator) == 0 { request.havingPredicate = NSPredicate(format: "a0 > 1") }
        } else {
            properties = Array((groupable + ["medium", "ratio"]).shuffled(using: &generator).prefix(Int.random(in: 1...3, using: &generator)))
            groups = properties.compactMap { $0 as? String }
        }
        request.propertiesToFetch = properties
        request.returnsDistinctResults = Int.random(in: 0..<3, using: &generator) == 0
        if Bool.random(using: &generator) {
            request.predicate = NSPredicate(format: "medium >= %d", Int.random(in: 0..<130, using: &generator))
        }
        // An order by values every result row has, and a window only with a total order.
        let sortable = groups.filter { $0 != "amount" }
        if !sortable.isEmpty && Int.random(in: 0..<4, using: &generator) > 0 {
            request.sortDescriptors = sortable.shuffled(using: &generator).map { NSSortDescriptor(key: $0, ascending: Bool.random(using: &generator)) }
            if Bool.random(using: &generator) {
                request.fetchLimit = Int.random(in: 0...6, using: &generator)
                request.fetchOffset = Int.random(in: 0...4, using: &generator)
            }
        }
        return request
    }

    /// A result row as text: keys in order, values as the app sees them.
    private static func describe(_ row: NSDictionary) -> String {
        row.allKeys.compactMap { $0 as? String }.sorted().map { key in "\(key)=\(row[key].map { "\($0)" } ?? "nil")" }.joined(separator: " ")
    }

    private static func describe(_ request: FetchRequest<NSDictionary>) -> String {
        let properties = (request.propertiesToFetch ?? []).map { property in
            (property as? ExpressionDescription).map { "\($0.function ?? "")\($0.keyPath)" } ?? "\(property)"
        }
        return "fetch \(properties) group \(request.propertiesToGroupBy ?? []) distinct \(request.returnsDistinctResults) where \(request.predicate?.predicateFormat ?? "-") having \(request.havingPredicate?.predicateFormat ?? "-") sort \((request.sortDescriptors ?? []).map { "\($0.key ?? "") \($0.ascending)" }) window \(request.fetchOffset)+\(request.fetchLimit)"
    }
}
