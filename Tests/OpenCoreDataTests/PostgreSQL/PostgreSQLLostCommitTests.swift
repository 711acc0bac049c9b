import Foundation
import OpenCoreData
@testable import OpenCoreDataPostgreSQL
import Testing
import TestSupport

/// A save whose COMMIT got no answer: the store asks the server, on a new connection, what became
/// of the transaction, so that a save is reported written exactly when it was — and never
/// written twice. The loopback proxy loses the COMMIT's answer, or the COMMIT itself.
@Suite(.dedicatedThread) struct PostgreSQLLostCommitTests {
    private static let model = ManagedObjectModel(Entry.self)
    /// The COMMIT statement as it travels (the extended protocol's Parse message ends the text
    /// with a zero byte): no other statement of a save carries it.
    private static let commit = "COMMIT\u{0}"

    /// The test server's URL for a fresh schema, reached through `proxy`, with a short statement
    /// limit: a call without an answer ends after 2 + 5 s.
    private func url(through proxy: TCPProxy, schema: String) throws -> URL {
        var components = try #require(URLComponents(url: TestPostgreSQL.storeURL(schema: schema), resolvingAgainstBaseURL: false))
        components.host = "127.0.0.1"
        components.port = proxy.port
        // In plaintext: the proxy finds the COMMIT in the protocol's bytes (TLS would hide it).
        components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: "statement_timeout", value: "2"), URLQueryItem(name: "connect_timeout", value: "3"),
                                                                 URLQueryItem(name: "tls", value: "disable")]
        return try #require(components.url)
    }

    private func proxy() throws -> TCPProxy {
        let server = try #require(TestPostgreSQL.urlText.flatMap(URL.init(string:)))
        return try TCPProxy(upstreamPort: server.port ?? PostgreSQLStoreURL.defaultPort)
    }

    private func container(_ url: URL) throws -> PersistentContainer {
        let container = PersistentContainer(name: "LostCommit", managedObjectModel: Self.model)
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: url, type: .postgreSQL)]
        try container.loadPersistentStores()
        return container
    }

    /// The entries saved in the schema (code and value), read straight from the server.
    private func saved(schema: String) throws -> [String] {
        let reader = try container(TestPostgreSQL.storeURL(schema: schema))
        let context = reader.newBackgroundContext()
        return try context.performAndWait { () throws in
            try context.fetch(FetchRequest<Entry>(entityName: "Entry")).map { "\($0.code)=\($0.value)" }.sorted()
        }
    }

    /// A fresh schema reached through a new proxy, holding one entry saved with `code`.
    private func savedThroughProxy(code: String) throws -> (TemporaryDirectory, TCPProxy, PersistentContainer) {
        let directory = TemporaryDirectory()
        let proxy = try proxy()
        let stack = try container(url(through: proxy, schema: directory.schemaName))
        let context = stack.newBackgroundContext()
        context.performAndWait { Entry(context: context).code = code }
        if let failure = save(context) {
            proxy.stop()
            throw failure
        }
        return (directory, proxy, stack)
    }

    /// Saves the context's changes; the error, if any.
    private func save(_ context: ManagedObjectContext) -> CoreDataError? {
        context.performAndWait { () -> CoreDataError? in
            do {
                try context.save()
                return nil
            } catch {
                return (error as? CoreDataError) ?? CoreDataError(.coreData, "\(error)")
            }
        }
    }

    @Test(.enabled(if: TestPostgreSQL.isConfigured, "OCD_POSTGRES_URL is not set"))
    func aCommitWhoseAnswerIsLostIsReportedSavedOnce() throws {
        let (directory, proxy, stack) = try savedThroughProxy(code: "first")
        defer { proxy.stop() }
        let context = stack.newBackgroundContext()

        context.performAndWait {
            Entry(context: context).code = "second"
            (try? context.fetch(FetchRequest<Entry>(entityName: "Entry")))?.first { $0.code == "first" }?.value = 1
        }
        proxy.loseAnswers(afterSending: Self.commit)
        // The server committed; the answer never came. The store finds out and reports success.
        #expect(save(context) == nil)
        #expect(context.performAndWait { context.hasChanges } == false)
        #expect(try saved(schema: directory.schemaName) == ["first=1", "second=0"])

        // And goes on: the committed state is the context's, so the next change saves.
        context.performAndWait {
            (try? context.fetch(FetchRequest<Entry>(entityName: "Entry")))?.first { $0.code == "second" }?.value = 2
        }
        #expect(save(context) == nil)
        #expect(try saved(schema: directory.schemaName) == ["first=1", "second=2"])
    }

    @Test(.enabled(if: TestPostgreSQL.isConfigured, "OCD_POSTGRES_URL is not set"))
    func aCommitLostOnTheWayIsRolledBackAndTheSameContextSavesAgain() throws {
        let (directory, proxy, stack) = try savedThroughProxy(code: "first")
        defer { proxy.stop() }
        let context = stack.newBackgroundContext()

        // The COMMIT never reaches the server, which keeps the transaction open on a connection
        // that looks alive: the store ends that session and learns the transaction was rolled back.
        proxy.blackHole(atSending: Self.commit)
        context.performAndWait { Entry(context: context).code = "second" }
        let failure = save(context)
        #expect(failure?.code == .persistentStoreSave, "\(String(describing: failure))")
        #expect(failure?.message.contains("nothing was written") == true)
        #expect(try saved(schema: directory.schemaName) == ["first=0"])

        #expect(save(context) == nil)
        #expect(try saved(schema: directory.schemaName) == ["first=0", "second=0"])
    }

    @Test(.enabled(if: TestPostgreSQL.isConfigured, "OCD_POSTGRES_URL is not set"))
    func anOutcomeThatCannotBeLearntIsItsOwnErrorAndARetryDoesNotWriteTwice() throws {
        let (directory, proxy, stack) = try savedThroughProxy(code: "counter")
        defer { proxy.stop() }
        let context = stack.newBackgroundContext()

        // The commit goes through, its answer is lost, and the server cannot be asked: every
        // later connection is held by a partition.
        context.performAndWait {
            (try? context.fetch(FetchRequest<Entry>(entityName: "Entry")))?.first?.value += 1
        }
        proxy.loseAnswers(afterSending: Self.commit)
        DispatchQueue.global().asyncAfter(deadline: .now() + 1) { proxy.partition() }
        let failure = save(context)
        #expect(failure?.code == .persistentStoreCommitOutcomeUnknown, "\(String(describing: failure))")
        #expect(failure?.message.contains("txid_status") == true)

        // Reachable again: the same change saved again is refused (its row moved on) rather
        // than applied twice.
        proxy.heal()
        let retry = save(context)
        #expect(retry?.code == .managedObjectMerge, "\(String(describing: retry))")
        #expect(try saved(schema: directory.schemaName) == ["counter=1"])
    }
}
