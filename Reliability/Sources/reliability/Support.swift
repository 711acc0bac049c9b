import Synchronization
import CSQLiteCheck
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Plain SQL against a store file through SQLite's C API: the harness checks what is on disk
/// without the library under test.
final class RawStore {
    private var db: OpaquePointer?

    init(_ path: String, writable: Bool = false) throws {
        let flags = writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY
        guard sqlite3_open_v2(path, &db, flags, nil) == SQLITE_OK else {
            defer { sqlite3_close_v2(db) }
            throw Failure("cannot open \(path): \(String(cString: sqlite3_errmsg(db)))")
        }
        sqlite3_busy_timeout(db, 30_000)
    }

    deinit { sqlite3_close_v2(db) }

    /// Every row of a query, columns as Int64, Double, String, Data or nil.
    func rows(_ sql: String) throws -> [[Any?]] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else {
            throw Failure("\(sql): \(String(cString: sqlite3_errmsg(db)))")
        }
        defer { sqlite3_finalize(statement) }
        var result: [[Any?]] = []
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else { throw Failure("\(sql): \(String(cString: sqlite3_errmsg(db)))") }
            var row: [Any?] = []
            for column in 0..<sqlite3_column_count(statement) {
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: row.append(sqlite3_column_int64(statement, column))
                case SQLITE_FLOAT: row.append(sqlite3_column_double(statement, column))
                case SQLITE_TEXT: row.append(String(cString: sqlite3_column_text(statement, column)))
                case SQLITE_BLOB:
                    let count = Int(sqlite3_column_bytes(statement, column))
                    row.append(count == 0 ? Data() : Data(bytes: sqlite3_column_blob(statement, column), count: count))
                default: row.append(nil)
                }
            }
            result.append(row)
        }
        return result
    }

    func integer(_ sql: String) throws -> Int64 {
        try rows(sql).first?.first as? Int64 ?? 0
    }

    /// `PRAGMA integrity_check`: "ok", or SQLite's list of problems.
    func integrity() throws -> String {
        try rows("PRAGMA integrity_check").compactMap { $0.first as? String }.joined(separator: "; ")
    }

    /// Every entity's key counter is at least its table's largest key (no key is handed out twice).
    /// The entries of the store once it passes `integrity_check` (nil for a file without tables),
    /// and with `history` its history transactions too; `name` is the file's name for the failure.
    func intactContent(named name: String, history: Bool = false) throws -> (entries: Int64, transactions: Int64)? {
        let integrity = try integrity()
        guard integrity == "ok" else { throw Failure("integrity_check of \(name): \(integrity)") }
        guard try integer("SELECT COUNT(*) FROM sqlite_master WHERE name = 'ZENTRY'") == 1 else { return nil }
        return (try integer("SELECT COUNT(*) FROM ZENTRY"), history ? try integer("SELECT COUNT(*) FROM ATRANSACTION") : 0)
    }

    func keyCountersProblems() throws -> [String] {
        var problems: [String] = []
        for row in try rows("SELECT Z_NAME, Z_MAX FROM Z_PRIMARYKEY WHERE Z_SUPER = 0 AND Z_ENT < 16000") {
            guard let name = row[0] as? String else { continue }
            let table = "Z" + name.uppercased()
            guard try !rows("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '\(table)'").isEmpty else { continue }
            let largest = try integer("SELECT IFNULL(MAX(Z_PK), 0) FROM \(table)")
            if (row[1] as? Int64 ?? 0) < largest { problems.append("\(name): Z_MAX \(row[1] ?? "nil") < MAX(Z_PK) \(largest)") }
        }
        return problems
    }
}

/// A problem the harness found, with what it saw.
struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// An append-only file of acknowledged operations, each line fsynced before the next
/// operation starts: what the workload was told is durable.
///
/// A kill can tear a line: the kernel stops a write between two pages when SIGKILL is pending,
/// so a line that straddles a page boundary may land in part ("1" of "1041"). That line was never
/// acknowledged (the write did not return): `lines` ignores an unterminated last line, and opening
/// the ledger cuts it off, so that the next line does not run on from it ("1" + "1041\n" read as
/// 11041).
final class Ledger {
    private let descriptor: Int32

    init(_ path: String) throws {
        descriptor = open(path, O_RDWR | O_CREAT | O_APPEND, 0o644)
        guard descriptor >= 0 else { throw Failure("cannot open the ledger \(path)") }
        let text = Array(FileManager.default.contents(atPath: path) ?? Data())
        if let last = text.last, last != UInt8(ascii: "\n") {
            let whole = text.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
            guard ftruncate(descriptor, off_t(whole)) == 0 else { throw Failure("cannot cut the torn last line of the ledger \(path)") }
        }
    }

    deinit { close(descriptor) }

    func append(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        fsync(descriptor)
    }

    /// The whole lines of the ledger at `path` (a torn last one left out).
    static func lines(_ path: String) -> [String] {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines.removeLast()   // after the last newline: empty, or a torn line
        return lines.filter { !$0.isEmpty }
    }
}

/// Child processes: this executable run again with a worker's arguments.
enum Child {
    static func start(_ arguments: [String], output: FileHandle? = nil) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        process.arguments = arguments
        process.standardOutput = output ?? FileHandle.nullDevice
        process.standardError = FileHandle.standardError
        try process.run()
        return process
    }

    static func kill(_ process: Process) {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// A small deterministic generator (SplitMix64): the same seed gives the same workload in
/// the worker and in the checker.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Resident memory of this process, in MB (Linux `/proc/self/statm`).
func residentMegabytes() -> Double {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Double(fields[1]) else { return 0 }
    return pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
}

func removeStore(_ path: String) {
    for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
}

/// One line to standard output, unbuffered (a parent reads it even if this process is killed next).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// A value shared with a callback on another thread, behind a mutex.
final class Shared<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<T>(_ body: (inout Value) -> T) -> T { mutex.withLock { body(&$0) } }
}
