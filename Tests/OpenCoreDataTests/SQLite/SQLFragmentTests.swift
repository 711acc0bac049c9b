import OpenCoreDataCore
import OpenCoreDataSQL
import Testing
import TestSupport

@Suite(.dedicatedThread) struct SQLFragmentTests {
    /// A statement composed of parts renders its placeholders in each dialect, numbered across
    /// every part on PostgreSQL, with its values in the same order.
    @Test func placeholdersAreNumberedAcrossComposedParts() {
        let condition: SQLFragment = "ZNAME = \(bind: .string("a")) AND Z_PK IN (\(list: [.integer(1), .integer(2)]))"
        let statement: SQLFragment = "SELECT Z_PK FROM \(identifier: "ZNOTE") WHERE \(condition) LIMIT \(bind: .integer(10))"
        let sqlite = statement.rendered(for: .sqlite)
        #expect(sqlite.sql == "SELECT Z_PK FROM ZNOTE WHERE ZNAME = ? AND Z_PK IN (?, ?) LIMIT ?")
        #expect(sqlite.arguments == [.string("a"), .integer(1), .integer(2), .integer(10)])
        let postgres = statement.rendered(for: .postgreSQL)
        #expect(postgres.sql == "SELECT Z_PK FROM ZNOTE WHERE ZNAME = $1 AND Z_PK IN ($2, $3) LIMIT $4")
        #expect(postgres.arguments == sqlite.arguments)
        #expect(statement.arguments == sqlite.arguments)
    }

    /// Lists long enough to cross digit boundaries keep one number per value; an empty list
    /// renders nothing.
    @Test func longListsNumberEveryValue() {
        let values = (1...500).map { ManagedValue.integer(Int64($0)) }
        let rendered = SQLFragment("\(bind: .null), \(list: values), \(list: [])x").rendered(for: .postgreSQL)
        let placeholders = rendered.sql.split(separator: ", ")
        #expect(placeholders.count == 502)
        #expect(placeholders.first == "$1" && placeholders[1] == "$2" && placeholders[9] == "$10" && placeholders[500] == "$501")
        #expect(placeholders.last == "x")
        #expect(rendered.arguments.count == 501)
        #expect(SQLFragment("\(list: values)").rendered(for: .sqlite).sql == Array(repeating: "?", count: 500).joined(separator: ", "))
    }

    /// Plain names are written bare (both databases read them as the layout made them); any other
    /// name is quoted, with its quotes doubled, so that it cannot end the identifier.
    @Test func identifiersThatAreNotPlainNamesAreQuoted() {
        #expect(SQLFragment("\(identifier: "ZNOTE_2")").description == "ZNOTE_2")
        #expect(SQLFragment("\(identifier: "a b")").description == "\"a b\"")
        #expect(SQLFragment("\(identifier: "x\"; DROP TABLE t; --")").description == "\"x\"\"; DROP TABLE t; --\"")
        #expect(SQLFragment("\(identifier: "1abc")").description == "\"1abc\"")
        #expect(SQLFragment("\(identifier: "")").description == "\"\"")
        #expect(SQLFragment.identifiers(["Z_PK", "Z ENT"]).description == "Z_PK, \"Z ENT\"")
        // Names that must keep their spelling (a user's schema) are always quoted.
        #expect(SQLFragment("SET search_path TO \(quoted: "MySchema")").description == "SET search_path TO \"MySchema\"")
        #expect(SQLFragment("DROP TABLE \(quoted: "znote", in: "a\"b")").description == "DROP TABLE \"a\"\"b\".\"znote\"")
    }

    /// Truth values go to PostgreSQL as the 0 and 1 its `bigint` columns hold; SQLite binds them
    /// itself.
    @Test func truthValuesAreBoundAsTheirColumnsHoldThem() {
        let fragment: SQLFragment = "\(bind: .bool(true)) \(list: [.bool(false), .string("t")])"
        #expect(fragment.rendered(for: .postgreSQL).arguments == [.integer(1), .integer(0), .string("t")])
        #expect(fragment.rendered(for: .sqlite).arguments == [.bool(true), .bool(false), .string("t")])
    }

    /// Parameters bound when the statement runs take their positions among the bound values.
    @Test func parametersTakeTheirPositions() {
        let insert = RelationalLayout.insertStatement("ZNOTE", columns: ["ZA", "ZB"])
        #expect(insert.rendered(for: .sqlite).sql == "INSERT INTO ZNOTE (Z_PK, Z_ENT, Z_OPT, ZA, ZB) VALUES (?, ?, 1, ?, ?)")
        #expect(insert.rendered(for: .postgreSQL).sql == "INSERT INTO ZNOTE (Z_PK, Z_ENT, Z_OPT, ZA, ZB) VALUES ($1, $2, 1, $3, $4)")
        let mixed: SQLFragment = "\(bind: .integer(7)) \(parameters: 2) \(bind: .integer(8))"
        #expect(mixed.rendered(for: .postgreSQL).sql == "$1 $2, $3 $4")
        #expect(mixed.rendered(for: .postgreSQL).arguments == [.integer(7), .null, .null, .integer(8)])
        let filled = mixed.rendered(for: .postgreSQL, parameters: [.string("p"), .bool(true)])
        #expect(filled.sql == "$1 $2, $3 $4")
        #expect(filled.arguments == [.integer(7), .string("p"), .integer(1), .integer(8)])
    }

    /// Joining and appending keep text and values in order; adjacent text merges.
    @Test func joiningKeepsTheOrderOfTextAndValues() {
        let parts: [SQLFragment] = ["a = \(bind: .integer(1))", "b = \(bind: .integer(2))", "c IS NULL"]
        var joined = SQLFragment.joined(parts, separator: " AND ")
        joined += " OR d = \(bind: .integer(3))"
        #expect(joined.rendered(for: .postgreSQL).sql == "a = $1 AND b = $2 AND c IS NULL OR d = $3")
        #expect(joined.arguments == [.integer(1), .integer(2), .integer(3)])
        #expect(SQLFragment.joined([SQLFragment](), separator: ", ").isEmpty)
        #expect(("x" + "y" as SQLFragment).segments == [.sql("xy")])
    }

    /// A fragment of names rendered once reads as the fragment itself does in both dialects,
    /// names that need quotes included, composed before values numbered after it; a fragment
    /// with values has no dialect-free text.
    @Test func namesRenderedOnceReadAsTheFragment() throws {
        let names = SQLFragment.identifiers(["Z_PK", "ZNAME", "weird \"name\"", "1st", "größe"])
        let once = try #require(names.prerendered)
        #expect(once.segments.count == 1)
        for dialect in [SQLDialect.sqlite, .postgreSQL] {
            let direct: SQLFragment = "SELECT \(names) FROM T WHERE ZNAME = \(bind: .string("a"))"
            let composed: SQLFragment = "SELECT \(once) FROM T WHERE ZNAME = \(bind: .string("a"))"
            #expect(composed.rendered(for: dialect).sql == direct.rendered(for: dialect).sql)
            #expect(composed.rendered(for: dialect).arguments == [.string("a")])
        }
        #expect(once.rendered(for: .sqlite).sql == #"Z_PK, ZNAME, "weird ""name""", "1st", "größe""#)
        #expect(SQLFragment("x = \(bind: .integer(1))").prerendered == nil)
        #expect(SQLFragment("x IN (\(list: []))").prerendered == nil)
        #expect(SQLFragment("VALUES (\(parameters: 2))").prerendered == nil)
    }
}
