#if os(Linux)
import Foundation
import SwiftData
import Testing
import TestSupport

struct Point: Codable {
    var x: Double
    var y: Double
}

@Model
final class Place {
    var name: String
    var location: Point

    init(name: String, location: Point) {
        self.name = name
        self.location = location
    }
}

/// Containers as SwiftData code makes them: a store file that outlives its container, the store
/// `@Managed` code describes, a clear refusal of what cannot be stored yet, observation.
@Suite(.dedicatedThread) struct ModelContainerTests {
    @Test func aStoreFileOutlivesItsContainer() throws {
        let url = try temporaryStoreURL()
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        do {
            let container = try ModelContainer(for: Trip.self, Stop.self, configurations: ModelConfiguration(url: url))
            let context = ModelContext(container)
            let trip = Trip(name: "Rome", destination: "Italy", start: Date(timeIntervalSince1970: 7))
            trip.stops.append(Stop(title: "Forum", order: 1))
            context.insert(trip)
            try context.save()
        }
        let container = try ModelContainer(for: Trip.self, Stop.self, configurations: ModelConfiguration(url: url))
        let trips = try ModelContext(container).fetch(FetchDescriptor<Trip>())
        #expect(trips.map(\.name) == ["Rome"])
        #expect(trips.first?.stops.map(\.title) == ["Forum"])
        #expect(trips.first?.start == Date(timeIntervalSince1970: 7))
    }

    @Test func theStoreIsTheOneCoreDataCodeDescribes() throws {
        let url = try temporaryStoreURL()
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let container = try ModelContainer(for: Trip.self, Stop.self, configurations: ModelConfiguration(url: url))
        let context = ModelContext(container)
        context.insert(Trip(name: "Rome", destination: "Italy", start: .now))
        try context.save()
        let recorded = try storeVersionHashes(at: url)
        #expect(recorded.keys.sorted() == ["Stop", "Trip"])
        #expect(recorded == managedTwinVersionHashes())
    }

    @Test func theSchemaIncludesTheModelsRelationshipsReach() throws {
        let container = try ModelContainer(for: Stop.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        #expect(container.schema.types.map { "\($0)" }.sorted() == ["Stop", "Trip"])
        let context = ModelContext(container)
        context.insert(Stop(title: "Forum", order: 1, trip: Trip(name: "Rome", destination: "Italy", start: .now)))
        try context.save()
        #expect(try context.fetch(FetchDescriptor<Trip>()).first?.stops.map(\.title) == ["Forum"])
    }

    @Test func attributeOptionsAreKept() throws {
        let container = try ModelContainer(for: Note.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        let note = Note(heading: "Plan")
        note.draft = "unsaved thoughts"
        note.tags = ["a", "b"]
        note.attachment = Data([1, 2, 3])
        context.insert(note)
        #expect(note.tags == ["a", "b"])
        #expect(note.draft == "unsaved thoughts")
        try context.save()
        let read = try #require(try ModelContext(container).fetch(FetchDescriptor<Note>()).first)
        #expect(read.heading == "Plan")
        #expect(read.tags == ["a", "b"])
        #expect(read.attachment == Data([1, 2, 3]))
        #expect(read.draft == "")
    }

    @Test func uniqueAndIndexOverSeveralProperties() throws {
        let url = try temporaryStoreURL()
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let container = try ModelContainer(for: Person.self, configurations: ModelConfiguration(url: url))
        let context = ModelContext(container)
        context.insert(Person(givenName: "Ada", familyName: "Lovelace"))
        context.insert(Person(givenName: "Ada", familyName: "Byron"))
        try context.save()
        let again = ModelContext(container)
        again.insert(Person(givenName: "Ada", familyName: "Lovelace", email: "ada@example.org"))
        try again.save()
        let people = try ModelContext(container).fetch(FetchDescriptor<Person>(sortBy: [SortDescriptor(\.familyName)]))
        #expect(people.map(\.familyName) == ["Byron", "Lovelace"])
        #expect(people.last?.email == "ada@example.org")
        let indexes = sqliteIndexNames(at: url, table: "ZPERSON")
        #expect(indexes.contains { $0.contains("Person_familyName_Index") })
        #expect(indexes.contains { $0.contains("Person_familyName_givenName_Index") })
    }

    @Test func aPropertyThatCannotBeStoredYetIsNamed() throws {
        let error = #expect(throws: (any Error).self) {
            try ModelContainer(for: Place.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        }
        let message = "\(error.map { "\($0)" } ?? "")"
        #expect(message.contains("'location'"))
        #expect(message.contains("Place"))
    }

    @Test func modelsAreObservable() throws {
        let context = ModelContext(try ModelContainer(for: Trip.self, Stop.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true)))
        let trip = Trip(name: "Rome", destination: "Italy", start: .now)
        context.insert(trip)
        let changed = Recorded(false)
        withObservationTracking { _ = trip.destination } onChange: { changed.withLock { $0 = true } }
        trip.notes = "not observed"
        #expect(!changed.withLock { $0 })
        trip.destination = "Lazio"
        #expect(changed.withLock { $0 })
    }

    @Test func modelsCompareByIdentityAndIdentifyByTheirID() throws {
        let container = try ModelContainer(for: Trip.self, Stop.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        let rome = Trip(name: "Rome", destination: "Italy", start: .now)
        let oslo = Trip(name: "Oslo", destination: "Norway", start: .now)
        context.insert(rome)
        context.insert(oslo)
        try context.save()
        #expect(Set([rome, oslo, rome]).count == 2)
        #expect(rome.id == rome.persistentModelID)
        #expect(rome.id != oslo.id)
        let fetched = try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "Rome" }))
        #expect(fetched.first === rome)
    }
}

/// A value handlers on other threads record (notifications, observation).
final class Recorded<Value>: @unchecked Sendable {
    // @unchecked: the value is only read and written under `lock`.
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<Result>(_ body: (inout Value) -> Result) -> Result { lock.withLock { body(&value) } }
}
#endif
