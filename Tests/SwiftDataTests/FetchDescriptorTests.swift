#if os(Linux)
import Foundation
import SwiftData
import Testing
import TestSupport

/// The rest of a fetch as SwiftData code writes it: offsets, pending changes left out,
/// prefetching, enumeration in batches, a transaction.
@Suite(.dedicatedThread) struct FetchDescriptorTests {
    static func filledContext() throws -> (ModelContainer, ModelContext) {
        let container = try ModelContainer(for: Trip.self, Stop.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        try context.transaction {
            for index in 0..<10 {
                let trip = Trip(name: "Trip \(index)", destination: "Somewhere", start: Date(timeIntervalSince1970: Double(index)))
                trip.stops = [Stop(title: "Stop \(index)", order: index)]
                context.insert(trip)
            }
        }
        #expect(!context.hasChanges)     // the transaction saved
        return (container, context)
    }

    @Test func offsetAndLimitWindowTheSortedResults() throws {
        let (_, context) = try Self.filledContext()
        var descriptor = FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.start, order: .reverse)])
        descriptor.fetchOffset = 2
        descriptor.fetchLimit = 3
        #expect(try context.fetch(descriptor).map(\.name) == ["Trip 7", "Trip 6", "Trip 5"])
        #expect(try context.fetchCount(descriptor) == 3)
    }

    @Test func pendingChangesCanBeLeftOut() throws {
        let (_, context) = try Self.filledContext()
        context.insert(Trip(name: "Unsaved", destination: "Nowhere", start: .now))
        var descriptor = FetchDescriptor<Trip>()
        #expect(try context.fetchCount(descriptor) == 11)
        descriptor.includePendingChanges = false
        #expect(try context.fetchCount(descriptor) == 10)
    }

    @Test func prefetchedRelationshipsReadTheSame() throws {
        let (container, _) = try Self.filledContext()
        var descriptor = FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.start)])
        descriptor.relationshipKeyPathsForPrefetching = [\.stops]
        descriptor.propertiesToFetch = [\.name]
        let trips = try ModelContext(container).fetch(descriptor)
        #expect(trips.map { $0.stops.map(\.title) } == (0..<10).map { ["Stop \($0)"] })
        descriptor.relationshipKeyPathsForPrefetching = [\.budget]
        #expect(throws: (any Error).self) { try ModelContext(container).fetch(descriptor) }
    }

    @Test func enumerationVisitsEveryModelInBatches() throws {
        let (container, _) = try Self.filledContext()
        var names: [String] = []
        try ModelContext(container).enumerate(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.start)]), batchSize: 3) { trip in
            names.append(trip.name)
        }
        #expect(names == (0..<10).map { "Trip \($0)" })
    }

    @Test func aTransactionThatThrowsSavesNothing() throws {
        let (container, context) = try Self.filledContext()
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try context.transaction {
                context.insert(Trip(name: "Half done", destination: "?", start: .now))
                throw Stop()
            }
        }
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 10)
    }
}
#endif
