#if os(Linux)
import Foundation
import SwiftData
import Testing
import TestSupport

/// Live queries without SwiftUI: an observable query object and an asynchronous sequence of
/// identifiers, following a context's own changes and what other contexts save.
@Suite(.dedicatedThread) struct ModelQueryTests {
    static func container() throws -> ModelContainer {
        try ModelContainer(for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
    }

    @Test func aQueryFollowsItsContextAndOtherContextsSaves() async throws {
        let container = try Self.container()
        let context = ModelContext(container)
        context.insert(Trip(name: "Rome", destination: "Italy", start: Date(timeIntervalSince1970: 2)))
        try context.save()
        let query = try ModelQuery(FetchDescriptor<Trip>(predicate: #Predicate { $0.budget < 1_000 },
                                                         sortBy: [SortDescriptor(\.start)]), in: context)
        #expect(query.models.map(\.name) == ["Rome"])

        let changed = Recorded(false)
        withObservationTracking { _ = query.models } onChange: { changed.withLock { $0 = true } }
        context.insert(Trip(name: "Oslo", destination: "Norway", start: Date(timeIntervalSince1970: 1)))
        // Told when the context's event ends (a millisecond after the insert), as a run-loop turn ends one.
        let told = await eventually { changed.withLock { $0 } }
        #expect(told)
        #expect(query.models.map(\.name) == ["Oslo", "Rome"])

        let other = ModelContext(container)
        let rome = try #require(try other.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "Rome" })).first)
        rome.budget = 5_000
        try other.save()
        let left = await eventually { query.models.map(\.name) == ["Oslo"] }
        #expect(left)

        query.models[0].budget = 2_000
        let empty = await eventually { query.models.isEmpty }
        #expect(empty)
    }

    @Test func aQueryNeedsASort() throws {
        let context = ModelContext(try Self.container())
        #expect(throws: (any Error).self) { try ModelQuery(FetchDescriptor<Trip>(), in: context) }
    }

    @Test func resultsArriveAsIdentifiers() async throws {
        let container = try Self.container()
        let context = ModelContext(container)
        context.insert(Trip(name: "Rome", destination: "Italy", start: Date(timeIntervalSince1970: 2)))
        try context.save()
        var iterator = context.results(for: FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)])).makeAsyncIterator()
        let first = try #require(try await iterator.next())
        #expect(first.count == 1)
        let writer = ModelContext(container)
        writer.insert(Trip(name: "Oslo", destination: "Norway", start: .now))
        try writer.save()
        let second = try #require(try await iterator.next())
        #expect(second.count == 2)
        #expect(try second.map { try #require(context.model(for: $0) as? Trip).name } == ["Oslo", "Rome"])
    }
}
#endif
