import Foundation
#if canImport(Glibc)
import Glibc
#endif
import OpenCoreData
import OpenCoreDataPostgreSQL

/// The PostgreSQL store while its server fails under it (`Reliability/run --postgres`, on a
/// cluster of its own that `.ci/postgres-server` starts): a writer saves operations of `parts`
/// rows each, one save per operation, and records what each save answered; meanwhile the server
/// crashes and restarts (`pg_ctl stop -m immediate`: no shutdown checkpoint, the restart recovers
/// from the write-ahead log), or every backend is ended (`pg_terminate_backend`). Afterwards:
/// every acknowledged operation holds all its rows (else lost), no operation holds some of them
/// or more (torn), an operation whose save threw an ordinary error holds none (a save reported
/// failed that wrote), one whose outcome was unknown (134900) holds all or none; and after each
/// fault the same context saves again within 30 s, nothing reopened. Across server crashes a
/// second coordinator listens for the writer's saves (remote-change notifications): they must
/// come back within 6 s of each restart.
///
/// The network faults put a loopback TCP proxy (`TCPProxy`, the tests' own) between the store and
/// the server: a partition (every byte held, nothing closed, for up to 8 s — longer than the
/// 5 s statement timeout), a COMMIT that never reaches the server while its connection looks
/// alive (a black hole), a COMMIT whose acknowledgement is lost. No save may take longer than its
/// deadline (statement timeout, the 5 s grace after it, the connect timeout, and resolving a lost
/// commit on a new connection: 20 s in all). Another session holding an exclusive lock on the
/// table for longer than the statement timeout makes the saves behind it fail within it; with the
/// URL's `lock_timeout=1`, a lock held 3–5 s makes them fail within about a second, naming the
/// lock.
enum PostgreSQLServerFaults {
    /// How the server or the path to it fails.
    enum Fault: String, CaseIterable {
        case crash, terminate, partition, blackHole, lostAnswer, lockHeld, lockTimeout

        var scenario: String {
            switch self {
            case .crash: "PostgreSQL: server crash and restart during saves"
            case .terminate: "PostgreSQL: backends ended during saves"
            case .partition: "PostgreSQL: network partitions (up to 8 s) during saves"
            case .blackHole: "PostgreSQL: a COMMIT black-holed (connection silent) during saves"
            case .lostAnswer: "PostgreSQL: a COMMIT's acknowledgement lost during saves"
            case .lockHeld: "PostgreSQL: saves blocked by a lock held past the statement timeout"
            case .lockTimeout: "PostgreSQL: saves blocked by a lock held past the lock timeout (1 s)"
            }
        }

        /// Whether the store reaches the server through the proxy.
        var needsProxy: Bool { ![.crash, .terminate, .lockHeld, .lockTimeout].contains(self) }

        /// The store URL's parameters beyond `storeURL`'s.
        var parameters: [URLQueryItem] {
            self == .lockTimeout ? [URLQueryItem(name: "lock_timeout", value: "1")] : []
        }
    }

    /// The longest a save may take under any of the faults (see above).
    static let saveDeadline: TimeInterval = 20
    /// The longest a save may wait behind another session's lock (the statement timeout, 5 s, and
    /// the rest of the save).
    static let lockedSaveDeadline: TimeInterval = 7.5
    /// The longest a save may wait behind another session's lock with `lock_timeout=1` (the lock
    /// timeout and the rest of the save; a save that waited for the statement timeout takes 5 s).
    static let lockTimeoutSaveDeadline: TimeInterval = 3

    /// The cluster: its URL and the folder `.ci/postgres-server` manages it in.
    struct Cluster {
        var url: URL
        var directory: String
        var script: String

        /// Runs `.ci/postgres-server COMMAND DIR ARGUMENTS…` and waits for it.
        func run(_ command: String, _ arguments: String...) throws {
            try PostgreSQLServerScript(path: script).run([command, directory] + arguments)
        }
    }

    static let parts = 10

    static func model() -> ManagedObjectModel {
        ManagedObjectModel(entities: [
            EntityDescription(name: "Part", properties: [
                AttributeDescription(name: "operation", type: .integer64, isOptional: false, defaultValue: 0),
                AttributeDescription(name: "index", type: .integer64, isOptional: false, defaultValue: 0),
            ]),
            // One row that every writer sharing it sets in each save (`write(sharing:)`): their
            // saves wait for each other's row lock.
            EntityDescription(name: "Tally", properties: [
                AttributeDescription(name: "operation", type: .integer64, isOptional: false, defaultValue: 0),
            ]),
        ])
    }

