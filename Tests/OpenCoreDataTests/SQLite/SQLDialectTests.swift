import OpenCoreDataSQL
import Testing
import TestSupport

@Suite(.dedicatedThread) struct SQLDialectTests {
    /// Placeholder lists are written as bytes; PostgreSQL's carry their numbers across digits.
    @Test func placeholderListsNumberEachValueInEitherDialect() {
        #expect(SQLDialect.sqlite.placeholders(from: 4, count: 3) == "?, ?, ?")
        #expect(SQLDialect.postgreSQL.placeholders(from: 9, count: 3) == "$9, $10, $11")
        #expect(SQLDialect.postgreSQL.placeholders(from: 99, count: 2) == "$99, $100")
        #expect(SQLDialect.postgreSQL.placeholders(from: 1, count: 0) == "")
        #expect(SQLDialect.postgreSQL.placeholder(65_535) == "$65535")
        #expect(SQLDialect.sqlite.placeholder(7) == "?")
        let long = SQLDialect.postgreSQL.placeholders(from: 1, count: 500).split(separator: ", ")
        #expect(long.count == 500 && long.first == "$1" && long.last == "$500")
    }
}
