import OpenCoreData
import Testing
import TestSupport

/// `NSPredicate.evaluate(with:)` on the plain values apps filter in memory (strings, numbers,
/// dictionaries, arrays), written as Core Data code writes it (importing `OpenCoreData` alone, see
/// DEVIATIONS.md on `NSPredicate` beside `import Foundation`); expectations are Foundation's
/// answers for the same predicates.
@Suite(.dedicatedThread) struct PredicateOnValuesTests {
    @Test func stringsAndNumbersAreTheEvaluatedObject() {
        #expect(NSPredicate(format: "SELF BEGINSWITH[c] %@", "ap").evaluate(with: "Apple"))
        #expect(!NSPredicate(format: "SELF BEGINSWITH %@", "ap").evaluate(with: "Apple"))
        #expect(NSPredicate(format: "SELF > 3").evaluate(with: 4))
        #expect(!NSPredicate(format: "SELF > 3").evaluate(with: 3))
        #expect(NSPredicate(format: "SELF BETWEEN {1, 5}").evaluate(with: 2.5))
        #expect(NSPredicate(format: "SELF IN %@", ["a", "b"]).evaluate(with: "b"))
        #expect(NSPredicate(format: "SELF MATCHES '[0-9]+'").evaluate(with: "2026"))
        #expect(NSPredicate(format: "SELF == nil").evaluate(with: nil))
        #expect(NSPredicate(format: "SELF < 5").evaluate(with: "x") == false)     // no order between a string and a number
        let fruit = ["Apple", "banana", "Cherry", "apricot"]
        #expect(fruit.filter { NSPredicate(format: "SELF CONTAINS[cd] 'AP'").evaluate(with: $0) } == ["Apple", "apricot"])
    }

    /// Formats read the same whatever the characters: Unicode spaces and line breaks between
    /// tokens, keys with letters beyond ASCII, numbers next to letters; and every kind of
    /// argument compares as its value (the common ones are recognized by their exact type first).
    @Test func formatsWithUnicodeAndArgumentsOfEveryCommonType() {
        let when = Date(timeIntervalSinceReferenceDate: 800_000_000)
        let tag = UUID()
        let row: [String: Any] = ["größe": 42, "naïve": "oui", "x2": 7, "when": when, "tag": tag, "ratio": 0.5]
        #expect(NSPredicate(format: "größe\u{00A0}==\u{2003}42").evaluate(with: row))
        #expect(NSPredicate(format: "naïve == 'oui'\r\nAND\tx2 == 7").evaluate(with: row))
        #expect(!NSPredicate(format: "naïve == 'non'").evaluate(with: row))
        #expect(NSPredicate(format: "größe == %@", "42").evaluate(with: ["größe": "42"]))
        #expect(NSPredicate(format: "größe == %d", 42).evaluate(with: row))
        #expect(NSPredicate(format: "größe == %@", Int64(42)).evaluate(with: row))
        #expect(NSPredicate(format: "größe == %@", Int32(42)).evaluate(with: row))
        #expect(NSPredicate(format: "größe == %@", Int16(42)).evaluate(with: row))
        #expect(NSPredicate(format: "ratio == %@", 0.5).evaluate(with: row))
        #expect(NSPredicate(format: "when == %@", when).evaluate(with: row))
        #expect(NSPredicate(format: "tag == %@", tag).evaluate(with: row))
        #expect(!NSPredicate(format: "tag == %@", UUID()).evaluate(with: row))
        #expect(NSPredicate(format: "größe == %@", Optional(42) as Any).evaluate(with: row))
        #expect(NSPredicate(format: "größe IN %@", [41, 42]).evaluate(with: row))
    }

    /// An ASCII format (read a byte at a time) reads as the same format with a character beyond
    /// ASCII does: keywords in any case, "\r\n" between tokens and inside quotes.
    @Test func asciiFormatsReadAsOthersDo() {
        let row: [String: Any] = ["x2": 7, "ratio": 0.5, "name": "a\r\nb", "größe": 42]
        for (ascii, other) in [("x2 == 7 aNd ratio BeTwEeN {0, 1}", "x2 == 7 aNd ratio BeTwEeN {0, 1} AND größe == 42"),
                               ("ratio In {0.5} or x2 == 8", "ratio In {0.5} or größe == 8"),
                               ("x2 == 7\r\nand name == 'a\r\nb'", "x2 == 7\r\nand name == 'a\r\nb' and größe == 42"),
                               ("not (x2 == 8) && name contains[c] 'A'", "not (größe == 8) && name contains[c] 'A'")] {
            #expect(NSPredicate(format: ascii).evaluate(with: row), "\(ascii)")
            #expect(NSPredicate(format: other).evaluate(with: row), "\(other)")
        }
        #expect(!NSPredicate(format: "x2 == 7 AND ratio between {0.6, 1}").evaluate(with: row))
        #expect(NSPredicate(format: "name == 'a\r\nb'").predicateFormat == NSPredicate(format: "name == \"a\r\nb\"").predicateFormat)
    }

