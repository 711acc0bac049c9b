import OpenCoreData
import Testing
import TestSupport

/// A small seeded random generator (SplitMix64), so that a failing run can be replayed.
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

/// One meaning, two evaluators: random predicates over random data give the same objects from
/// the SQLite store (SQL) and from the in-memory store (the Swift evaluator).
@Suite(.dedicatedThread) struct DifferentialPredicateTests {
    static let strings = ["", "a", "A", "e", "é", "É", "E\u{301}mile", "Émile", "emile", "EMILE", "100%", "50_50", "it's", "say \"hi\"",
                          "zoë", "Zoe", "ß", "SS", "naïve", "file10", "file9", "x*y", "a?c", " space", "ﬁne", "%", "_", "*"]
    static let patterns = ["*", "?", "e*", "*e", "*mil*", "?mile", "a?c", "100%", "50_50", "*%*", "*_*", "x\\*y", "", "É*"]
    static let regexes = ["[a-z]+", ".*e.*", "file[0-9]+", "(?i)emile", "[^a]*", ".", ""]
    static let dates = [Date(timeIntervalSinceReferenceDate: -1), Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSinceReferenceDate: 86_400.5),
                        Date(timeIntervalSinceReferenceDate: 700_000_000)]

    private func seed(_ context: ManagedObjectContext, rows: Int, random: inout SeededGenerator) throws {
        try context.performAndWait { () throws in
            for index in 0..<rows {
                let sample = Sample(context: context)
                sample.small = [Int16.min, -1, 0, 1, 7, Int16.max].randomElement(using: &random)!
                sample.medium = [Int32.min, -100, 0, 1, 2, 99, 100, Int32.max].randomElement(using: &random)!
                sample.large = [Int64.min, -1, 0, 1, 1 << 40, Int64.max].randomElement(using: &random)!
                sample.ratio = [-1.5, -0.0, 0, 0.1, 1, 2.5, 1e300].randomElement(using: &random)!
                sample.flag = Bool.random(using: &random)
                sample.title = Self.strings.randomElement(using: &random)!
                sample.note = Int.random(in: 0..<4, using: &random) == 0 ? nil : Self.strings.randomElement(using: &random)!
                sample.created = Self.dates.randomElement(using: &random)!
                sample.code = "c\(index)"
            }
            try context.save()
        }
    }

    /// A random predicate as a format string and its arguments.
    private func predicate(depth: Int, random: inout SeededGenerator) -> (String, [Any]) {
        if depth > 0 && Int.random(in: 0..<3, using: &random) == 0 {
            switch Int.random(in: 0..<3, using: &random) {
            case 0:
                let (inner, args) = predicate(depth: depth - 1, random: &random)
                return ("NOT (\(inner))", args)
            default:
                let joiner = Bool.random(using: &random) ? " AND " : " OR "
                let parts = (0..<Int.random(in: 2...3, using: &random)).map { _ in predicate(depth: depth - 1, random: &random) }
                return (parts.map { "(\($0.0))" }.joined(separator: joiner), parts.flatMap(\.1))
            }
        }
        return leaf(random: &random)
    }

    private func leaf(random: inout SeededGenerator) -> (String, [Any]) {
        let ordering = ["==", "!=", "<", "<=", ">", ">="]
        switch Int.random(in: 0..<10, using: &random) {
        case 9:
            let key = ["small", "medium", "ratio", "large"].randomElement(using: &random)!
            let op = ["+", "-", "*", "/"].randomElement(using: &random)!
            let operand: Any = [0, 1, 2, -3, 0.5].randomElement(using: &random)!
            let bound: Any = [-100, 0, 1, 7, 99.5, 1e6].randomElement(using: &random)!
            return ("(\(key) \(op) %@) \(ordering.randomElement(using: &random)!) %@", [operand, bound])
        case 0:
            let key = ["small", "medium", "ratio"].randomElement(using: &random)!
            let value: Any = Bool.random(using: &random) ? [-1, 0, 1, 7, 100, 32767].randomElement(using: &random)! : [-0.5, 0.0, 1.0, 2.5, 99.5].randomElement(using: &random)!
            return ("\(key) \(ordering.randomElement(using: &random)!) %@", [value])
        case 1:
            return ("large \(ordering.randomElement(using: &random)!) %lld", [[Int64.min, -1, 0, 1, 1 << 40, Int64.max].randomElement(using: &random)!])
        case 2:
            let key = ["small", "medium"].randomElement(using: &random)!
            return Bool.random(using: &random) ? ("\(key) BETWEEN {-1, 7}", []) : ("\(key) IN %@", [[0, 1, 99, 32767]])
        case 3:
            let key = ["title", "note"].randomElement(using: &random)!
            let value: Any? = key == "note" && Int.random(in: 0..<5, using: &random) == 0 ? nil : Self.strings.randomElement(using: &random)!
            if let value {
                return ("\(key) \((ordering + ["==[c]", "==[cd]", "!=[d]"]).randomElement(using: &random)!) %@", [value])
            }
            return ("\(key) \(["==", "!="].randomElement(using: &random)!) nil", [])
        case 4:
            let key = ["title", "note"].randomElement(using: &random)!
            let op = ["CONTAINS", "BEGINSWITH", "ENDSWITH"].randomElement(using: &random)!
            let modifier = ["", "[c]", "[d]", "[cd]"].randomElement(using: &random)!
            return ("\(key) \(op)\(modifier) %@", [Self.strings.randomElement(using: &random)!])
        case 5:
            let key = ["title", "note"].randomElement(using: &random)!
            let modifier = ["", "[c]", "[d]", "[cd]"].randomElement(using: &random)!
            return ("\(key) LIKE\(modifier) %@", [Self.patterns.randomElement(using: &random)!])
        case 6:
            let modifier = ["", "[c]", "[d]"].randomElement(using: &random)!
            return ("title MATCHES\(modifier) %@", [Self.regexes.randomElement(using: &random)!])
        case 7:
            let pair = [("note", "title"), ("small", "medium"), ("medium", "ratio"), ("title", "note")].randomElement(using: &random)!
            return ("\(pair.0) \(ordering.randomElement(using: &random)!) \(pair.1)", [])
        default:
            switch Int.random(in: 0..<3, using: &random) {
            case 0: return ("flag == %@", [Bool.random(using: &random)])
            case 1: return ("created \(ordering.randomElement(using: &random)!) %@", [Self.dates.randomElement(using: &random)!])
            default: return ("title IN[c] %@", [["e", "EMILE", "zoe", ""]])
            }
        }
    }

    private func ids(_ context: ManagedObjectContext, _ predicate: NSPredicate) throws -> [String] {
        try context.performAndWait { () throws in
            let request = Sample.fetchRequest()
            request.predicate = predicate
            return try context.fetch(request).map(\.code).sorted()
        }
    }

    @Test func sqlAndMemoryAgreeOnThousandsOfRandomPredicates() throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["OCD_DIFFERENTIAL_SEED"] ?? "") ?? 20_261_123
        var random = SeededGenerator(seed: seed)
        let sqlite = try TestStack(.sqlite)
        let memory = try TestStack(.inMemory)
        var dataRandom = random
        try self.seed(sqlite.container.newBackgroundContext(), rows: 150, random: &dataRandom)
        dataRandom = random
        try self.seed(memory.container.newBackgroundContext(), rows: 150, random: &dataRandom)
        random = dataRandom
        let sqlContext = sqlite.container.newBackgroundContext()
        let memoryContext = memory.container.newBackgroundContext()
        var selective = 0
        for index in 0..<5_000 {
            let (format, arguments) = predicate(depth: 3, random: &random)
            let predicate = NSPredicate(format: format, argumentArray: arguments)
            let fromSQL = try ids(sqlContext, predicate)
            let fromMemory = try ids(memoryContext, predicate)
            if fromSQL != fromMemory {
                Issue.record("seed \(seed), case \(index): \(predicate.predicateFormat) — SQL \(fromSQL.count) rows, memory \(fromMemory.count) rows (replay with OCD_DIFFERENTIAL_SEED=\(seed))")
                return
            }
            if !fromSQL.isEmpty && fromSQL.count < 150 { selective += 1 }
        }
        // The generator must produce selective predicates, or the comparison proves little.
        #expect(selective > 1_500, "seed \(seed): only \(selective) selective predicates")
    }
}
