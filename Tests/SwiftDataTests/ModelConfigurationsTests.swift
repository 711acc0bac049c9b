#if os(Linux)
import Foundation
import SwiftData
import Testing
import TestSupport

/// A container with several stores, as SwiftData code splits its models (a shared store and a
/// local one, say): each model class is saved to, and read from, the store of its configuration.
@Suite(.dedicatedThread) struct ModelConfigurationsTests {
    /// Trips (with their stops) in one file, people and notes in another.
    static func container(folder: URL) throws -> ModelContainer {
        let trips = ModelConfiguration("Trips", schema: Schema([Trip.self]), url: folder.appendingPathComponent("trips.store"))
        let people = ModelConfiguration("People", schema: Schema([Person.self, Note.self]), url: folder.appendingPathComponent("people.store"))
        return try ModelContainer(for: Trip.self, Person.self, Note.self, configurations: trips, people)
    }

    @Test func eachModelIsSavedToItsConfigurationsStore() throws {
        let folder = try temporaryStoreURL().deletingLastPathComponent()
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            let container = try Self.container(folder: folder)
            #expect(container.configurations.map(\.name) == ["Trips", "People"])
            let context = ModelContext(container)
            let trip = Trip(name: "Rome", destination: "Italy", start: Date(timeIntervalSince1970: 7))
            trip.stops.append(Stop(title: "Forum", order: 1))
            context.insert(trip)
            context.insert(Person(givenName: "Ada", familyName: "Lovelace"))
            try context.save()
        }
        // Each file holds the rows of its own configuration's models.
        let (trips, people) = (folder.appendingPathComponent("trips.store"), folder.appendingPathComponent("people.store"))
        #expect(sqliteRowCount(at: trips, table: "ZTRIP") == 1 && sqliteRowCount(at: trips, table: "ZSTOP") == 1)
        #expect(sqliteRowCount(at: trips, table: "ZPERSON") ?? 0 == 0)
        #expect(sqliteRowCount(at: people, table: "ZPERSON") == 1)
        #expect(sqliteRowCount(at: people, table: "ZTRIP") ?? 0 == 0 && sqliteRowCount(at: people, table: "ZSTOP") ?? 0 == 0)

        // Opened again, every model reads back from its store, and one context spans both.
        let context = ModelContext(try Self.container(folder: folder))
        #expect(try context.fetch(FetchDescriptor<Trip>()).first?.stops.map(\.title) == ["Forum"])
        #expect(try context.fetch(FetchDescriptor<Person>()).map(\.givenName) == ["Ada"])
        #expect(try context.fetchCount(FetchDescriptor<Note>()) == 0)
    }

    /// Two in-memory stores in one container: each keeps its own models.
    @Test func twoInMemoryStoresKeepTheirOwnModels() throws {
        let container = try ModelContainer(for: Trip.self, Person.self, configurations:
            ModelConfiguration("Trips", schema: Schema([Trip.self]), isStoredInMemoryOnly: true),
            ModelConfiguration("People", schema: Schema([Person.self]), isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        context.insert(Trip(name: "Rome", destination: "Italy", start: .now))
        context.insert(Person(givenName: "Ada", familyName: "Lovelace"))
        try context.save()
        let other = ModelContext(container)
        #expect(try other.fetch(FetchDescriptor<Trip>()).map(\.name) == ["Rome"])
        #expect(try other.fetch(FetchDescriptor<Person>()).map(\.familyName) == ["Lovelace"])
    }

    @Test func configurationsThatCannotBeTheStoresOfOneContainerAreRefused() throws {
        let folder = try temporaryStoreURL().deletingLastPathComponent()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("one.store")
        let sameName = #expect(throws: (any Error).self) {
            try ModelContainer(for: Trip.self, Person.self, configurations:
                ModelConfiguration("Shared", schema: Schema([Trip.self]), url: url),
                ModelConfiguration("Shared", schema: Schema([Person.self]), url: folder.appendingPathComponent("two.store")))
        }
        #expect(sameName.map { "\($0)" }?.contains("Shared") == true)
        let sameStore = #expect(throws: (any Error).self) {
            try ModelContainer(for: Trip.self, Person.self, configurations:
                ModelConfiguration("Trips", schema: Schema([Trip.self]), url: url),
                ModelConfiguration("People", schema: Schema([Person.self]), url: url))
        }
        #expect(sameStore.map { "\($0)" }?.contains("one.store") == true)
        let outsideTheSchema = #expect(throws: (any Error).self) {
            try ModelContainer(for: Trip.self, configurations: ModelConfiguration("People", schema: Schema([Person.self]), url: url))
        }
        #expect(outsideTheSchema.map { "\($0)" }?.contains("Person") == true)
        #expect(!FileManager.default.fileExists(atPath: url.path))
    }
}
#endif
