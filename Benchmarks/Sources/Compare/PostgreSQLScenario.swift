// Built with the PostgreSQL trait only (Benchmarks/Package.swift).
#if PostgreSQL
import Foundation
import Logging
import NIOPosix
import OpenCoreData
import OpenCoreDataPostgreSQL
import PostgresNIO

/// `--postgres`: the PostgreSQL store against postgres-nio issuing the same SQL by hand (one
/// connection, async/await, a transaction per bulk write), on the server of `OCD_POSTGRES_URL`,
/// each in a fresh schema, in one run. The ratio column reads "ours÷raw" with the hand-written
/// postgres-nio as "raw".
enum PostgreSQLScenario {
    static func run(n: Int, runs: Int) async throws -> [Result] {
        guard let base = ProcessInfo.processInfo.environment["OCD_POSTGRES_URL"], let components = URLComponents(string: base) else {
            throw CoreDataError(.persistentStoreOpen, "--postgres needs OCD_POSTGRES_URL: start a server with .ci/postgres-server start DIR.")
        }
        let rows = RawNote.rows(n)
        let lookups = Array(rows.map(\.pk).shuffled().prefix(Swift.min(10_000, n)))
        var samples: [String: (ours: [Double], peer: [Double])] = [:]
        func add(_ name: String, _ ours: Double, _ peer: Double) {
            samples[name, default: ([], [])].ours.append(ours)
            samples[name, default: ([], [])].peer.append(peer)
        }
        for _ in 0..<runs {
            let schema = "ocd_bench_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
            var url = components
            url.queryItems = [URLQueryItem(name: "schema", value: schema), URLQueryItem(name: "tls", value: "disable")]   // plaintext, as the peer
            let peer = try await Peer(components: components, schema: schema + "_peer")
            let container = PersistentContainer(name: "Bench", managedObjectModel: ManagedObjectModel(Note.self))
            container.persistentStoreDescriptions = [PersistentStoreDescription(url: url.url!, type: .postgreSQL)]
            try container.loadPersistentStores()
            try await peer.createTable()

            let peerInsert = try await measureAsync { try await peer.insert(rows) }
            let writer = container.newBackgroundContext()
            let oursInsert = try OurOperations.insertAndSave(rows, in: writer)
            add("insert N objects + save", oursInsert, peerInsert)

            let peerFetch = try await measureAsync { let count = try await peer.fetchAll(); precondition(count == n) }
            let oursFetch = try OurOperations.fetchAndReadAll(in: container.newBackgroundContext())
            add("fetch N objects, read every attribute", oursFetch, peerFetch)

            let peerLookup = try await measureAsync { let found = try await peer.lookup(lookups); precondition(found == lookups.count) }
            let ids = try writer.performAndWait { try writer.fetch(FetchRequest<ManagedObjectID>(entityName: "Note")) }
            let oursLookup = try OurOperations.lookups(Array(ids.shuffled().prefix(lookups.count)), in: container.newBackgroundContext())
            add("\(lookups.count) lookups by object ID / key", oursLookup, peerLookup)

            let peerUpdate = try await measureAsync { try await peer.update(rows.map(\.pk), text: "updated") }
            let oursUpdate = try OurOperations.updateAllAndSave(in: container.newBackgroundContext())
            add("update one attribute of N + save", oursUpdate, peerUpdate)

            try await peer.deleteAll()
            let peerBatch = try await measureAsync { try await peer.insert(rows) }
            let batcher = container.newBackgroundContext()
            let dictionaries = rows.map { row -> [String: Any] in
                var dictionary: [String: Any] = ["id": row.id]
                if let text1 = row.text1 { dictionary["text1"] = text1 }
                if let text2 = row.text2 { dictionary["text2"] = text2 }
                if let text3 = row.text3 { dictionary["text3"] = text3 }
                return dictionary
            }
            let oursBatch = try batcher.performAndWait { () throws in
                _ = try batcher.execute(BatchDeleteRequest(fetchRequest: Note.fetchRequest()))
                return try measure { _ = try batcher.execute(BatchInsertRequest(entityName: "Note", objects: dictionaries)) }
            }
            add("batch insert N rows", oursBatch, peerBatch)

            try await peer.dropAndClose()
            for store in container.persistentStoreCoordinator.persistentStores { try container.persistentStoreCoordinator.remove(store) }
            try await dropSchema(schema, components: components)
        }
        return ["insert N objects + save", "fetch N objects, read every attribute", "\(lookups.count) lookups by object ID / key",
                "update one attribute of N + save", "batch insert N rows"].compactMap { name in
            samples[name].map { Result(scenario: "PostgreSQL: " + name, n: name.contains("lookups") ? lookups.count : n, ours: median($0.ours), raw: median($0.peer), grdb: nil) }
        }
    }

    /// Drops a schema of the benchmark's (its store closed first).
    static func dropSchema(_ schema: String, components: URLComponents) async throws {
        try await Peer.drop(schema, components: components)
    }

