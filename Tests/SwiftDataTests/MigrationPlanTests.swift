#if os(Linux)
import Foundation
import SwiftData
import Testing
import TestSupport

enum VisitsV1: VersionedSchema {
    static let versionIdentifier = Schema.Version(1, 0, 0)
    static var models: [any PersistentModel.Type] { [Visit.self] }

    @Model
    final class Visit {
        var place: String
        var count: Int

        init(place: String, count: Int) {
            self.place = place
            self.count = count
        }
    }
}

enum VisitsV2: VersionedSchema {
    static let versionIdentifier = Schema.Version(2, 0, 0)
    static var models: [any PersistentModel.Type] { [Visit.self] }

    @Model
    final class Visit {
        @Attribute(.unique) var place: String
        var count: Int
        var note: String?

        init(place: String, count: Int) {
            self.place = place
            self.count = count
        }
    }
}

/// Version 2 makes `place` unique: duplicates are merged before (their counts summed), and a
/// note is written after.
enum VisitsMigrationPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [VisitsV1.self, VisitsV2.self] }
    static var stages: [MigrationStage] { [toV2] }

    static let toV2 = MigrationStage.custom(fromVersion: VisitsV1.self, toVersion: VisitsV2.self, willMigrate: { context in
        var kept: [String: VisitsV1.Visit] = [:]
        for visit in try context.fetch(FetchDescriptor<VisitsV1.Visit>(sortBy: [SortDescriptor(\.place)])) {
            if let first = kept[visit.place] {
                first.count += visit.count
                context.delete(visit)
            } else {
                kept[visit.place] = visit
            }
        }
        try context.save()
    }, didMigrate: { context in
        for visit in try context.fetch(FetchDescriptor<VisitsV2.Visit>()) { visit.note = "merged" }
        try context.save()
    })
}

/// Versioned schemas and a migration plan, as SwiftData code writes them.
@Suite(.dedicatedThread) struct MigrationPlanTests {
    @Test func aCustomStageRunsAroundTheMigration() throws {
        let url = try temporaryStoreURL(named: "visits.store")
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        do {
            let container = try ModelContainer(for: Schema(versionedSchema: VisitsV1.self), configurations: ModelConfiguration(url: url))
            let context = ModelContext(container)
            for (place, count) in [("Rome", 1), ("Oslo", 2), ("Rome", 3)] { context.insert(VisitsV1.Visit(place: place, count: count)) }
            try context.save()
        }
        let container = try ModelContainer(for: Schema(versionedSchema: VisitsV2.self), migrationPlan: VisitsMigrationPlan.self,
                                           configurations: ModelConfiguration(url: url))
        let visits = try ModelContext(container).fetch(FetchDescriptor<VisitsV2.Visit>(sortBy: [SortDescriptor(\.place)]))
        #expect(visits.map(\.place) == ["Oslo", "Rome"])
        #expect(visits.map(\.count) == [2, 4])
        #expect(visits.map(\.note) == ["merged", "merged"])
    }

    @Test func aLightweightStageAddsAProperty() throws {
        enum Plan: SchemaMigrationPlan {
            static var schemas: [any VersionedSchema.Type] { [VisitsV1.self, VisitsV2.self] }
            static var stages: [MigrationStage] { [.lightweight(fromVersion: VisitsV1.self, toVersion: VisitsV2.self)] }
        }
        let url = try temporaryStoreURL(named: "visits.store")
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        do {
            let container = try ModelContainer(for: Schema(versionedSchema: VisitsV1.self), configurations: ModelConfiguration(url: url))
            let context = ModelContext(container)
            context.insert(VisitsV1.Visit(place: "Lima", count: 5))
            try context.save()
        }
        let container = try ModelContainer(for: Schema(versionedSchema: VisitsV2.self), migrationPlan: Plan.self,
                                           configurations: ModelConfiguration(url: url))
        let visits = try ModelContext(container).fetch(FetchDescriptor<VisitsV2.Visit>())
        #expect(visits.map(\.place) == ["Lima"])
        #expect(visits.first?.note == nil)
    }
}
#endif
