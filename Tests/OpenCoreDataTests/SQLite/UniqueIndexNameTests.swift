import Foundation
import OpenCoreData
@testable import OpenCoreDataPostgreSQL
import OpenCoreDataSQL
import Testing
import TestSupport

/// Every uniqueness constraint of a model is a unique index in the store, whatever its
/// properties are called: Core Data's index names join property names with `_`, so two
/// constraints can share a name, and PostgreSQL keeps only 63 bytes of one. A constraint left
/// without its index lets another writer (a second service, a tool, a race) store duplicates.
@Suite(.dedicatedThread) struct UniqueIndexNameTests {
    /// The SQL stores: SQLite, and PostgreSQL when a server is configured.
    static var sqlStores: [StoreKind] { StoreKind.allCases.filter { $0 != .inMemory } }

    /// `Pair` with the constraints `[a_b, c]` and `[a, b_c]` (one Core Data name,
    /// `Z_Pair_UNIQUE_a_b_c`), and `Long…` with two constraints whose names share their first
    /// 63 bytes.
    private static func model() -> ManagedObjectModel {
        let pair = EntityDescription(name: "Pair", properties: ["a_b", "c", "a", "b_c"].map { AttributeDescription(name: $0, type: .string) })
        pair.uniquenessConstraints = [["a_b", "c"], ["a", "b_c"]]
        let first = "aPropertyNameLongEnoughToFillMostOfTheBytesAName", second = first + "Two"
        let long = EntityDescription(name: "LongNamedEntity", properties: [first + "One", second].map { AttributeDescription(name: $0, type: .string) })
        long.uniquenessConstraints = [[first + "One"], [second]]
        return ManagedObjectModel(entities: [pair, long])
    }