    private static func measureAsync(_ body: () async throws -> Void) async rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try await body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000_000
    }

    /// postgres-nio by hand: what a service would write without us, on one connection.
    private final class Peer {
        let connection: PostgresConnection
        let table: String

        init(components: URLComponents, schema: String) async throws {
            connection = try await Self.connect(components)
            _ = try await connection.query("CREATE SCHEMA \(unescaped: schema)", logger: Self.logger)
            table = schema + ".znote"
        }

        static let logger = Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() })

        static func connect(_ components: URLComponents) async throws -> PostgresConnection {
            let configuration = PostgresConnection.Configuration(host: components.host ?? "localhost", port: components.port ?? 5432,
                                                                 username: components.user ?? "postgres", password: components.password,
                                                                 database: String(components.path.dropFirst()), tls: .disable)
            return try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        }

        static func drop(_ schema: String, components: URLComponents) async throws {
            let connection = try await connect(components)
            _ = try await connection.query("DROP SCHEMA IF EXISTS \(unescaped: schema) CASCADE", logger: logger)
            try await connection.close()
        }

        func createTable() async throws {
            _ = try await connection.query("CREATE TABLE \(unescaped: table) (Z_PK bigint PRIMARY KEY, Z_ENT bigint, Z_OPT bigint, ZID bigint, ZTEXT1 text, ZTEXT2 text, ZTEXT3 text)", logger: Self.logger)
        }

        /// Multi-row `INSERT`s of 1,000 rows, as the store writes new rows.
        func insert(_ rows: [RawNote]) async throws {
            _ = try await connection.query("BEGIN", logger: Self.logger)
            for start in stride(from: 0, to: rows.count, by: 1_000) {
                var bindings = PostgresBindings(capacity: 5_000)
                var tuples: [String] = []
                for row in rows[start..<Swift.min(start + 1_000, rows.count)] {
                    let first = bindings.count + 1
                    bindings.append(row.pk)
                    bindings.append(Int64(row.id))
                    bindings.append(row.text1)
                    bindings.append(row.text2)
                    bindings.append(row.text3)
                    tuples.append("($\(first), 1, 1, $\(first + 1), $\(first + 2), $\(first + 3), $\(first + 4))")
                }
                let sql = "INSERT INTO \(table) (Z_PK, Z_ENT, Z_OPT, ZID, ZTEXT1, ZTEXT2, ZTEXT3) VALUES " + tuples.joined(separator: ", ")
                _ = try await connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: Self.logger)
            }
            _ = try await connection.query("COMMIT", logger: Self.logger)
        }

        func fetchAll() async throws -> Int {
            var count = 0
            var checksum = 0
            for try await (key, id, text1, text2, text3) in try await connection.query("SELECT Z_PK, ZID, ZTEXT1, ZTEXT2, ZTEXT3 FROM \(unescaped: table)", logger: Self.logger)
                .decode((Int64, Int64, String?, String?, String?).self) {
                checksum &+= Int(key) &+ Int(id) &+ (text1?.utf8.count ?? 0) &+ (text2?.utf8.count ?? 0) &+ (text3?.utf8.count ?? 0)
                count += 1
            }
            precondition(checksum != 0)
            return count
        }

        func lookup(_ keys: [Int64]) async throws -> Int {
            var found = 0
            for key in keys {
                for try await text in try await connection.query("SELECT ZTEXT1 FROM \(unescaped: table) WHERE Z_PK = \(key)", logger: Self.logger).decode(String?.self)
                    where text != nil { found += 1 }
            }
            return found
        }

        /// Multi-row updates of 1,000 rows matched by key and version (every row is at version 1
        /// here), reading back the keys written, as the store updates rows.
        func update(_ keys: [Int64], text: String) async throws {
            _ = try await connection.query("BEGIN", logger: Self.logger)
            for start in stride(from: 0, to: keys.count, by: 1_000) {
                var bindings = PostgresBindings(capacity: 3_000)
                var tuples: [String] = []
                for key in keys[start..<Swift.min(start + 1_000, keys.count)] {
                    let first = bindings.count + 1
                    bindings.append(key)
                    bindings.append(Int64(1))
                    bindings.append(text)
                    tuples.append("($\(first)::bigint, $\(first + 1)::bigint, $\(first + 2)::text)")
                }
                let sql = "UPDATE \(table) AS t SET Z_OPT = v.z_opt + 1, ZTEXT2 = v.c0 FROM (VALUES \(tuples.joined(separator: ", "))) AS v(z_pk, z_opt, c0) "
                    + "WHERE t.Z_PK = v.z_pk AND t.Z_OPT = v.z_opt RETURNING t.Z_PK"
                var written = 0
                for try await _ in try await connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: Self.logger).decode(Int64.self) { written += 1 }
                precondition(written == tuples.count)
            }
            _ = try await connection.query("COMMIT", logger: Self.logger)
        }

        func deleteAll() async throws {
            _ = try await connection.query("DELETE FROM \(unescaped: table)", logger: Self.logger)
        }

        func dropAndClose() async throws {
            _ = try await connection.query("DROP TABLE \(unescaped: table)", logger: Self.logger)
            try await connection.close()
        }
    }
}
#endif