    /// What each save answered, written by the writer's thread and read by the harness.
    /// `@unchecked Sendable`: every stored property is guarded by `lock`.
    final class Answers: @unchecked Sendable {
        private let lock = NSLock()
        private var acknowledged: [Int64] = []
        private var refused: [Int64: String] = [:]
        private var unknown: [Int64] = []
        private var stopping = false
        private var longest: TimeInterval = 0

        func acknowledge(_ operation: Int64) { lock.withLock { acknowledged.append(operation) } }
        func refuse(_ operation: Int64, _ error: String) { lock.withLock { refused[operation] = error } }
        func unknownOutcome(_ operation: Int64) { lock.withLock { unknown.append(operation) } }
        func stop() { lock.withLock { stopping = true } }
        func took(_ seconds: TimeInterval) { lock.withLock { longest = max(longest, seconds) } }
        var longestSave: TimeInterval { lock.withLock { longest } }
        var shouldStop: Bool { lock.withLock { stopping } }
        var acknowledgedCount: Int { lock.withLock { acknowledged.count } }
        var snapshot: (acknowledged: [Int64], refused: [Int64: String], unknown: [Int64]) { lock.withLock { (acknowledged, refused, unknown) } }
    }

    /// The store URL for `schema` with short limits: a call on a dead connection ends in seconds;
    /// `parameters` added. Through a proxy on `port`, without TLS (the proxy finds a COMMIT by its
    /// bytes; the connection is loopback).
    static func storeURL(_ cluster: Cluster, schema: String, port: Int? = nil, _ parameters: [URLQueryItem] = []) throws -> URL {
        guard var components = URLComponents(url: cluster.url, resolvingAgainstBaseURL: false) else { throw Failure("bad URL \(cluster.url)") }
        components.queryItems = [URLQueryItem(name: "schema", value: schema), URLQueryItem(name: "statement_timeout", value: "5"),
                                 URLQueryItem(name: "connect_timeout", value: "2")] + parameters
        if let port {
            components.port = port
            components.queryItems?.append(URLQueryItem(name: "tls", value: "disable"))
        }
        guard let url = components.url else { throw Failure("bad URL \(cluster.url)") }
        return url
    }

    static func open(_ url: URL, options: [String: any Sendable] = [:]) throws -> PersistentContainer {
        let container = PersistentContainer(name: "ServerFaults", managedObjectModel: model())
        let description = PersistentStoreDescription(url: url, type: .postgreSQL)
        for (key, value) in options { description.setOption(value, forKey: key) }
        container.persistentStoreDescriptions = [description]
        try container.loadPersistentStores()
        return container
    }

    /// What the saves of one or more rounds answered, added up for the report.
    struct Tally {
        var acknowledged = 0, refused = 0, unknown = 0
        var longest: TimeInterval = 0

        mutating func add(_ answers: Answers) {
            let snapshot = answers.snapshot
            acknowledged += snapshot.acknowledged.count
            refused += snapshot.refused.count
            unknown += snapshot.unknown.count
            longest = max(longest, answers.longestSave)
        }

        func report(into result: inout ScenarioResult) {
            result.operations = acknowledged
            result.details["saves acknowledged"] = String(acknowledged)
            result.details["saves refused (nothing written)"] = String(refused)
            result.details["saves with an unknown outcome"] = String(unknown)
            result.details["longest save (s)"] = String(format: "%.1f", longest)
        }
    }

    /// When another coordinator's remote-change notifications arrived.
    /// `@unchecked Sendable`: `times` is guarded by `lock`.
    final class Announcements: @unchecked Sendable {
        private let lock = NSLock()
        private var times: [Date] = []

        func append() { lock.withLock { times.append(Date()) } }
        /// The first announcement after `date`, if any.
        func first(after date: Date) -> Date? { lock.withLock { times.first { $0 > date } } }
    }

    /// The longest a restarted server may leave other coordinators without remote-change
    /// notifications (the listener's longest wait between attempts, 5 s, and one connection).
    static let announcementDeadline: TimeInterval = 6

