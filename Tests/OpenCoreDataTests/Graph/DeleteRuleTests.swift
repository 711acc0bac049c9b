import OpenCoreData
import Testing
import TestSupport

@Suite(.dedicatedThread) struct DeleteRuleTests {
    @Test(arguments: StoreKind.allCases)
    func cascadeRunsDownTheChainAndNullifyCleansUpTheOtherSide(kind: StoreKind) throws {
        let stack = try TestStack(kind, model: graphModel())
        let writer = stack.container.newBackgroundContext()
        let (drawerID, tagID, memoIDs) = try writer.performAndWait { () throws in
            let drawer = Drawer(context: writer)
            let folder = Folder(context: writer)
            folder.drawer = drawer
            let tag = Tag(context: writer)
            tag.name = "kept"
            let memos = (0..<3).map { _ in Memo(context: writer) }
            for memo in memos {
                memo.folder = folder
                memo.tags = [tag]
            }
            try writer.save()
            return (drawer.objectID, tag.objectID, memos.map(\.objectID))
        }
        // Delete in a fresh context: the chain is loaded from the store.
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let drawer = context.object(with: drawerID)
            context.delete(drawer)
            context.processPendingChanges()
            #expect(context.deletedObjects.count == 5)      // drawer, folder, three memos
            let tag = try #require(context.object(with: tagID) as? Tag)
            #expect(tag.memos.isEmpty)                       // nullified, not deleted
            try context.save()
        }
        let check = stack.container.newBackgroundContext()
        try check.performAndWait { () throws in
            #expect(try check.count(for: FetchRequest<Memo>(entityName: "Memo")) == 0)
            #expect(try check.count(for: FetchRequest<Folder>(entityName: "Folder")) == 0)
            let tag = try #require(try check.existingObject(with: tagID) as? Tag)
            #expect(tag.memos.isEmpty)
            #expect(throws: CoreDataError.self) { try check.existingObject(with: memoIDs[0]) }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func denyRefusesTheSaveNamingObjectAndRelationship(kind: StoreKind) throws {
        let stack = try TestStack(kind, model: graphModel())
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let owner = Owner(context: context)
            let pet = Pet(context: context)
            pet.owner = owner
            try context.save()
            context.delete(owner)
            let error = try #require(throws: CoreDataError.self) { try context.save() }
            #expect(error.code == .validationRelationshipDeniedDelete)
            #expect(error.key == "pets")
            #expect(error.affectedObjectIDs == [owner.objectID])
            // Deleting the pet first lets the owner go.
            context.delete(pet)
            try context.save()
            #expect(try context.count(for: FetchRequest<Owner>(entityName: "Owner")) == 0)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func nullifyOnAToOneSideClearsTheParentsSet(kind: StoreKind) throws {
        let stack = try TestStack(kind, model: graphModel())
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let folder = Folder(context: context)
            let memo = Memo(context: context)
            memo.folder = folder
            try context.save()
            context.delete(memo)
            try context.save()
            #expect(folder.memos.isEmpty)
            #expect(!folder.isDeleted)
        }
    }
}

@Suite(.dedicatedThread) struct BatchDeleteRuleTests {
    private func seed(_ stack: TestStack) throws -> ManagedObjectContext {
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let drawer = Drawer(context: context)
            let tag = Tag(context: context)
            tag.name = "kept"
            for title in ["a", "b"] {
                let folder = Folder(context: context)
                folder.title = title
                folder.drawer = drawer
                for _ in 0..<2 {
                    let memo = Memo(context: context)
                    memo.folder = folder
                    memo.tags = [tag]
                }
            }
            let owner = Owner(context: context)
            Pet(context: context).owner = owner
            try context.save()
        }
        return context
    }

    @Test(arguments: StoreKind.allCases)
    func batchDeletesCascadeAndCleanUpJoinRows(kind: StoreKind) throws {
        let stack = try TestStack(kind, model: graphModel())
        let context = try seed(stack)
        try context.performAndWait { () throws in
            let request = BatchDeleteRequest(fetchRequest: FetchRequest<ManagedObject>(entityName: "Drawer"))
            request.resultType = .resultTypeCount
            #expect(try context.execute(request).result as? Int == 1)
            #expect(try context.count(for: FetchRequest<Folder>(entityName: "Folder")) == 0)
            #expect(try context.count(for: FetchRequest<Memo>(entityName: "Memo")) == 0)
            context.reset()
            let tag = try #require(try context.fetch(FetchRequest<Tag>(entityName: "Tag")).first)
            #expect(tag.memos.isEmpty)
        }
        if kind == .sqlite {
            let db = try RawSQLite(stack.storeURL)
            #expect(try db.rows("SELECT COUNT(*) FROM Z_3TAGS").first?.first as? Int64 == 0)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func batchDeletesNullifyManyToManyAndRespectDeny(kind: StoreKind) throws {
        let stack = try TestStack(kind, model: graphModel())
        let context = try seed(stack)
        try context.performAndWait { () throws in
            _ = try context.execute(BatchDeleteRequest(fetchRequest: FetchRequest<ManagedObject>(entityName: "Tag")))
            context.reset()
            let memos = try context.fetch(FetchRequest<Memo>(entityName: "Memo"))
            #expect(memos.count == 4 && memos.allSatisfy { $0.tags.isEmpty })
            // Deny: the owner still has a pet; nothing is deleted.
            let error = try #require(throws: CoreDataError.self) {
                try context.execute(BatchDeleteRequest(fetchRequest: FetchRequest<ManagedObject>(entityName: "Owner")))
            }
            #expect(error.code == .validationRelationshipDeniedDelete)
            #expect(try context.count(for: FetchRequest<Owner>(entityName: "Owner")) == 1)
            #expect(try context.count(for: FetchRequest<Pet>(entityName: "Pet")) == 1)
        }
    }
}
