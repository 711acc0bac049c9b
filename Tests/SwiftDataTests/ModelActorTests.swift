#if os(Linux)
import Foundation
import SwiftData
import Testing
import TestSupport

@ModelActor
actor TripImporter {
    func importTrips(_ names: [String]) throws -> [PersistentIdentifier] {
        for name in names { modelContext.insert(Trip(name: name, destination: "Imported", start: .now)) }
        try modelContext.save()
        return try modelContext.fetchIdentifiers(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)]))
    }

    func rename(_ id: PersistentIdentifier, to name: String) throws {
        guard let trip = self[id, as: Trip.self] else { return }
        trip.name = name
        try modelContext.save()
    }
}

/// A model actor, as SwiftData code writes background work: its methods run on its context's
/// queue; identifiers cross; other contexts of the container see what it saves.
@Suite(.dedicatedThread) struct ModelActorTests {
    @Test func anActorImportsOnItsContextAndOthersSeeIt() async throws {
        let container = try ModelContainer(for: Trip.self, Stop.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let importer = TripImporter(modelContainer: container)
        let ids = try await importer.importTrips(["Rome", "Oslo", "Lima"])
        #expect(ids.count == 3)
        let context = ModelContext(container)
        #expect(try context.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)])).map(\.name) == ["Lima", "Oslo", "Rome"])
        let lima = try #require(context.model(for: ids[0]) as? Trip)
        #expect(lima.name == "Lima")
        try await importer.rename(ids[0], to: "Cusco")
        let merged = await eventually { lima.name == "Cusco" }
        #expect(merged)
    }
}
#endif