    /// The writer: one operation per save until told to stop; several writers number their
    /// operations `first`, `first + step`, … so that none shares a number. `sharing`: each save
    /// also sets the `Tally` row (there must be one) to its operation, over another writer's
    /// value (a merge policy), so that writers sharing it hold the row in turn.
    static func write(_ container: PersistentContainer, answers: Answers, first: Int64 = 0, step: Int64 = 1, sharing: Bool = false) {
        guard let entity = container.managedObjectModel.entitiesByName["Part"] else { return }
        let context = container.newBackgroundContext()
        if sharing { context.mergePolicy = .mergeByPropertyObjectTrump }
        var operation = first
        while !answers.shouldStop {
            let number = operation
            context.performAndWait {
                if sharing, let tally = try? context.fetch(FetchRequest<ManagedObject>(entityName: "Tally")).first {
                    tally.setValue(number, forKey: "operation")
                }
                for index in 0..<parts {
                    let part = ManagedObject(entity: entity, insertInto: context)
                    part.setValue(number, forKey: "operation")
                    part.setValue(Int64(index), forKey: "index")
                }
                let started = Date()
                defer { answers.took(Date().timeIntervalSince(started)) }
                do {
                    try context.save()
                    answers.acknowledge(number)
                } catch let error as CoreDataError where error.code == .persistentStoreCommitOutcomeUnknown {
                    answers.unknownOutcome(number)
                    context.reset()
                } catch {
                    answers.refuse(number, "\(error)")
                    context.reset()
                }
            }
            if answers.snapshot.refused[number] != nil { usleep(50_000) }
            operation += step
        }
    }

    static func run(_ fault: Fault, rounds: Int, cluster: Cluster, seed: UInt64) -> ScenarioResult {
        var result = ScenarioResult(scenario: fault.scenario, rounds: 0)
        var random = SeededGenerator(seed: seed)
        let started = Date()
        let answers = Answers()
        var longestSilenceSeen: TimeInterval = 0
        var proxy: TCPProxy?
        defer { proxy?.stop() }
        do {
            let schema = "reliability_\(fault.rawValue.lowercased())_\(UInt32.random(in: 0...UInt32.max, using: &random))"
            let url = try storeURL(cluster, schema: schema, fault.parameters)
            if fault.needsProxy, let serverPort = cluster.url.port {
                proxy = try TCPProxy(upstreamPort: serverPort)
            }
            // Across server crashes, a second coordinator listens for the writer's saves: its
            // remote-change notifications must come back soon after each restart.
            let history: [String: any Sendable] = fault == .crash ? [NSPersistentHistoryTrackingKey: true] : [:]
            let container = try open(try storeURL(cluster, schema: schema, port: proxy?.port, fault.parameters), options: history)
            let announcements = Announcements()
            var listening: (container: PersistentContainer, observer: any NSObjectProtocol)?
            if fault == .crash {
                let watcher = try open(url, options: [NSPersistentHistoryTrackingKey: true, NSPersistentStoreRemoteChangeNotificationPostOptionKey: true])
                let observer = NotificationCenter.default.addObserver(forName: .NSPersistentStoreRemoteChange, object: watcher.persistentStoreCoordinator,
                                                                      queue: nil) { _ in announcements.append() }
                listening = (watcher, observer)
            }
            defer { if let listening { NotificationCenter.default.removeObserver(listening.observer) } }
            let writer = Thread { write(container, answers: answers) }
            writer.start()
            defer {
                answers.stop()
                while !writer.isFinished { usleep(10_000) }
            }
            for round in 0..<rounds {
                usleep(UInt32.random(in: 200_000...800_000, using: &random))
                var before = answers.acknowledgedCount
                switch fault {
                case .crash:
                    try cluster.run("crash")
                    usleep(UInt32.random(in: 50_000...500_000, using: &random))
                    try cluster.run("restart")
                    let restarted = Date()
                    let deadline = restarted.addingTimeInterval(announcementDeadline + 4)
                    while announcements.first(after: restarted) == nil && Date() < deadline { usleep(20_000) }
                    let silence = (announcements.first(after: restarted) ?? Date()).timeIntervalSince(restarted)
                    longestSilenceSeen = max(longestSilenceSeen, silence)
                    if silence > announcementDeadline {
                        result.record(Failure(String(format: "no remote-change notification for %.1f s after the server restarted", silence)),
                                      round: round)
                    }
                case .terminate:
                    try cluster.run("terminate")
                case .partition:
                    proxy?.partition()
                    usleep(UInt32.random(in: 300_000...8_000_000, using: &random))
                    proxy?.heal()
                case .blackHole:
                    proxy?.blackHole(atSending: "COMMIT\u{0}")
                case .lostAnswer:
                    proxy?.loseAnswers(afterSending: "COMMIT\u{0}")
                case .lockHeld:
                    // Another session holds the table longer than the 5 s statement timeout: the
                    // saves waiting for it are cancelled by the server (nothing written) within
                    // their deadline, and the next ones succeed once it lets go.
                    try cluster.run("lock", "\(schema).zpart", String(Int.random(in: 9...11, using: &random)))
                    // A save acknowledged from now on ran after the lock was let go (one in flight
                    // when it was asked for held the table, and the lock waited for it).
                    before = answers.acknowledgedCount
                case .lockTimeout:
                    // The same, held 3–5 s: the saves waiting for it give up at the 1 s lock
                    // timeout, long before the statement timeout.
                    try cluster.run("lock", "\(schema).zpart", String(Int.random(in: 3...5, using: &random)))
                    before = answers.acknowledgedCount
                }
                // The same context saves again, nothing reopened.
                let deadline = Date().addingTimeInterval(30)
                while answers.acknowledgedCount <= before && Date() < deadline { usleep(20_000) }
                if answers.acknowledgedCount <= before {
                    result.record(Failure("no save succeeded within 30 s of the fault"), round: round)
                }
                result.rounds += 1
            }
            answers.stop()
            while !writer.isFinished { usleep(10_000) }
            if answers.longestSave > saveDeadline {
                result.record(Failure(String(format: "a save took %.1f s, past its deadline of %.0f s", answers.longestSave, saveDeadline)), round: -1)
            }
            // Behind a lock held 9–11 s, a save not cancelled at the 5 s statement timeout waits
            // about 9 s: 7.5 s leaves the rest of a save room on a loaded machine.
            if fault == .lockHeld && answers.longestSave > lockedSaveDeadline {
                result.record(Failure(String(format: "a save waited %.1f s for a lock, past the statement timeout", answers.longestSave)), round: -1)
            }
            if fault == .lockTimeout {
                if answers.longestSave > lockTimeoutSaveDeadline {
                    result.record(Failure(String(format: "a save waited %.1f s for a lock, past the 1 s lock timeout", answers.longestSave)), round: -1)
                }
                for (operation, error) in answers.snapshot.refused where !error.contains("lock_timeout") {
                    result.record(Failure("operation \(operation) failed without naming the lock timeout: \(error)"), round: -1)
                }
            }
            try check(url, answers: answers, into: &result)
        } catch {
            result.record(error, round: result.rounds)
        }
        var tally = Tally()
        tally.add(answers)
        tally.report(into: &result)
        if fault == .crash { result.details["longest wait for remote changes after a restart (s)"] = String(format: "%.1f", longestSilenceSeen) }
        result.seconds = Date().timeIntervalSince(started)
        return result
    }

