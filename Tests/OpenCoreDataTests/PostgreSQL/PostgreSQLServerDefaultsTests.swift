import Foundation
import OpenCoreData
@testable import OpenCoreDataPostgreSQL
import Testing
import TestSupport

/// A store's transactions do not take the server's defaults: a role (or database) may make
/// transactions `serializable` or read-only by default, and the store's saves, batches and
/// opens still run as their rules need (`READ COMMITTED`, writable).
@Suite(.dedicatedThread) struct PostgreSQLServerDefaultsTests {
    @Test(.enabled(if: TestPostgreSQL.isConfigured, "OCD_POSTGRES_URL is not set"))
    func aRoleWhoseTransactionsAreSerializableAndReadOnlyByDefaultStillSaves() throws {
        let directory = TemporaryDirectory()
        let role = try TestRole("defaults", for: directory)
        defer { role.drop() }
        try role.configure("ALTER ROLE \(role.name) SET default_transaction_isolation = 'serializable'")
        try role.configure("ALTER ROLE \(role.name) SET default_transaction_read_only = on")
        let url = try role.url(directory.postgreSQLSchema())
        let container = PersistentContainer(name: "Defaults", managedObjectModel: ManagedObjectModel(Entry.self))
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: url, type: .postgreSQL)]
        try container.loadPersistentStores()
        let context = container.newBackgroundContext()
        let codes = try context.performAndWait { () throws -> [String] in
            for code in ["a", "b", "c"] { Entry(context: context).code = code }
            try context.save()
            let doomed = FetchRequest<ManagedObject>(entityName: "Entry")
            doomed.predicate = NSPredicate(format: "code == 'b'")
            _ = try context.execute(BatchDeleteRequest(fetchRequest: doomed))
            return try context.fetch(FetchRequest<Entry>(entityName: "Entry")).map(\.code).sorted()
        }
        #expect(codes == ["a", "c"])
        // A session of the store reports the mode its transactions start in.
        let session = try PostgreSQLSession.connect(PostgreSQLStoreURL(url))
        defer { session.close() }
        let modes = try session.execute("SELECT current_setting('default_transaction_isolation'), current_setting('default_transaction_read_only')").rows
        #expect(modes == [[.string("read committed"), .string("off")]])
        for store in container.persistentStoreCoordinator.persistentStores { try container.persistentStoreCoordinator.remove(store) }
    }
}
