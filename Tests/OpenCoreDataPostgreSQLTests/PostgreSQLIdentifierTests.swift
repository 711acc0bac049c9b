@testable import OpenCoreDataPostgreSQL
import OpenCoreDataSQL
import Testing
import TestSupport

/// Names the store makes from model names (derived-attribute triggers and their functions) as
/// PostgreSQL keeps them, within its 63 bytes.
@Suite(.dedicatedThread) struct PostgreSQLIdentifierTests {
    @Test func shortNamesAreFoldedAsPostgreSQLFoldsThem() {
        #expect(SQLDialect.postgreSQL.identifier("Z_DA_ZPAGE_Book_pagesCount_PARAMETER") == "z_da_zpage_book_pagescount_parameter")
        // PostgreSQL folds only ASCII letters of an unquoted name.
        #expect(SQLDialect.postgreSQL.identifier("Z_DA_ZÉTÉ_Été") == "z_da_zÉtÉ_Été")
    }

    @Test func longNamesFitAndStayDistinct() {
        let prefix = "Z_DA_ZAVERYLONGENTITYNAMEINDEED_AVeryLongEntityNameIndeed_"
        let first = SQLDialect.postgreSQL.identifier(prefix + "firstAttribute_PARAMETER_INSERT")
        let second = SQLDialect.postgreSQL.identifier(prefix + "secondAttribute_PARAMETER_INSERT")
        #expect(first.utf8.count <= 63 && second.utf8.count <= 63)
        #expect(first != second)
        #expect(first == SQLDialect.postgreSQL.identifier(prefix + "firstAttribute_PARAMETER_INSERT"), "the same name every time")
        // A cut never splits a character.
        let accented = SQLDialect.postgreSQL.identifier(String(repeating: "é", count: 40))
        #expect(accented.utf8.count <= 63)
        #expect(accented.hasPrefix(String(repeating: "é", count: 23) + "_"))
    }
}