    /// Reads every operation's rows through a new coordinator and compares them with the answers
    /// of every writer.
    static func check(_ url: URL, answers: Answers..., into result: inout ScenarioResult) throws {
        let reader = try open(url)
        let context = reader.newBackgroundContext()
        let counts = try context.performAndWait { () throws -> [Int64: Int] in
            var counts: [Int64: Int] = [:]
            for part in try context.fetch(FetchRequest<ManagedObject>(entityName: "Part")) {
                counts[(part.value(forKey: "operation") as? Int64) ?? -1, default: 0] += 1
            }
            return counts
        }
        let snapshots = answers.map(\.snapshot)
        let acknowledged = snapshots.flatMap(\.acknowledged), unknown = snapshots.flatMap(\.unknown)
        let refused = snapshots.reduce(into: [Int64: String]()) { $0.merge($1.refused) { first, _ in first } }
        for operation in acknowledged where counts[operation] != parts {
            result.lost += 1
            result.record(Failure("operation \(operation) was acknowledged and holds \(counts[operation] ?? 0) of its \(parts) rows"), round: -1)
        }
        for (operation, count) in counts where count != parts {
            result.torn += 1
            result.record(Failure("operation \(operation) holds \(count) rows, not 0 or \(parts) (torn or written twice)"), round: -1)
        }
        for (operation, error) in refused.sorted(by: { $0.key < $1.key }) where counts[operation] != nil {
            result.record(Failure("operation \(operation) was reported failed (\(error)) yet holds \(counts[operation] ?? 0) rows"), round: -1)
        }
        let known = Set(acknowledged).union(refused.keys).union(unknown)
        for operation in counts.keys where !known.contains(operation) {
            result.record(Failure("operation \(operation) holds rows but no save of it was answered"), round: -1)
        }
    }
}
