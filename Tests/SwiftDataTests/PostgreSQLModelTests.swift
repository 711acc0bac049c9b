#if os(Linux)
import Foundation
import SwiftData
import Testing
import TestSupport

/// SwiftData code on the PostgreSQL store: a configuration with a `postgres://` URL.
@Suite(.dedicatedThread) struct PostgreSQLModelTests {
    @Test(.enabled(if: SwiftDataTestServer.isConfigured, "needs OCD_POSTGRES_URL"))
    func modelsAreSavedFetchedAndUpsertedOnPostgreSQL() throws {
        let (url, schema) = try SwiftDataTestServer.storeURL()
        defer { SwiftDataTestServer.drop(schema) }
        do {
            let container = try ModelContainer(for: Trip.self, Stop.self, configurations: ModelConfiguration(url: url))
            let context = ModelContext(container)
            let trip = Trip(name: "Rome", destination: "Italy", start: Date(timeIntervalSince1970: 5))
            trip.stops = [Stop(title: "Forum", order: 1), Stop(title: "Pantheon", order: 2)]
            context.insert(trip)
            try context.save()
            let again = ModelContext(container)
            again.insert(Trip(name: "Rome", destination: "Lazio", start: Date(timeIntervalSince1970: 5)))
            try again.save()
        }
        let container = try ModelContainer(for: Trip.self, Stop.self, configurations: ModelConfiguration(url: url))
        let context = ModelContext(container)
        let trips = try context.fetch(FetchDescriptor<Trip>())
        #expect(trips.map(\.destination) == ["Lazio"])
        let stops = try context.fetch(FetchDescriptor<Stop>(predicate: #Predicate { $0.trip?.name == "Rome" }, sortBy: [SortDescriptor(\.order)]))
        #expect(stops.map(\.title) == ["Forum", "Pantheon"])
    }
}
#endif