    @Test(arguments: sqlStores)
    func eachConstraintRefusesItsOwnDuplicates(kind: StoreKind) throws {
        let stack = try TestStack(kind, model: Self.model())
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let pair = ManagedObject(entity: stack.container.managedObjectModel.entitiesByName["Pair"]!, insertInto: context)
            for (key, value) in ["a_b": "1", "c": "2", "a": "3", "b_c": "4"] { pair.setValue(value, forKey: key) }
            try context.save()
        }
        let insert = try RawInsert(stack)
        // The same (a, b_c), another (a_b, c): only the second constraint's index refuses it.
        #expect(throws: (any Error).self) { try insert.run("ZPAIR", ["ZA_B": "9", "ZC": "9", "ZA": "3", "ZB_C": "4"]) }
        // The same (a_b, c), another (a, b_c): the first constraint's index refuses it.
        #expect(throws: (any Error).self) { try insert.run("ZPAIR", ["ZA_B": "1", "ZC": "2", "ZA": "8", "ZB_C": "8"]) }
        try insert.run("ZPAIR", ["ZA_B": "5", "ZC": "5", "ZA": "5", "ZB_C": "5"])
        // Both long-named constraints hold.
        let columns = ["ZAPROPERTYNAMELONGENOUGHTOFILLMOSTOFTHEBYTESANAMEONE", "ZAPROPERTYNAMELONGENOUGHTOFILLMOSTOFTHEBYTESANAMETWO"]
        try insert.run("ZLONGNAMEDENTITY", [columns[0]: "x", columns[1]: "y"])
        #expect(throws: (any Error).self) { try insert.run("ZLONGNAMEDENTITY", [columns[0]: "x", columns[1]: "z"]) }
        #expect(throws: (any Error).self) { try insert.run("ZLONGNAMEDENTITY", [columns[0]: "w", columns[1]: "y"]) }
        _ = stack
    }

    /// SQLite stores keep Core Data's index names: the first constraint of a name keeps it.
    @Test func theFirstConstraintOfANameKeepsCoreDatasName() throws {
        let stack = try TestStack(.sqlite, model: Self.model())
        let db = try RawSQLite(stack.storeURL)
        #expect(try db.schema("Z_Pair_UNIQUE_a_b_c") == "CREATE UNIQUE INDEX Z_Pair_UNIQUE_a_b_c ON ZPAIR (ZA_B COLLATE BINARY ASC, ZC COLLATE BINARY ASC)")
        let unique = try db.rows("SELECT name FROM sqlite_master WHERE type = 'index' AND sql LIKE 'CREATE UNIQUE%' AND tbl_name = 'ZPAIR'")
        #expect(unique.count == 2)
    }

    /// A schema made before the names were kept distinct lacks one of the two indexes (made
    /// here by dropping it): opening it makes the index again.
    @Test(.enabled(if: TestPostgreSQL.isConfigured, "OCD_POSTGRES_URL is not set"))
    func aPostgreSQLSchemaMissingAUniqueIndexGetsItWhenOpened() throws {
        let directory = TemporaryDirectory()
        let name = try dropSecondPairIndex(directory)
        let stack = try TestStack(.postgreSQL, model: Self.model(), directory: directory)
        let insert = try RawInsert(stack)
        try insert.run("ZPAIR", ["ZA_B": "1", "ZC": "1", "ZA": "3", "ZB_C": "4"])
        #expect(throws: (any Error).self, "the index \(name) was made again") {
            try insert.run("ZPAIR", ["ZA_B": "2", "ZC": "2", "ZA": "3", "ZB_C": "4"])
        }
    }

    /// The same, with duplicates stored while the index was missing: the store does not open,
    /// and says which constraint its rows break.
    @Test(.enabled(if: TestPostgreSQL.isConfigured, "OCD_POSTGRES_URL is not set"))
    func aPostgreSQLSchemaWhoseRowsBreakAConstraintWithoutItsIndexDoesNotOpen() throws {
        let directory = TemporaryDirectory()
        _ = try dropSecondPairIndex(directory) { insert in
            try insert.run("ZPAIR", ["ZA_B": "1", "ZC": "1", "ZA": "3", "ZB_C": "4"])
            try insert.run("ZPAIR", ["ZA_B": "2", "ZC": "2", "ZA": "3", "ZB_C": "4"])
        }
        var failure: CoreDataError?
        do { _ = try TestStack(.postgreSQL, model: Self.model(), directory: directory) } catch { failure = error as? CoreDataError }
        #expect(failure?.code == .persistentStoreOpen)
        #expect(failure?.message.contains("ZPAIR (ZA, ZB_C)") == true, "\(String(describing: failure))")
    }

    /// Makes a PostgreSQL store of `model()` in `directory`'s schema, drops the unique index of
    /// the `[a, b_c]` constraint, runs `writing` with a raw writer, and closes it; returns the
    /// dropped index's name.
    private func dropSecondPairIndex(_ directory: TemporaryDirectory, writing: (RawInsert) throws -> Void = { _ in }) throws -> String {
        let stack = try TestStack(.postgreSQL, model: Self.model(), directory: directory)
        let url = try PostgreSQLStoreURL(try directory.postgreSQLSchema())
        let session = try PostgreSQLSession.connect(url)
        defer { session.close() }
        // The definitions of this schema's indexes only, matched here: a condition on `indexdef`
        // in SQL may make the server print the definitions of other schemas' indexes, which
        // tests running beside this one are dropping ("could not open relation").
        let query: SQLFragment = "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = \(bind: .string(url.schema))"
        let rows = try session.execute(query).rows
        let pair = rows.first { row in
            if case .string(let definition) = row[1] { definition.contains("UNIQUE") && definition.contains("(za, zb_c)") } else { false }
        }
        guard case .string(let name)? = pair?.first else {
            throw CoreDataError(.persistentStoreOpen, "The index of [a, b_c] was not found.")
        }
        try session.execute(text: "DROP INDEX " + PostgreSQLSQL.qualified(url.schema, name))
        try writing(try RawInsert(stack))
        for store in stack.container.persistentStoreCoordinator.persistentStores {
            try stack.container.persistentStoreCoordinator.remove(store)
        }
        return name
    }

    @Test func postgreSQLIndexNamesFitTheServersLimitAndStayDistinct() {
        let long = String(repeating: "x", count: 70)
        let first = SQLDialect.postgreSQL.identifier("Z_E_UNIQUE_" + long + "One")
        let second = SQLDialect.postgreSQL.identifier("Z_E_UNIQUE_" + long + "Two")
        #expect(first.utf8.count <= 63 && second.utf8.count <= 63 && first != second)
        #expect(SQLDialect.sqlite.identifier("Z_E_UNIQUE_" + long + "One") == "Z_E_UNIQUE_" + long + "One", "SQLite keeps Core Data's names")
    }
}

/// An `INSERT` of one row written straight into a store's table, past the library.
private final class RawInsert {
    let stack: TestStack
    /// The next row's `Z_PK`: above the library's, and new for every row.
    private var key: Int64 = 1_000

    init(_ stack: TestStack) throws { self.stack = stack }

    func run(_ table: String, _ values: [String: String]) throws {
        let columns = values.keys.sorted()
        key += 1
        switch stack.kind {
        case .postgreSQL:
            let url = try PostgreSQLStoreURL(try stack.directory.postgreSQLSchema())
            let session = try PostgreSQLSession.connect(url)
            defer { session.close() }
            let arguments: [ManagedValue] = [.integer(key)] + columns.map { .string(values[$0]!) }
            _ = try session.execute("""
                INSERT INTO \(sql: PostgreSQLSQL.qualified(url.schema, table.lowercased())) (z_pk, \(SQLFragment.identifiers(columns))) \
                VALUES (\(list: arguments))
                """ as SQLFragment)
        default:
            let db = try RawSQLite(stack.storeURL, writable: true)
            let placeholders = Array(repeating: "?", count: columns.count + 1).joined(separator: ", ")
            try db.execute("INSERT INTO \(table) (Z_PK, \(columns.joined(separator: ", "))) VALUES (\(placeholders))", values: [key as Any?] + columns.map { values[$0]! as Any? })
        }
    }
}
