import Dispatch
import Foundation
import OpenCoreData
@testable import OpenCoreDataPostgreSQL
import OpenCoreDataSQL
import Testing
import TestSupport

/// Batch updates and deletes whose predicate PostgreSQL cannot test (string operators, tested in
/// Swift) choose their rows inside their transaction: a row another writer changes while the
/// batch waits for it is tested as that writer left it.
@Suite(.dedicatedThread) struct BatchWriterRaceTests {
    /// Runs `batch` while another session holds an uncommitted rename of "Draft 1" to "Final 1",
    /// commits the rename once the batch has had time to reach the row, and returns what the
    /// batch reported.
    private func racingARename(_ batch: @escaping @Sendable (ManagedObjectContext) throws -> Int) throws -> (count: Int, texts: [String]) {
        let stack = try TestStack(.postgreSQL)
        let context = try stack.seededContext(ids: 1...3) { note, id in note.text1 = id == 3 ? "Kept" : "Draft \(id)" }
        let url = try PostgreSQLStoreURL(try stack.directory.postgreSQLSchema())
        let writer = try PostgreSQLSession.connect(url)
        defer { writer.close() }
        try writer.execute("BEGIN")
        let table = PostgreSQLSQL.qualified(url.schema, "znote")
        try writer.execute("UPDATE \(sql: table) SET ztext1 = \(bind: .string("Final 1")) WHERE ztext1 = \(bind: .string("Draft 1"))" as SQLFragment)
        let result = Locked<Result<Int, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let batchContext = stack.container.newBackgroundContext()
        Thread {
            result.withLock { $0 = Result { try batchContext.performAndWait { try batch(batchContext) } } }
            done.signal()
        }.start()
        // The batch now waits for the renamed row (or, on a slow machine, has not reached it yet:
        // then it reads the rename after the commit either way).
        Thread.sleep(forTimeInterval: 0.5)
        try writer.execute("COMMIT")
        #expect(done.wait(timeout: .now() + 30) == .success)
        let count = try #require(result.withLock { $0 }).get()
        let texts = try context.performAndWait { () throws in
            context.reset()
            return try context.fetch(Note.fetchRequest()).compactMap(\.text1).sorted()
        }
        return (count, texts)
    }

    @Test(.enabled(if: TestPostgreSQL.isConfigured, "OCD_POSTGRES_URL is not set"))
    func aBatchDeleteLeavesARowRenamedWhileItWaited() throws {
        let (count, texts) = try racingARename { context in
            let request = Note.fetchRequest()
            request.predicate = NSPredicate(format: "text1 BEGINSWITH[c] %@", "draft")
            let delete = BatchDeleteRequest(fetchRequest: request)
            delete.resultType = .resultTypeCount
            return try context.execute(delete).result as? Int ?? -1
        }
        #expect(count == 1)
        #expect(texts == ["Final 1", "Kept"])
    }

    @Test(.enabled(if: TestPostgreSQL.isConfigured, "OCD_POSTGRES_URL is not set"))
    func aBatchUpdateLeavesARowRenamedWhileItWaited() throws {
        let (count, texts) = try racingARename { context in
            let update = BatchUpdateRequest(entityName: "Note", predicate: NSPredicate(format: "text1 BEGINSWITH[c] %@", "draft"), propertiesToUpdate: ["text1": "Published"])
            update.resultType = .updatedObjectsCountResultType
            return try context.execute(update).result as? Int ?? -1
        }
        #expect(count == 1)
        #expect(texts == ["Final 1", "Kept", "Published"])
    }
}
