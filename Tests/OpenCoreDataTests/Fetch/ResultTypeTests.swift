import OpenCoreData
import Testing
import TestSupport

@Suite(.dedicatedThread) struct ResultTypeTests {
    /// Notes 1…6: text2 "alpha" for 1–3, "beta" for 4–6; text1 nil for even ids.
    private func seeded(_ kind: StoreKind) throws -> (TestStack, ManagedObjectContext) {
        let stack = try TestStack(kind)
        let context = try stack.seededContext(ids: 1...6) { note, id in
            note.text1 = id % 2 == 0 ? nil : "odd"
            note.text2 = id <= 3 ? "alpha" : "beta"
        }
        return (stack, context)
    }

    @Test(arguments: StoreKind.allCases)
    func objectIDsAndCounts(kind: StoreKind) throws {
        let (stack, context) = try seeded(kind)
        try context.performAndWait { () throws in
            let ids = FetchRequest<ManagedObjectID>(entityName: "Note")
            ids.predicate = NSPredicate(format: "id > 4")
            ids.sortDescriptors = [NSSortDescriptor(key: "id", ascending: true)]
            let result = try context.fetch(ids)
            #expect(result.count == 2)
            #expect((try context.existingObject(with: result[0]) as? Note)?.id == 5)
            let counts = FetchRequest<NSNumber>(entityName: "Note")
            counts.predicate = NSPredicate(format: "text1 == nil")
            #expect(try context.fetch(counts).map(\.intValue) == [3])
            // Core Data style: the generic parameter and an explicit result type.
            let explicit = FetchRequest<ManagedObjectID>(entityName: "Note")
            explicit.resultType = .managedObjectIDResultType
            #expect(try context.fetch(explicit).count == 6)
            let mismatch = FetchRequest<Note>(entityName: "Note")
            mismatch.resultType = .countResultType
            #expect(throws: CoreDataError.self) { try context.fetch(mismatch) }
        }
        _ = stack
    }

    @Test(arguments: StoreKind.allCases)
    func dictionariesWithProjectionDistinctGroupsAggregatesAndHaving(kind: StoreKind) throws {
        let (stack, context) = try seeded(kind)
        try context.performAndWait { () throws in
            let projection = FetchRequest<NSDictionary>(entityName: "Note")
            projection.propertiesToFetch = ["id", "text1"]
            projection.sortDescriptors = [NSSortDescriptor(key: "id", ascending: true)]
            projection.fetchLimit = 2
            let rows = try context.fetch(projection)
            #expect(rows.count == 2)
            #expect(rows[0]["id"] as? Int32 == 1 && rows[0]["text1"] as? String == "odd")
            #expect(rows[1]["text1"] == nil)                     // nil values are left out

            let distinct = FetchRequest<NSDictionary>(entityName: "Note")
            distinct.propertiesToFetch = ["text2"]
            distinct.returnsDistinctResults = true
            distinct.sortDescriptors = [NSSortDescriptor(key: "text2", ascending: false)]
            #expect(try context.fetch(distinct).compactMap { $0["text2"] as? String } == ["beta", "alpha"])

            let grouped = FetchRequest<NSDictionary>(entityName: "Note")
            grouped.propertiesToFetch = [
                "text2",
                ExpressionDescription(name: "total", function: "sum:", keyPath: "id"),
                ExpressionDescription(name: "named", function: "count:", keyPath: "text1"),
                ExpressionDescription(name: "smallest", function: "min:", keyPath: "id"),
                ExpressionDescription(name: "mean", function: "average:", keyPath: "id"),
            ]
            grouped.propertiesToGroupBy = ["text2"]
            grouped.sortDescriptors = [NSSortDescriptor(key: "text2", ascending: true)]
            let groups = try context.fetch(grouped)
            #expect(groups.count == 2)
            #expect(groups[0]["text2"] as? String == "alpha")
            #expect(groups[0]["total"] as? Int64 == 6)
            #expect(groups[0]["named"] as? Int64 == 2)
            #expect(groups[0]["smallest"] as? Int32 == 1)
            #expect(groups[0]["mean"] as? Double == 2)
            #expect(groups[1]["total"] as? Int64 == 15)
            grouped.havingPredicate = NSPredicate(format: "total > 10")
            #expect(try context.fetch(grouped).compactMap { $0["text2"] as? String } == ["beta"])

            let bad = FetchRequest<NSDictionary>(entityName: "Note")
            bad.propertiesToFetch = ["id", ExpressionDescription(name: "n", function: "count:", keyPath: "id")]
            #expect(throws: CoreDataError.self) { try context.fetch(bad) }
            bad.propertiesToFetch = [ExpressionDescription(name: "s", function: "sum:", keyPath: "text1")]
            #expect(throws: CoreDataError.self) { try context.fetch(bad) }
        }
        _ = stack
    }

    /// A grouped dictionary fetch written as Core Data code writes it: `NSExpressionDescription()`
    /// with `NSExpression(forFunction:arguments:)`, `forKeyPath:`, and `expressionResultType`.
    @Test(arguments: StoreKind.allCases)
    func expressionDescriptionsInCoreDatasSpelling(kind: StoreKind) throws {
        let (stack, context) = try seeded(kind)
        try context.performAndWait { () throws in
            let total = NSExpressionDescription()
            total.name = "total"
            total.expression = NSExpression(forFunction: "sum:", arguments: [NSExpression(forKeyPath: "id")])
            total.expressionResultType = .doubleAttributeType          // an integer sum asked as a Double
            let count = NSExpressionDescription()
            count.name = "count"
            count.expression = NSExpression(forFunction: "count:", arguments: [NSExpression(forKeyPath: "id")])
            count.expressionResultType = .integer64AttributeType
            let label = NSExpressionDescription()
            label.name = "label"
            label.expression = NSExpression(forKeyPath: "text2")
            label.expressionResultType = .stringAttributeType

            let request = NSFetchRequest<NSDictionary>(entityName: "Note")
            request.resultType = .dictionaryResultType
            request.propertiesToFetch = [label, total, count]
            request.propertiesToGroupBy = ["text2"]
            request.sortDescriptors = [NSSortDescriptor(key: "text2", ascending: true)]
            let rows = try context.fetch(request)
            #expect(rows.compactMap { $0["label"] as? String } == ["alpha", "beta"])
            #expect(rows.compactMap { $0["total"] as? Double } == [6, 15])
            #expect(rows.compactMap { $0["count"] as? Int64 } == [3, 3])
            #expect(total.function == "sum:" && total.keyPath == "id")
            #expect(NSExpression(forKeyPath: "id").expressionType == .keyPath)

            let unsupported = NSExpressionDescription()
            unsupported.name = "odd"
            unsupported.expression = NSExpression(forFunction: "sum:", arguments: [NSExpression(forKeyPath: "id"), NSExpression(forConstantValue: 2)])
            request.propertiesToFetch = [label, unsupported]
            let error = try #require(throws: CoreDataError.self) { try context.fetch(request) }
            #expect(error.message.contains("'odd'") && error.message.contains("sum(id, 2)"), "\(error.message)")
        }
        _ = stack
    }
}
