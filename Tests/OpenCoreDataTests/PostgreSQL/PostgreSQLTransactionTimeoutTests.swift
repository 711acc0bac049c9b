import Foundation
import OpenCoreData
@testable import OpenCoreDataPostgreSQL
import Testing
import TestSupport

/// The store URL's `lock_timeout` and `idle_in_transaction_session_timeout`: a save behind
/// another session's lock ends at the lock timeout, a client that stopped mid-save does not keep
/// its rows locked, and the transactions that wait for the client on purpose are not ended.
@Suite(.dedicatedThread) struct PostgreSQLTransactionTimeoutTests {
    /// `url` with `parameters` added.
    private func url(_ url: URL, port: Int? = nil, _ parameters: [String: String]) throws -> URL {
        var components = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false))
        if let port {
            components.host = "127.0.0.1"
            components.port = port
        }
        components.queryItems = (components.queryItems ?? []) + parameters.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
        return try #require(components.url)
    }

    private func container(_ urls: [URL], model: ManagedObjectModel = ManagedObjectModel(Entry.self)) throws -> PersistentContainer {
        let container = PersistentContainer(name: "Timeouts", managedObjectModel: model)
        container.persistentStoreDescriptions = urls.map { PersistentStoreDescription(url: $0, type: $0.isFileURL ? .sqlite : .postgreSQL) }
        try container.loadPersistentStores()
        return container
    }

    /// The values of the entries in the schema, by code, read by a new coordinator.
    private func savedValues(_ url: URL) throws -> [String: Int64] {
        let reader = try container([url])
        let context = reader.newBackgroundContext()
        return try context.performAndWait { () throws in
            Dictionary(uniqueKeysWithValues: try context.fetch(FetchRequest<Entry>(entityName: "Entry")).map { ($0.code, $0.value) })
        }
    }

    /// Saves one entry with `value` through a new context of `stack`.
    private func update(_ stack: PersistentContainer, to value: Int64) throws {
        let context = stack.newBackgroundContext()
        try context.performAndWait { () throws in
            try #require(try context.fetch(FetchRequest<Entry>(entityName: "Entry")).first).value = value
            try context.save()
        }
    }

    @Test(.enabled(if: TestPostgreSQL.isConfigured, "OCD_POSTGRES_URL is not set"))
    func aSaveBehindAnotherSessionsLockEndsAtTheLockTimeoutHavingWrittenNothing() throws {
        let directory = TemporaryDirectory()
        let schema = try directory.postgreSQLSchema()
        // A long statement timeout, a short lock timeout: the wait ends at the latter.
        let stack = try container([url(schema, ["lock_timeout": "1", "statement_timeout": "120"])])
        let context = stack.newBackgroundContext()
        let entry = try context.performAndWait { () throws in
            let entry = Entry(context: context)
            entry.code = "a"
            entry.value = 1
            try context.save()
            return entry
        }
        let holder = try PostgreSQLSession.connect(PostgreSQLStoreURL(schema))
        defer { holder.close() }
        try holder.execute(text: "BEGIN")
        try holder.execute(text: "LOCK TABLE \(PostgreSQLSQL.quoted(directory.schemaName)).zentry IN ACCESS EXCLUSIVE MODE")

        let failure = context.performAndWait { () -> CoreDataError? in
            entry.value = 2
            do {
                try context.save()
                return nil
            } catch {
                return error as? CoreDataError
            }
        }
        #expect(failure?.code == .persistentStoreTimeout, "\(String(describing: failure))")
        #expect(failure?.message.contains("lock_timeout") == true, "\(failure?.message ?? "no error")")

        // Once the other session lets go, the same context saves, nothing reopened.
        try holder.execute(text: "ROLLBACK")
        try context.performAndWait { () throws in try context.save() }
        #expect(try savedValues(schema) == ["a": 2])
    }

    /// A client cut off after its last statement before COMMIT (its COMMIT lost in a partition
    /// the server does not see, as a frozen process would leave it) holds its rows locked: the
    /// server ends its session after the idle timeout, and another writer of the same row is not
    /// kept waiting past its own statement timeout.
    @Test(.enabled(if: TestPostgreSQL.isConfigured, "OCD_POSTGRES_URL is not set"))
    func aClientThatStoppedMidSaveDoesNotKeepItsRowsLocked() throws {
        let directory = TemporaryDirectory()
        let schema = try directory.postgreSQLSchema()
        let server = try #require(TestPostgreSQL.urlText.flatMap(URL.init(string:)))
        let proxy = try TCPProxy(upstreamPort: server.port ?? PostgreSQLStoreURL.defaultPort)
        defer { proxy.stop() }
        let stopping = try container([url(schema, port: proxy.port, ["tls": "disable", "statement_timeout": "2", "idle_in_transaction_session_timeout": "1"])])
        let other = try container([url(schema, ["statement_timeout": "6"])])
        let seed = other.newBackgroundContext()
        try seed.performAndWait { () throws in
            let entry = Entry(context: seed)
            entry.code = "a"
            try seed.save()
        }

        let stopped = stopping.newBackgroundContext()
        let done = DispatchSemaphore(value: 0)
        try stopped.performAndWait { () throws in
            try #require(try stopped.fetch(FetchRequest<Entry>(entityName: "Entry")).first).value = 1
        }
        proxy.blackHole(atSending: "COMMIT\u{0}")
        stopped.perform {
            _ = try? stopped.save()     // its COMMIT never reaches the server
            done.signal()
        }
        let deadline = Date().addingTimeInterval(20)
        while proxy.isArmed && Date() < deadline { usleep(10_000) }
        #expect(!proxy.isArmed)

        // The row is the stopped save's until the server ends its session: one second here, where
        // without the limit this save would wait for it beyond its 6 s statement timeout.
        try update(other, to: 2)
        done.wait()
        #expect(try savedValues(schema) == ["a": 2])
    }

    /// A query generation's snapshot waits between its contexts' reads by design: the idle limit
    /// does not end it.
    @Test(.enabled(if: TestPostgreSQL.isConfigured, "OCD_POSTGRES_URL is not set"))
    func aPinnedQueryGenerationOutlivesTheIdleTimeout() throws {
        let directory = TemporaryDirectory()
        let schema = try directory.postgreSQLSchema()
        let stack = try container([url(schema, ["idle_in_transaction_session_timeout": "1"])])
        let writer = stack.newBackgroundContext()
        try writer.performAndWait { () throws in
            let entry = Entry(context: writer)
            entry.code = "a"
            entry.value = 1
            try writer.save()
        }
        let pinned = stack.newBackgroundContext()
        try pinned.performAndWait { () throws in
            try pinned.setQueryGenerationFrom(.current)
            #expect(try pinned.count(for: FetchRequest<Entry>(entityName: "Entry")) == 1)
        }
        try update(stack, to: 2)
        Thread.sleep(forTimeInterval: 2.5)
        try pinned.performAndWait { () throws in
            let request = FetchRequest<Entry>(entityName: "Entry")
            request.predicate = NSPredicate(format: "value == 1")
            #expect(try pinned.count(for: request) == 1)    // still the generation's moment
        }
    }

    /// A save across stores keeps its PostgreSQL part open while the next store's part is
    /// written (here a SQLite store another connection keeps locked for 2.5 s): the idle limit
    /// does not end it, and both parts are written.
    @Test(.enabled(if: TestPostgreSQL.isConfigured, "OCD_POSTGRES_URL is not set"))
    func aSaveAcrossStoresIsNotEndedWhileTheNextStoresPartIsWritten() throws {
        let directory = TemporaryDirectory()
        let schema = try directory.postgreSQLSchema()
        let file = directory.file("Second.sqlite")
        let stack = try container([url(schema, ["idle_in_transaction_session_timeout": "1"]), file])
        let stores = stack.persistentStoreCoordinator.persistentStores
        let context = stack.newBackgroundContext()
        let saved = DispatchSemaphore(value: 0)
        let outcome = Locked<String?>(nil)
        try context.performAndWait { () throws in
            let first = Entry(context: context)
            first.code = "in PostgreSQL"
            let second = Entry(context: context)
            second.code = "in SQLite"
            try context.assign(first, to: stores[0])
            try context.assign(second, to: stores[1])
            try context.obtainPermanentIDs(for: [first, second])
        }
        let blocker = try RawSQLite(file, writable: true)
        try blocker.execute("BEGIN IMMEDIATE")
        context.perform {
            do {
                try context.save()
                outcome.withLock { $0 = "saved" }
            } catch {
                outcome.withLock { $0 = "\(error)" }
            }
            saved.signal()
        }
        Thread.sleep(forTimeInterval: 2.5)
        try blocker.execute("COMMIT")
        saved.wait()
        #expect(outcome.withLock { $0 } == "saved")
        #expect(try Array(savedValues(schema).keys) == ["in PostgreSQL"])
        #expect(try RawSQLite(file).rows("SELECT ZCODE FROM ZENTRY").map { $0[0] as? String } == ["in SQLite"])
    }
}
