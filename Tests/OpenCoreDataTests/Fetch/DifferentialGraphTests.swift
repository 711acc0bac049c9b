import Foundation
import OpenCoreData
import Testing
import TestSupport

/// Three answers to one question: seeded random requests over a graph of probes and labels give
/// the same objects, in the same order, from the SQLite store (SQL), from the in-memory store (the
/// Swift evaluator), from the PostgreSQL store when a server is configured (SQL, string tests in
/// Swift), and from a reference evaluator written here from Core Data's documented
/// semantics over plain Swift values — its own string folding, `LIKE` matcher, `nil` and
/// empty-collection rules, so that a shared mistake in the library cannot agree with itself.
/// `count(for:)`, dictionary results, batched fetches and the objects a batch update selects must
/// agree with `fetch`; a quarter of the cases run with unsaved changes (an update, an insertion, a
/// deletion, a relationship change). NaN, which no store keeps, is read as nil: as a predicate's
/// operand and as an unsaved value.
///
/// `OCD_DIFFERENTIAL_SEED` replays a run; `OCD_DIFFERENTIAL_CASES` sets its size (the harness runs
/// 100,000: `OCD_DIFFERENTIAL_CASES=100000 swift test --filter DifferentialGraphTests`).
@Suite(.dedicatedThread(minutes: 15)) struct DifferentialGraphTests {
    static let strings = ["", "a", "A", "e", "é", "É", "E\u{301}mile", "Émile", "emile", "EMILE", "100%", "50_50", "it's", "zoë", "Zoe", "naïve", "file10", "file9", " x", "Ab"]
    static let patterns = ["*", "?", "e*", "*e", "*mil*", "?mile", "a?", "100%", "50_50", "*%*", "", "É*", "*i*e*"]
    static let uuids = (0..<3).map { UUID(uuid: (UInt8($0), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)) }
    static let blobs = [Data(), Data([0]), Data([1, 2, 3]), Data([0xFF])]
    static let dates = [-1.0, 0, 86_400.5, 700_000_000].map(Date.init(timeIntervalSinceReferenceDate:))
    static let ratios = [-1.5, -0.0, 0, 0.1, 1, 2.5, 1e300]
    static let amounts: [Decimal] = [-1, 0, Decimal(string: "0.1")!, Decimal(string: "2.25")!, 1000]

    // MARK: - The plain model the reference evaluates

    struct PlainProbe {
        var small: Int16, ratio: Double, title: String, note: String?, amount: Decimal
        var identifier: UUID?, payload: Data?, created: Date, code: String
        var labels: Set<Int>, owner: Int?
    }

    struct PlainLabel { var name: String, rank: Int32 }

    struct World {
        var probes: [PlainProbe]
        var labels: [PlainLabel]
    }

    /// One request: the format, its arguments, and what the reference says of a probe.
    struct Condition {
        var format: String
        var arguments: [Any]
        var holds: (PlainProbe, World) -> Bool
    }

    /// A random probe; `unsaved` ones may hold NaN, which a save would refuse.
    static func randomProbe(code: String, labels: Int, unsaved: Bool = false, random: inout SeededGenerator) -> PlainProbe {
        PlainProbe(small: [-1, 0, 1, 7, 300].randomElement(using: &random)!,
                   ratio: unsaved && Int.random(in: 0..<4, using: &random) == 0 ? .nan : ratios.randomElement(using: &random)!,
                   title: strings.randomElement(using: &random)!, note: Bool.random(using: &random) ? nil : strings.randomElement(using: &random)!,
                   amount: amounts.randomElement(using: &random)!, identifier: Bool.random(using: &random) ? nil : uuids.randomElement(using: &random)!,
                   payload: Bool.random(using: &random) ? nil : blobs.randomElement(using: &random)!, created: dates.randomElement(using: &random)!, code: code,
                   labels: Set((0..<labels).filter { _ in Int.random(in: 0..<3, using: &random) == 0 }),
                   owner: Int.random(in: 0..<3, using: &random) == 0 ? nil : Int.random(in: 0..<labels, using: &random))
    }

    // MARK: - The reference's semantics

    /// Case folding and diacritic removal by Unicode properties: `[d]` decomposes and drops
    /// non-spacing marks; `[c]` maps every scalar to its lower case. Strings compare as UTF-8.
    static func fold(_ string: String, _ modifier: String) -> String {
        var text = string
        if modifier.contains("d") {
            let kept = text.decomposedStringWithCanonicalMapping.unicodeScalars.filter { $0.properties.generalCategory != .nonspacingMark }
            text = String(String.UnicodeScalarView(kept)).precomposedStringWithCanonicalMapping
        }
        if modifier.contains("c") {
            text = text.unicodeScalars.map(\.properties.lowercaseMapping).joined()
        }
        return text
    }

    /// `LIKE`: `*` any run, `?` one scalar, the rest literal, over the whole string (dynamic
    /// programming, unlike the library's backtracking matcher).
    static func like(_ value: String, _ pattern: String) -> Bool {
        let v = Array(value.unicodeScalars), p = Array(pattern.unicodeScalars)
        var table = Array(repeating: Array(repeating: false, count: p.count + 1), count: v.count + 1)
        table[v.count][p.count] = true
        for j in stride(from: p.count - 1, through: 0, by: -1) { table[v.count][j] = p[j] == "*" && table[v.count][j + 1] }
        for i in stride(from: v.count - 1, through: 0, by: -1) {
            for j in stride(from: p.count - 1, through: 0, by: -1) {
                switch p[j] {
                case "*": table[i][j] = table[i][j + 1] || table[i + 1][j]
                case "?": table[i][j] = table[i + 1][j + 1]
                default: table[i][j] = p[j] == v[i] && table[i + 1][j + 1]
                }
            }
        }
        return table[0][0]
    }

    /// A string operator as documented: `nil` equals nothing and differs from everything; empty
    /// needles are found nowhere; without modifiers strings compare by their UTF-8 bytes.
    static func string(_ value: String?, _ op: String, _ modifier: String, _ operand: String) -> Bool {
        guard let value else { return op == "!=" }
        let lhs = Array(fold(value, modifier).utf8), rhs = Array(fold(operand, modifier).utf8)
        switch op {
        case "==": return lhs == rhs
        case "!=": return lhs != rhs
        case "<": return lhs.lexicographicallyPrecedes(rhs)
        case ">": return rhs.lexicographicallyPrecedes(lhs)
        case "BEGINSWITH": return !rhs.isEmpty && lhs.starts(with: rhs)
        case "ENDSWITH": return !rhs.isEmpty && lhs.reversed().starts(with: rhs.reversed())
        case "CONTAINS": return !rhs.isEmpty && (0...max(0, lhs.count - rhs.count)).contains { lhs.count >= rhs.count && Array(lhs[$0..<$0 + rhs.count]) == rhs }
        default: return like(fold(value, modifier), fold(operand, modifier))
        }
    }

    /// A comparison as documented: `nil` equals only `nil`, differs from everything else, and has
    /// no order.
    static func compare<T: Comparable>(_ value: T?, _ op: String, _ operand: T?) -> Bool {
        guard let value, let operand else {
            switch op {
            case "==": return value == nil && operand == nil
            case "!=": return (value == nil) != (operand == nil)
            default: return false
            }
        }
        switch op {
        case "==": return value == operand
        case "!=": return value != operand
        case "<": return value < operand
        case "<=": return value <= operand
        case ">": return value > operand
        default: return value >= operand
        }
    }

    // MARK: - Random conditions

    static func condition(depth: Int, random: inout SeededGenerator) -> Condition {
        if depth > 0, Int.random(in: 0..<3, using: &random) == 0 {
            let parts = (0..<Int.random(in: 1...3, using: &random)).map { _ in condition(depth: depth - 1, random: &random) }
            switch Int.random(in: 0..<3, using: &random) {
            case 0:
                let inner = parts[0]
                return Condition(format: "NOT (\(inner.format))", arguments: inner.arguments) { !inner.holds($0, $1) }
            case 1:
                return Condition(format: parts.map { "(\($0.format))" }.joined(separator: " AND "), arguments: parts.flatMap(\.arguments)) { p, w in parts.allSatisfy { $0.holds(p, w) } }
            default:
                return Condition(format: parts.map { "(\($0.format))" }.joined(separator: " OR "), arguments: parts.flatMap(\.arguments)) { p, w in parts.contains { $0.holds(p, w) } }
            }
        }
        return leaf(random: &random)
    }

    static func leaf(random: inout SeededGenerator) -> Condition {
        let ordering = ["==", "!=", "<", "<=", ">", ">="]
        let op = ordering.randomElement(using: &random)!
        switch Int.random(in: 0..<16, using: &random) {
        case 0:
            let k = Int16([-1, 0, 1, 7, 300].randomElement(using: &random)!)
            return Condition(format: "small \(op) %d", arguments: [Int(k)]) { p, _ in compare(p.small, op, k) }
        case 1:
            // NaN is no value: as an operand, and as an unsaved value, it reads as nil.
            let x = (ratios + [.nan]).randomElement(using: &random)!
            return Condition(format: "ratio \(op) %@", arguments: [x]) { p, _ in compare(p.ratio.isNaN ? nil : p.ratio, op, x.isNaN ? nil : x) }
        case 2, 3:
            let key = Bool.random(using: &random) ? "title" : "note"
            let stringOp = ["==", "!=", "<", ">", "BEGINSWITH", "ENDSWITH", "CONTAINS"].randomElement(using: &random)!
            let modifier = stringOp == "<" || stringOp == ">" ? "" : ["", "c", "d", "cd"].randomElement(using: &random)!
            let s = strings.randomElement(using: &random)!
            return Condition(format: "\(key) \(stringOp)\(modifier.isEmpty ? "" : "[\(modifier)]") %@", arguments: [s]) { p, _ in
                string(key == "title" ? p.title : p.note, stringOp, modifier, s)
            }
        case 4:
            let modifier = ["", "c", "d", "cd"].randomElement(using: &random)!
            let pattern = patterns.randomElement(using: &random)!
            return Condition(format: "title LIKE\(modifier.isEmpty ? "" : "[\(modifier)]") %@", arguments: [pattern]) { p, _ in string(p.title, "LIKE", modifier, pattern) }
        case 5:
            let equal = Bool.random(using: &random)
            return Condition(format: "note \(equal ? "==" : "!=") nil", arguments: []) { p, _ in (p.note == nil) == equal }
        case 6:
            let d = amounts.randomElement(using: &random)!
            return Condition(format: "amount \(op) %@", arguments: [d]) { p, _ in compare(p.amount, op, d) }
        case 7:
            let equal = Bool.random(using: &random)
            if Bool.random(using: &random) {
                let u = uuids.randomElement(using: &random)!
                return Condition(format: "identifier \(equal ? "==" : "!=") %@", arguments: [u]) { p, _ in (p.identifier == u) == equal }
            }
            let b = blobs.randomElement(using: &random)!
            return Condition(format: "payload \(equal ? "==" : "!=") %@", arguments: [b]) { p, _ in (p.payload == b) == equal }
        case 8:
            let date = dates.randomElement(using: &random)!
            return Condition(format: "created \(op) %@", arguments: [date]) { p, _ in compare(p.created, op, date) }
        case 9:
            let modifier = ["", "c", "cd"].randomElement(using: &random)!
            let s = strings.randomElement(using: &random)!
            return Condition(format: "ANY labels.name ==\(modifier.isEmpty ? "" : "[\(modifier)]") %@", arguments: [s]) { p, w in
                p.labels.contains { string(w.labels[$0].name, "==", modifier, s) }
            }
        case 10:
            let k = Int32.random(in: 0...4, using: &random)
            let all = Bool.random(using: &random)
            return Condition(format: "\(all ? "ALL" : "NONE") labels.rank > %d", arguments: [Int(k)]) { p, w in
                all ? p.labels.allSatisfy { w.labels[$0].rank > k } : !p.labels.contains { w.labels[$0].rank > k }
            }
        case 11:
            let k = Int.random(in: 0...3, using: &random)
            return Condition(format: "labels.@count \(op) %d", arguments: [k]) { p, _ in compare(p.labels.count, op, k) }
        case 12:
            let k = Int32.random(in: 0...4, using: &random), m = Int.random(in: 0...2, using: &random)
            let prefix = ["", "a", "e", "z"].randomElement(using: &random)!
            return Condition(format: "SUBQUERY(labels, $l, $l.rank >= %d AND $l.name BEGINSWITH[c] %@).@count > %d", arguments: [Int(k), prefix, m]) { p, w in
                p.labels.filter { w.labels[$0].rank >= k && string(w.labels[$0].name, "BEGINSWITH", "c", prefix) }.count > m
            }
        case 13:
            // Aggregates over an empty collection: @max and @min are nil (equal only to nil,
            // different from every number, never ordered), @sum is 0.
            let aggregate = ["@max", "@min", "@sum"].randomElement(using: &random)!
            let k: Int32? = Int.random(in: 0..<6, using: &random) == 0 ? nil : Int32.random(in: 0...8, using: &random)
            return Condition(format: "labels.\(aggregate).rank \(op) %@", arguments: [k.map { NSNumber(value: $0) } ?? NSNull()]) { p, w in
                let ranks = p.labels.map { w.labels[$0].rank }
                let value: Int32? = switch aggregate {
                case "@max": ranks.max()
                case "@min": ranks.min()
                default: ranks.reduce(0, +)
                }
                return compare(value, op, k)
            }
        case 14:
            // Through a to-one that may be missing: its values are nil then.
            if Bool.random(using: &random) {
                let k = Int32.random(in: 0...4, using: &random)
                return Condition(format: "owner.rank \(op) %d", arguments: [Int(k)]) { p, w in compare(p.owner.map { w.labels[$0].rank }, op, k) }
            }
            let stringOp = ["==", "!=", "BEGINSWITH", "CONTAINS", "LIKE"].randomElement(using: &random)!
            let modifier = ["", "c", "cd"].randomElement(using: &random)!
            let s = (stringOp == "LIKE" ? patterns : strings).randomElement(using: &random)!
            return Condition(format: "owner.name \(stringOp)\(modifier.isEmpty ? "" : "[\(modifier)]") %@", arguments: [s]) { p, w in
                string(p.owner.map { w.labels[$0].name }, stringOp, modifier, s)
            }
        default:
            let none = Bool.random(using: &random)
            return Condition(format: "owner \(none ? "==" : "!=") nil", arguments: []) { p, _ in (p.owner == nil) == none }
        }
    }

    // MARK: - The stores

    /// A context whose store holds `world`, with its probes by code (kept registered) and labels.
    final class Side {
        let stack: TestStack
        let context: ManagedObjectContext
        var probes: [String: Probe] = [:]
        var labels: [Label] = []

        init(_ kind: StoreKind, world: World) throws {
            stack = try TestStack(kind, model: ManagedObjectModel(Probe.self, Label.self))
            context = stack.container.newBackgroundContext()
            try context.performAndWait { () throws in
                labels = world.labels.map { plain in
                    let label = Label(context: context)
                    label.name = plain.name
                    label.rank = plain.rank
                    return label
                }
                for plain in world.probes { probes[plain.code] = make(plain) }
                try context.save()
            }
        }

        @discardableResult
        func make(_ plain: PlainProbe) -> Probe {
            let probe = Probe(context: context)
            write(plain, to: probe)
            return probe
        }

        func write(_ plain: PlainProbe, to probe: Probe) {
            probe.small = plain.small
            probe.ratio = plain.ratio
            probe.title = plain.title
            probe.note = plain.note
            probe.amount = plain.amount
            probe.identifier = plain.identifier
            probe.payload = plain.payload
            probe.created = plain.created
            probe.code = plain.code
            probe.labels = Set(plain.labels.map { labels[$0] })
            probe.owner = plain.owner.map { labels[$0] }
        }
    }

    @Test func sqlMemoryAndAReferenceAgreeOnRandomRequestsOverAGraph() async throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = UInt64(environment["OCD_DIFFERENTIAL_SEED"] ?? "") ?? 20_261_123
        let cases = Int(environment["OCD_DIFFERENTIAL_CASES"] ?? "") ?? 2_000
        var random = SeededGenerator(seed: seed)
        let labelNames = ["a", "A", "émile", "Emile", "zoë", "e", ""]
        var world = World(probes: [], labels: labelNames.enumerated().map { PlainLabel(name: $1, rank: Int32($0 % 5)) })
        world.probes = (0..<80).map { Self.randomProbe(code: String(format: "p%03d", $0), labels: labelNames.count, random: &random) }
        // Every store: PostgreSQL too when a server is configured (its string operators are
        // tested in Swift over a superset the SQL selects).
        let sides = try StoreKind.allCases.map { try Side($0, world: world) }
        var selective = 0, pendingCases = 0

        for index in 0..<cases {
            await Task.yield()
            let condition = Self.condition(depth: 2, random: &random)
            var expectedWorld = world
            let pending = Int.random(in: 0..<4, using: &random) == 0
            if pending {
                // An update (values and relationships), an insertion and a deletion, unsaved.
                let changed = Int.random(in: 0..<world.probes.count, using: &random)
                let deleted = (changed + 1 + Int.random(in: 0..<(world.probes.count - 1), using: &random)) % world.probes.count
                var update = Self.randomProbe(code: world.probes[changed].code, labels: labelNames.count, unsaved: true, random: &random)
                update.code = world.probes[changed].code
                let inserted = Self.randomProbe(code: "new", labels: labelNames.count, random: &random)
                for side in sides {
                    side.context.performAndWait {
                        side.write(update, to: side.probes[update.code]!)
                        side.make(inserted)
                        side.context.delete(side.probes[world.probes[deleted].code]!)
                    }
                }
                expectedWorld.probes[changed] = update
                expectedWorld.probes.remove(at: deleted)
                expectedWorld.probes.append(inserted)
                pendingCases += 1
            }
            let bySmall = Bool.random(using: &random)
            let offset = [0, 0, 2].randomElement(using: &random)!, limit = [0, 0, 5, 30].randomElement(using: &random)!
            let matching = expectedWorld.probes.filter { condition.holds($0, expectedWorld) }.map(\.code)
            var expected = expectedWorld.probes.filter { condition.holds($0, expectedWorld) }
                .sorted { bySmall && $0.small != $1.small ? $0.small < $1.small : $0.code < $1.code }
                .map(\.code)
            expected = Array(expected.dropFirst(offset))
            if limit > 0 { expected = Array(expected.prefix(limit)) }
            if !expected.isEmpty && expected.count < expectedWorld.probes.count { selective += 1 }

            for side in sides {
                // PostgreSQL answers every fourth case (500 by default): each costs it round
                // trips, and its string tests across relationships read related rows one by one.
                if side.stack.kind == .postgreSQL && !index.isMultiple(of: 4) {
                    side.context.performAndWait { side.context.rollback() }
                    continue
                }
                let failure: String? = try side.context.performAndWait { () throws -> String? in
                    defer { side.context.rollback() }
                    let request = Probe.fetchRequest()
                    request.predicate = NSPredicate(format: condition.format, argumentArray: condition.arguments)
                    request.sortDescriptors = (bySmall ? [NSSortDescriptor(key: "small", ascending: true)] : []) + [NSSortDescriptor(key: "code", ascending: true)]
                    request.fetchOffset = offset
                    request.fetchLimit = limit
                    let fetched = try side.context.fetch(request).map(\.code)
                    if fetched != expected { return "fetch gave \(fetched), the reference \(expected)" }
                    let counted = try side.context.count(for: request)
                    if counted != fetched.count { return "count(for:) gave \(counted), fetch \(fetched.count)" }
                    let batched = Probe.fetchRequest()
                    batched.predicate = request.predicate
                    batched.sortDescriptors = request.sortDescriptors
                    batched.fetchOffset = offset
                    batched.fetchLimit = limit
                    batched.fetchBatchSize = 7
                    let inBatches = try side.context.fetchBatched(batched).map(\.code)
                    if inBatches != fetched { return "a batched fetch gave \(inBatches), fetch \(fetched)" }
                    if !pending {
                        // Dictionary results read the store only (as in Core Data), so they are
                        // compared without unsaved changes.
                        let rows = FetchRequest<NSDictionary>(entityName: "Probe")
                        rows.predicate = request.predicate
                        rows.sortDescriptors = request.sortDescriptors
                        rows.fetchOffset = offset
                        rows.fetchLimit = limit
                        rows.propertiesToFetch = ["code"]
                        let codes = try side.context.fetch(rows).map { $0["code"] as? String ?? "?" }
                        if codes != fetched { return "dictionary results gave \(codes), fetch \(fetched)" }
                    }
                    if !pending && index % 4 == 0 {
                        // A batch update selects in the store (SQL, or the in-memory store's own
                        // filter) and ignores the window: it marks what the predicate matches.
                        let update = BatchUpdateRequest(entityName: "Probe", predicate: request.predicate, propertiesToUpdate: ["mark": Int64(index + 1)])
                        update.resultType = .updatedObjectIDsResultType
                        let ids = try side.context.execute(update).result as? [ManagedObjectID] ?? []
                        let marked = ids.compactMap { (side.context.object(with: $0) as? Probe)?.code }.sorted()
                        if marked != matching.sorted() { return "a batch update selected \(marked), the reference \(matching.sorted())" }
                    }
                    return nil
                }
                if let failure {
                    Issue.record("seed \(seed), case \(index), \(side.stack.kind) store\(pending ? ", with unsaved changes" : ""): \(condition.format) \(condition.arguments) — \(failure) (replay with OCD_DIFFERENTIAL_SEED=\(seed))")
                    return
                }
            }
        }
        // The generator must produce selective requests and unsaved changes, or the comparison proves little.
        #expect(selective > cases / 4, "seed \(seed): only \(selective) of \(cases) requests were selective")
        #expect(pendingCases > cases / 8)
    }
}
