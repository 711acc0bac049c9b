import Foundation
import OpenCoreDataCore

/// The connection settings a store's options ask for: `NSSQLitePragmasOption` and
/// `NSPersistentStoreTimeoutOption`, validated once when the store is added.
package struct SQLiteStoreOptions: Sendable {
    /// One `PRAGMA name = value`, both checked to be plain words or numbers.
    struct Pragma: Sendable, Equatable {
        var name: String
        var value: String
    }

    /// How long a connection waits for another one's lock before failing with 134090, in
    /// milliseconds. Core Data's default is 240 s; ours is 10 s (see DEVIATIONS.md).
    var busyTimeoutMilliseconds: Int32 = 10_000
    /// The WAL file's size (bytes) kept after a checkpoint: 16 MiB, four times what SQLite's
    /// automatic checkpoint lets it grow to between checkpoints, so ordinary saves never regrow it.
    static let defaultJournalSizeLimit = 16 << 20
    /// Applied in order after our defaults (`journal_mode = WAL`, `synchronous = NORMAL`,
    /// `journal_size_limit = 16777216`), so a pragma given here wins.
    var pragmas: [Pragma] = []

    package init() {}

    /// Reads `NSSQLitePragmasOption` (`[String: value]`, values numbers, booleans or words such
    /// as `FULL`) and `NSPersistentStoreTimeoutOption` (seconds). Throws 134080 naming the entry
    /// that is not a pragma SQLite could take: pragmas cannot take bound values, so nothing but
    /// a plain name and a number or a word ever reaches SQL.
    package init(options: [String: any Sendable]) throws {
        if let timeout = options[NSPersistentStoreTimeoutOption] {
            guard let seconds = Self.number(timeout), seconds.isFinite, seconds >= 0 else {
                throw CoreDataError(.persistentStoreOpen, "NSPersistentStoreTimeoutOption must be a number of seconds (0 or more); it is \(timeout).")
            }
            busyTimeoutMilliseconds = Int32(min(seconds * 1000, Double(Int32.max)).rounded())
        }
        guard let given = options[NSSQLitePragmasOption] else { return }
        guard let entries = given as? [String: any Sendable] else {
            throw CoreDataError(.persistentStoreOpen, """
                NSSQLitePragmasOption must be a dictionary of pragma names and values, such as \
                [\"synchronous\": \"FULL\"].
                """)
        }
        for name in entries.keys.sorted() {
            guard Self.isWord(name), name.first.map({ !$0.isNumber }) == true else {
                throw CoreDataError(.persistentStoreOpen, """
                    '\(name)' in NSSQLitePragmasOption is not an SQLite pragma name: use letters, digits and \
                    underscores, as in \"synchronous\".
                    """)
            }
            guard let value = Self.pragmaValue(entries[name]) else {
                throw CoreDataError(.persistentStoreOpen, """
                    The value of '\(name)' in NSSQLitePragmasOption must be a number, a boolean or a word such \
                    as FULL or NORMAL.
                    """)
            }
            pragmas.append(Pragma(name: name, value: value))
        }
    }

    /// A pragma's value as SQL text: a number, or a word (optionally negative: `-2000`).
    private static func pragmaValue(_ value: (any Sendable)?) -> String? {
        switch value {
        case let flag as Bool: return flag ? "1" : "0"
        case let word as String: return isWord(word.hasPrefix("-") ? String(word.dropFirst()) : word) ? word : nil
        case let other?:
            guard let number = number(other), number.isFinite else { return nil }
            return number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
        case nil: return nil
        }
    }

    private static func isWord(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F }
    }

    private static func number(_ value: any Sendable) -> Double? {
        switch value {
        case let v as Int: Double(v)
        case let v as Double: v
        case let v as NSNumber: v.doubleValue
        default: nil
        }
    }

    /// A new read-only connection to `path` with these settings (a reader of the pool, or the
    /// writer of a store forced read-only).
    func readOnlyConnection(to path: String) throws -> SQLiteConnection {
        let connection = try SQLiteConnection(path: path, readOnly: true, busyTimeout: busyTimeoutMilliseconds)
        try apply(to: connection, readOnly: true)
        return connection
    }

    /// Applies the pragmas to a connection. On a read-only connection, pragmas that would
    /// write the file (they belong to the writer, which already applied them) are skipped.
    func apply(to connection: SQLiteConnection, readOnly: Bool) throws {
        for pragma in pragmas {
            do {
                try connection.execute("PRAGMA \(pragma.name) = \(pragma.value)")
            } catch let error as CoreDataError where readOnly && (error.sqliteCode ?? 0) & 0xff == 8 /* SQLITE_READONLY */ {
                continue
            } catch let error as CoreDataError {
                throw CoreDataError(.persistentStoreOpen, """
                    SQLite refused PRAGMA \(pragma.name) = \(pragma.value) from NSSQLitePragmasOption: \
                    \(error.message) Check the pragma's name and value in SQLite's documentation.
                    """, storeDetail: error.storeDetail)
            }
        }
    }
}