    /// A format read before (its tokens are kept) takes each predicate's own arguments; more
    /// formats than are kept read as well; a format that cannot be read is refused every time,
    /// naming where.
    @Test func aFormatReadBeforeTakesNewArguments() throws {
        for value in 0..<600 {
            #expect(NSPredicate(format: "SELF == %d", value).evaluate(with: value))
            #expect(!NSPredicate(format: "SELF == %d", value).evaluate(with: value + 1))
            #expect(NSPredicate(format: "SELF == \(value) OR SELF == %d", -1).evaluate(with: value))
        }
        #expect(NSPredicate(format: "name == %@ AND size > %d", "a", 3).evaluate(with: ["name": "a", "size": 4]))
        #expect(!NSPredicate(format: "name == %@ AND size > %d", "b", 3).evaluate(with: ["name": "a", "size": 4]))
        for _ in 0..<2 {
            let broken = #expect(throws: CoreDataError.self) { try NSPredicate(format: "name == 'open").validate() }
            #expect(broken?.message.contains("never closed") == true)
        }
        let long = (0..<200).map { "SELF == \($0)" }.joined(separator: " OR ")
        #expect(NSPredicate(format: long).evaluate(with: 199) && !NSPredicate(format: long).evaluate(with: 200))
    }

    @Test func dictionariesAreReadByKeyAndNestedKeyPaths() {
        let people: [[String: Any]] = [
            ["name": "Ann", "age": 34, "address": ["city": "Paris"], "tags": ["swift", "linux"]],
            ["name": "Bob", "age": 28, "address": ["city": "Oslo"], "tags": [String]()],
            ["name": "Cid", "age": 41, "tags": ["swift"]],
        ]
        func names(_ format: String, _ arguments: Any...) -> [String] {
            let predicate = NSPredicate(format: format, argumentArray: arguments)
            return people.filter { predicate.evaluate(with: $0) }.compactMap { $0["name"] as? String }
        }
        #expect(names("age > 30") == ["Ann", "Cid"])
        #expect(names("name == %@ OR age < %d", "Cid", 30) == ["Bob", "Cid"])
        #expect(names("address.city == 'Paris'") == ["Ann"])
        #expect(names("address == nil") == ["Cid"])                               // a missing key is nil
        #expect(names("ANY tags == 'swift'") == ["Ann", "Cid"])
        #expect(names("'linux' IN tags") == ["Ann"])
        #expect(names("tags CONTAINS 'swift'") == ["Ann", "Cid"])
        #expect(names("tags.@count == 0") == ["Bob"])
        #expect(names("NONE tags == 'swift'") == ["Bob"])
        #expect(names("ALL tags == 'swift'") == ["Bob", "Cid"])                   // ALL of nothing holds
        #expect(names("SUBQUERY(tags, $t, $t BEGINSWITH 'l').@count > 0") == ["Ann"])
        #expect(names("nickname == 'x'") == [])
    }

    @Test func collectionOperatorsAndArithmeticOverArrays() {
        let order: [String: Any] = ["lines": [["price": 2.5, "count": 2], ["price": 10, "count": 1]], "discount": 1]
        #expect(NSPredicate(format: "lines.@sum.price == 12.5").evaluate(with: order))
        #expect(NSPredicate(format: "lines.@max.price == 10").evaluate(with: order))
        #expect(NSPredicate(format: "lines.@avg.count == 1.5").evaluate(with: order))
        #expect(NSPredicate(format: "lines.@count * 2 - discount == 3").evaluate(with: order))
        #expect(NSPredicate(format: "ANY lines.price < 3").evaluate(with: order))
        #expect(!NSPredicate(format: "ALL lines.price < 3").evaluate(with: order))
    }

    @Test func substitutionVariablesAndBlocks() {
        let template = NSPredicate(format: "age >= $minimum")
        #expect(template.evaluate(with: ["age": 40], substitutionVariables: ["minimum": 30]))
        #expect(!template.evaluate(with: ["age": 20], substitutionVariables: ["minimum": 30]))
        #expect(!template.evaluate(with: ["age": 40]))                           // no value for $minimum
        let even = NSPredicate { value, _ in (value as? Int).map { $0 % 2 == 0 } ?? false }
        #expect([1, 2, 3, 4].filter { even.evaluate(with: $0) } == [2, 4])
        #expect(!NSPredicate(format: "age >").evaluate(with: ["age": 1]))          // malformed: false, no trap
    }
}
