#if os(Linux)
import Foundation
import SwiftData
import Testing
import TestSupport

/// The container's main context, used on the main actor as SwiftUI code uses it.
@Suite(.dedicatedThread) struct MainContextTests {
    @Test func theMainContextSeesWhatBackgroundContextsSave() async throws {
        let container = try ModelContainer(for: Trip.self, Stop.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let first = await MainActor.run {
            let context = container.mainContext
            context.insert(Trip(name: "Rome", destination: "Italy", start: .now))
            return (try? context.save()) != nil && container.mainContext === context
        }
        #expect(first)
        let background = ModelContext(container)
        let rome = try #require(try background.fetch(FetchDescriptor<Trip>()).first)
        rome.destination = "Lazio"
        try background.save()
        let seen = await eventually {
            await MainActor.run { (try? container.mainContext.fetch(FetchDescriptor<Trip>()).first?.destination) == "Lazio" }
        }
        #expect(seen)
    }
}
#endif
