import OpenCoreData
import Testing
import TestSupport

@Suite(.dedicatedThread) struct UniquenessConstraintTests {
    private func seeded(_ kind: StoreKind) throws -> (TestStack, ManagedObjectID) {
        let stack = try TestStack(kind)
        let context = stack.container.newBackgroundContext()
        let id = try context.performAndWait { () throws in
            let sample = Sample(context: context)
            sample.code = "A1"
            sample.title = "stored"
            sample.medium = 7
            try context.save()
            return sample.objectID
        }
        return (stack, id)
    }

    @Test(arguments: StoreKind.allCases)
    func aDuplicateIs133021UnderTheErrorPolicy(kind: StoreKind) throws {
        let (stack, storedID) = try seeded(kind)
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let duplicate = Sample(context: context)
            duplicate.code = "A1"
            let error = try #require(throws: CoreDataError.self) { try context.save() }
            #expect(error.code == .managedObjectConstraintMerge)
            let conflict = try #require(error.constraintConflicts.first)
            #expect(conflict.constraint == ["code"])
            #expect(conflict.conflictingObjects == [duplicate])
            #expect(conflict.databaseObject?.objectID == storedID)
            #expect(conflict.constraintValues["code"] as? String == "A1")
            // Nothing was written; the insert is still pending.
            #expect(duplicate.isInserted)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func twoNewObjectsWithTheSameValueConflictWithEachOther(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let first = Sample(context: context), second = Sample(context: context)
            first.code = "B"
            second.code = "B"
            let error = try #require(throws: CoreDataError.self) { try context.save() }
            #expect(error.constraintConflicts.first?.conflictingObjects == [first, second])
            #expect(error.constraintConflicts.first?.databaseObject == nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func objectTrumpUpsertsTheNewObjectOverTheStoredRow(kind: StoreKind) throws {
        let (stack, storedID) = try seeded(kind)
        let context = stack.container.newBackgroundContext()
        context.mergePolicy = .mergeByPropertyObjectTrump
        try context.performAndWait { () throws in
            let replacement = Sample(context: context)
            replacement.code = "A1"
            replacement.title = "new"
            try context.save()
            #expect(replacement.objectID == storedID)
            #expect(try context.count(for: FetchRequest<Sample>(entityName: "Sample")) == 1)
        }
        let check = stack.container.newBackgroundContext()
        try check.performAndWait { () throws in
            let stored = try #require(try check.existingObject(with: storedID) as? Sample)
            #expect(stored.title == "new")
            #expect(stored.medium == 0)     // the new object's values, all of them
        }
    }

    @Test(arguments: StoreKind.allCases)
    func storeTrumpKeepsTheStoredValues(kind: StoreKind) throws {
        let (stack, storedID) = try seeded(kind)
        let context = stack.container.newBackgroundContext()
        context.mergePolicy = .mergeByPropertyStoreTrump
        try context.performAndWait { () throws in
            let incoming = Sample(context: context)
            incoming.code = "A1"
            incoming.title = "ignored"
            try context.save()
            #expect(incoming.objectID == storedID)
            #expect(incoming.title == "stored")
            #expect(try context.count(for: FetchRequest<Sample>(entityName: "Sample")) == 1)
        }
    }

    @Test func customPoliciesSeeTheConflicts() throws {
        final class Counting: MergePolicy, @unchecked Sendable {
            let seen = Recorder<String>()
            override func resolve(constraintConflicts list: [ConstraintConflict]) throws {
                for conflict in list { seen.append(conflict.constraintValues["code"] as? String ?? "?") }
                // Resolve by renaming the newcomers.
                for conflict in list {
                    for case let sample as Sample in conflict.conflictingObjects { sample.code += "-2" }
                }
            }
        }
        let (stack, _) = try seeded(.sqlite)
        let context = stack.container.newBackgroundContext()
        let policy = Counting(merge: .error)
        context.mergePolicy = policy
        try context.performAndWait { () throws in
            Sample(context: context).code = "A1"
            try context.save()
            #expect(try context.count(for: FetchRequest<Sample>(entityName: "Sample")) == 2)
        }
        #expect(policy.seen.values == ["A1"])
    }
}
