#if os(Linux)
import Foundation
import SwiftData
import Testing
import TestSupport

/// SwiftData code as an app writes it, run against the SQLite store: insert, save, fetch with
/// `#Predicate` and `SortDescriptor`, relationships with their inverse, delete rules, rollback,
/// identifiers.
@Suite(.dedicatedThread) struct ModelContextTests {
    static func container() throws -> ModelContainer {
        try ModelContainer(for: Trip.self, Stop.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
    }

    @Test func insertedModelsAreSavedAndFetchedBack() throws {
        let container = try Self.container()
        let context = ModelContext(container)
        let trip = Trip(name: "Rome", destination: "Italy", start: Date(timeIntervalSince1970: 1_000))
        #expect(trip.modelContext == nil)
        #expect(trip.name == "Rome")
        context.insert(trip)
        #expect(trip.modelContext === context)
        #expect(context.hasChanges)
        #expect(context.insertedModelsArray.count == 1)
        try context.save()
        #expect(!context.hasChanges)

        let other = ModelContext(container)
        let trips = try other.fetch(FetchDescriptor<Trip>())
        #expect(trips.count == 1)
        #expect(trips[0].name == "Rome")
        #expect(trips[0].destination == "Italy")
        #expect(trips[0].start == Date(timeIntervalSince1970: 1_000))
        #expect(trips[0].budget == 0)
        #expect(trips[0].notes == nil)
        #expect(trips[0] !== trip)
        #expect(trips[0].persistentModelID == trip.persistentModelID)
    }

    @Test func predicatesAndSortsRunInTheStore() throws {
        let context = ModelContext(try Self.container())
        for (index, name) in ["Rome", "Paris", "Oslo", "Lima"].enumerated() {
            let trip = Trip(name: name, destination: index % 2 == 0 ? "Europe" : "Elsewhere", start: Date(timeIntervalSince1970: Double(index)))
            trip.budget = Double(index * 100)
            context.insert(trip)
        }
        try context.save()
        let europe = try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.destination == "Europe" },
                                                             sortBy: [SortDescriptor(\.name)]))
        #expect(europe.map(\.name) == ["Oslo", "Rome"])
        var expensive = FetchDescriptor<Trip>(predicate: #Predicate { $0.budget >= 100 }, sortBy: [SortDescriptor(\.budget, order: .reverse)])
        expensive.fetchLimit = 2
        #expect(try context.fetch(expensive).map(\.name) == ["Lima", "Oslo"])
        #expect(try context.fetchCount(FetchDescriptor<Trip>(predicate: #Predicate { $0.name.contains("o") })) == 2)
        #expect(try context.fetchIdentifiers(FetchDescriptor<Trip>()).count == 4)
    }

    @Test func relationshipsKeepTheirInverseAndCascade() throws {
        let container = try Self.container()
        let context = ModelContext(container)
        let trip = Trip(name: "Rome", destination: "Italy", start: .now)
        let forum = Stop(title: "Forum", order: 1)
        trip.stops = [forum, Stop(title: "Pantheon", order: 2)]
        context.insert(trip)
        #expect(forum.modelContext === context)
        #expect(forum.trip === trip)
        try context.save()

        let reader = ModelContext(container)
        let stops = try reader.fetch(FetchDescriptor<Stop>(predicate: #Predicate { $0.trip?.name == "Rome" }, sortBy: [SortDescriptor(\.order)]))
        #expect(stops.map(\.title) == ["Forum", "Pantheon"])
        #expect(stops[0].trip === stops[1].trip)
        #expect(Set(stops[0].trip?.stops.map(\.title) ?? []) == ["Forum", "Pantheon"])

        context.delete(trip)
        try context.save()
        #expect(try reader.fetchCount(FetchDescriptor<Stop>()) == 0)
    }

    @Test func rollbackForgetsUnsavedChanges() throws {
        let context = ModelContext(try Self.container())
        let trip = Trip(name: "Rome", destination: "Italy", start: .now)
        context.insert(trip)
        try context.save()
        trip.destination = "Lazio"
        #expect(context.changedModelsArray.count == 1)
        context.rollback()
        #expect(trip.destination == "Italy")
        #expect(!context.hasChanges)
    }

    @Test func aUniqueAttributeUpdatesTheModelThatHasTheValue() throws {
        let container = try Self.container()
        let context = ModelContext(container)
        context.insert(Trip(name: "Rome", destination: "Italy", start: .now))
        try context.save()
        let again = ModelContext(container)
        again.insert(Trip(name: "Rome", destination: "Lazio", start: .now))
        try again.save()
        let trips = try ModelContext(container).fetch(FetchDescriptor<Trip>())
        #expect(trips.map(\.destination) == ["Lazio"])
    }

    @Test func identifiersResolveInOtherContextsAndSurviveCoding() throws {
        let container = try Self.container()
        let context = ModelContext(container)
        let trip = Trip(name: "Rome", destination: "Italy", start: .now)
        context.insert(trip)
        #expect(trip.persistentModelID.isTemporary)
        try context.save()
        let id = trip.persistentModelID
        #expect(!id.isTemporary)
        #expect(id.entityName == "Trip")
        let decoded = try JSONDecoder().decode(PersistentIdentifier.self, from: try JSONEncoder().encode(id))
        #expect(decoded == id)
        let other = ModelContext(container)
        #expect(other.registeredModel(for: decoded) as Trip? == nil)
        let found = other.model(for: decoded) as? Trip
        #expect(found?.name == "Rome")
        #expect(other.registeredModel(for: decoded) as Trip? === found)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(PersistentIdentifier.self, from: Data("\"https://example.com/x\"".utf8)) }
    }

    @Test func deleteWhereRemovesMatchingModelsAtTheNextSave() throws {
        let container = try Self.container()
        let context = ModelContext(container)
        for name in ["Rome", "Paris", "Oslo"] { context.insert(Trip(name: name, destination: "Europe", start: .now)) }
        try context.save()
        try context.delete(model: Trip.self, where: #Predicate { $0.name != "Oslo" })
        #expect(context.deletedModelsArray.count == 2)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 3)
        try context.save()
        #expect(try ModelContext(container).fetch(FetchDescriptor<Trip>()).map(\.name) == ["Oslo"])
    }

    @Test func anAutosavingContextSavesAfterItsChanges() async throws {
        let container = try Self.container()
        let context = ModelContext(container)
        #expect(!context.autosaveEnabled)
        context.autosaveEnabled = true
        context.insert(Trip(name: "Rome", destination: "Italy", start: .now))
        let saved = await eventually { (try? ModelContext(container).fetchCount(FetchDescriptor<Trip>())) == 1 }
        #expect(saved)
        #expect(!context.hasChanges)
        let mainAutosaves = await MainActor.run { container.mainContext.autosaveEnabled }
        #expect(mainAutosaves)
    }

    @Test func savesAreAnnounced() throws {
        let context = ModelContext(try Self.container())
        let trip = Trip(name: "Rome", destination: "Italy", start: .now)
        context.insert(trip)
        let told = Recorded<[Notification.Name]>([])
        let saved = Recorded<[PersistentIdentifier]>([])
        let observers = [ModelContext.willSave, ModelContext.didSave].map { name in
            NotificationCenter.default.addObserver(forName: name, object: context, queue: nil) { notification in
                told.withLock { $0.append(notification.name) }
                if let ids = notification.userInfo?[ModelContext.NotificationKey.insertedIdentifiers.rawValue] as? [PersistentIdentifier] {
                    saved.withLock { $0 = ids }
                }
            }
        }
        defer { observers.forEach(NotificationCenter.default.removeObserver) }
        try context.save()
        #expect(told.withLock { $0 } == [ModelContext.willSave, ModelContext.didSave])
        #expect(saved.withLock { $0 } == [trip.persistentModelID])
    }

    @Test func transientPropertiesAreNotStored() throws {
        let container = try Self.container()
        let context = ModelContext(container)
        let trip = Trip(name: "Rome", destination: "Italy", start: .now)
        trip.viewCount = 5
        context.insert(trip)
        try context.save()
        #expect(trip.viewCount == 5)
        #expect(try ModelContext(container).fetch(FetchDescriptor<Trip>())[0].viewCount == 0)
    }
}
#endif
