import Foundation
import OpenCoreData
import Testing

/// The kinds of store every behaviour is checked on.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite
    case inMemory
    case postgreSQL

    /// The stores every parity test runs on: PostgreSQL too when a server is configured
    /// (`OCD_POSTGRES_URL`; `.ci/run` starts one). Without one, its cases are left out and
    /// `PostgreSQLAvailabilityTests` says so (and fails under CI).
    static var allCases: [StoreKind] {
        TestPostgreSQL.isConfigured ? [.sqlite, .inMemory, .postgreSQL] : [.sqlite, .inMemory]
    }

    var testDescription: String { rawValue }
}

/// A temporary folder removed when the value is released.
final class TemporaryDirectory: Sendable {
    let url: URL
    private let owned: Bool

    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-tests-\(UUID().uuidString)", isDirectory: true)
        owned = true
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// A folder another test owns (a child process uses its parent's), left in place.
    init(existing url: URL) {
        self.url = url
        owned = false
    }

    deinit {
        guard owned else { return }
        try? FileManager.default.removeItem(at: url)
        TestPostgreSQL.drop([schemaName])
    }

    /// The PostgreSQL schema of this folder's stores (`postgreSQLSchema()`): one per folder.
    var schemaName: String { "ocd_t_" + url.lastPathComponent.replacingOccurrences(of: "ocd-tests-", with: "").replacingOccurrences(of: "-", with: "").lowercased() }

    func file(_ name: String) -> URL { url.appendingPathComponent(name) }
}

/// A container on a fresh store of the given kind.
struct TestStack {
    let directory: TemporaryDirectory
    let container: PersistentContainer
    let kind: StoreKind

    init(_ kind: StoreKind, model: ManagedObjectModel = ManagedObjectModel(Note.self, Sample.self), directory: TemporaryDirectory = TemporaryDirectory(), name: String = "Test",
         options: [String: any Sendable] = [:]) throws {
        self.directory = directory
        self.kind = kind
        container = PersistentContainer(name: name, managedObjectModel: model)
        let description = switch kind {
        case .sqlite: PersistentStoreDescription(url: directory.file("\(name).sqlite"))
        case .inMemory: PersistentStoreDescription(type: .inMemory)
        case .postgreSQL: PersistentStoreDescription(url: try directory.postgreSQLSchema(), type: .postgreSQL)
        }
        for (key, value) in options { description.setOption(value, forKey: key) }
        container.persistentStoreDescriptions = [description]
        try container.loadPersistentStores()
    }

    var storeURL: URL { directory.file("\(container.name).sqlite") }
}

extension TestStack {
    /// A background context in which notes with the given ids were inserted and saved;
    /// `configure` sets their other attributes.
    func seededContext(ids: ClosedRange<Int>, configure: @escaping (Note, Int) -> Void = { _, _ in }) throws -> ManagedObjectContext {
        let context = container.newBackgroundContext()
        try context.performAndWait { () throws in
            for id in ids {
                let note = Note(context: context)
                note.id = Int32(id)
                configure(note, id)
            }
            try context.save()
        }
        return context
    }
}

extension PersistentContainer {
    /// A container whose one store is the SQLite file at `url`, loaded with `model` (migrated
    /// first when the store needs it); `configure` sets options on the store description.
    static func loaded(at url: URL, model: ManagedObjectModel, configure: (PersistentStoreDescription) -> Void = { _ in }) throws -> PersistentContainer {
        let container = PersistentContainer(name: "Test", managedObjectModel: model)
        let description = PersistentStoreDescription(url: url)
        configure(description)
        container.persistentStoreDescriptions = [description]
        try container.loadPersistentStores()
        return container
    }
}

/// Waits with a deadline: a wait that times out fails the test instead of hanging the run. The
/// deadline is sized for a loaded two-core machine, not for the time the work should take.
protocol DeadlineWaitable {
    func wait(timeout: DispatchTime) -> DispatchTimeoutResult
}

extension DispatchSemaphore: DeadlineWaitable {}
extension DispatchGroup: DeadlineWaitable {}

extension DeadlineWaitable {
    func waitOrRecord(seconds: Double = 30, sourceLocation: SourceLocation = #_sourceLocation) {
        if wait(timeout: .now() + seconds) == .timedOut {
            Issue.record("A wait did not end within \(Int(seconds)) s", sourceLocation: sourceLocation)
        }
    }
}
