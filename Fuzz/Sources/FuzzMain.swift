import Foundation
import OpenCoreData
import OpenCoreDataCore

// libFuzzer's entry points. One binary holds every target; `OCD_FUZZ_TARGET` picks one (Fuzz/run
// sets it). A target returns normally for every input: for bad input our API must answer or throw
// `CoreDataError`. Anything else — a trap, an AddressSanitizer report, a hang (libFuzzer's
// -timeout), a blown memory limit (-rss_limit_mb), or an error of another type (`fail`) — is a
// finding, saved by libFuzzer as a crash-… or timeout-… file.

/// The targets by name, made on first use (each sets up its stores once).
let targets: [String: @Sendable () -> any FuzzTarget] = [
    "predicate": { PredicateTarget() },
    "plist": { PropertyListTarget() },
    "archive": { ArchiveTarget() },
    "xml-model": { XMLModelTarget() },
    "xml-mapping": { XMLMappingTarget() },
    "store": { StoreTarget() },
    "history-token": { HistoryTokenTarget() },
    "transformable": { TransformableTarget() },
]

/// One fuzz target: set up once, then run for each input.
protocol FuzzTarget {
    func run(_ input: Data) throws
}

// Written once, in LLVMFuzzerInitialize, before libFuzzer calls the target on its one thread.
nonisolated(unsafe) private var selected: (any FuzzTarget)?

@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    let name = ProcessInfo.processInfo.environment["OCD_FUZZ_TARGET"] ?? ""
    guard let make = targets[name] else {
        FileHandle.standardError.write(Data("Set OCD_FUZZ_TARGET to one of: \(targets.keys.sorted().joined(separator: ", ")).\n".utf8))
        exit(2)
    }
    selected = make()
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    do {
        try selected?.run(Data(bytes: bytes, count: count))
    } catch is CoreDataError {
        // The promised answer to bad input.
    } catch {
        fail("an error that is not a CoreDataError: \(type(of: error)): \(error)")
    }
    return 0
}

/// A broken promise: reported and turned into a crash libFuzzer records.
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("FUZZ FAILURE: \(message)\n".utf8))
    abort()
}

/// The repository's root (Fuzz/run runs the fuzzer from there), for the fixtures a target needs.
let repositoryRoot = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)

/// A scratch folder for the files a target writes, removed and remade per process.
let scratch: URL = {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-fuzz-\(getpid())", isDirectory: true)
    try? FileManager.default.removeItem(at: url)
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}()

/// Reads the input from the front: the structured targets take their choices from it.
struct InputReader {
    private let bytes: [UInt8]
    private var position = 0

    init(_ data: Data) { bytes = [UInt8](data) }

    var isAtEnd: Bool { position >= bytes.count }

    mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func bytes(_ count: Int) -> [UInt8] {
        let end = min(bytes.count, position + count)
        defer { position = end }
        return Array(bytes[position..<end])
    }

    mutating func rest() -> [UInt8] { bytes(bytes.count - position) }
}
