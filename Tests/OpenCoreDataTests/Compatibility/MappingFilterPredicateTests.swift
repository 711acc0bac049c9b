import Foundation
import OpenCoreData
import Testing
import TestSupport

/// An entity mapping's filter predicate (Xcode's mapping editor writes it into the mapping's
/// source expression, `NSEntityMapping.sourceExpression`): only the source objects it selects are
/// migrated, whether the mapping is followed by a migration manager or by loading the store.
@Suite(.dedicatedThread) struct MappingFilterPredicateTests {
    /// Version 1: notes with a title and an archived flag; version 2 adds a summary.
    static func version(_ number: Int) -> ManagedObjectModel {
        var properties: [PropertyDescription] = [AttributeDescription(name: "title", type: .string),
                                                 AttributeDescription(name: "archived", type: .boolean, isOptional: false, defaultValue: false)]
        if number == 2 { properties.append(AttributeDescription(name: "summary", type: .string)) }
        return ManagedObjectModel(entities: [EntityDescription(name: "Note", properties: properties)])
    }

    /// Xcode's source expression of the Note mapping with `filter` (as Core Data code writes it).
    static func mapping(sourceExpression: String) -> MappingModel {
        MappingModel(name: "V1toV2", sourceModel: version(1), destinationModel: version(2), entityMappings: [
            NSEntityMapping(sourceEntityName: "Note", destinationEntityName: "Note", valueExpressions: ["summary": "$source.title"],
                            sourceExpression: sourceExpression),
        ])
    }

    static let activeOnly = #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:" , "Note", "archived == NO"), $manager.sourceContext, NO)"#

    /// A version-1 store with five notes, two of them archived.
    static func store(in directory: TemporaryDirectory) throws -> URL {
        let url = directory.file("Notes.sqlite")
        let container = try PersistentContainer.loaded(at: url, model: version(1))
        try container.viewContext.performAndWait {
            for (index, archived) in [false, true, false, true, false].enumerated() {
                let note = ManagedObject(entity: container.managedObjectModel.entitiesByName["Note"]!, insertInto: container.viewContext)
                note.setValue("Note \(index)", forKey: "title")
                note.setValue(archived, forKey: "archived")
            }
            try container.viewContext.save()
        }
        try container.persistentStoreCoordinator.remove(container.persistentStoreCoordinator.persistentStores[0])
        return url
    }

    static func titles(in container: PersistentContainer) throws -> [String] {
        try container.viewContext.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Note")
            request.sortDescriptors = [FetchSortDescriptor(key: "title", ascending: true)]
            return try container.viewContext.fetch(request).map { note in
                let summary = note.entity.attributesByName["summary"] == nil ? "" : " \(note.value(forKey: "summary") ?? "")"
                return "\(note.value(forKey: "title") ?? "")" + summary
            }
        }
    }

    @Test func theMigrationManagerMigratesOnlyTheObjectsTheFilterSelects() throws {
        let directory = TemporaryDirectory()
        let source = try Self.store(in: directory)
        let destination = directory.file("Migrated.sqlite")
        try MigrationManager(sourceModel: Self.version(1), destinationModel: Self.version(2))
            .migrateStore(from: source, mapping: Self.mapping(sourceExpression: Self.activeOnly), to: destination)
        #expect(try Self.titles(in: try PersistentContainer.loaded(at: destination, model: Self.version(2)))
                == ["Note 0 Note 0", "Note 2 Note 2", "Note 4 Note 4"])
    }

    /// Loading the store with the mapping under `MappingModelsOption` follows it object by object
    /// (a migration in SQL would copy every row), in Core Data's other spelling of the context.
    @Test func loadingTheStoreAppliesTheFilter() throws {
        let directory = TemporaryDirectory()
        let url = try Self.store(in: directory)
        let expression = #"FETCH(FUNCTION($manager, 'fetchRequestForSourceEntityNamed:predicateString:', 'Note', 'archived == YES'), FUNCTION($manager, 'sourceContext'), NO)"#
        let container = try PersistentContainer.loaded(at: url, model: Self.version(2)) {
            $0.setOption([Self.mapping(sourceExpression: expression)], forKey: MappingModelsOption)
        }
        #expect(try Self.titles(in: container) == ["Note 1 Note 1", "Note 3 Note 3"])
    }

    /// Xcode's unfiltered fetch (what every compiled mapping model carries) migrates every object,
    /// in SQL as a mapping without one.
    @Test func theUnfilteredFetchMigratesEveryObject() throws {
        let directory = TemporaryDirectory()
        let url = try Self.store(in: directory)
        let all = #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Note", "TRUEPREDICATE"), $manager.sourceContext, NO)"#
        let container = try PersistentContainer.loaded(at: url, model: Self.version(2)) {
            $0.setOption([Self.mapping(sourceExpression: all)], forKey: MappingModelsOption)
        }
        #expect(try Self.titles(in: container).count == 5)
    }

    /// A source expression other than Xcode's fetch (app code only Objective-C could run) is
    /// refused naming the mapping, and the store is left as it was.
    @Test func anotherSourceExpressionIsRefusedNamingTheMapping() throws {
        let directory = TemporaryDirectory()
        let source = try Self.store(in: directory)
        for expression in [#"FUNCTION($manager, "customSourceObjects")"#,
                           #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Note", "TRUEPREDICATE"), $manager.sourceContext, YES)"#] {
            let error = try #require(throws: CoreDataError.self) {
                try MigrationManager(sourceModel: Self.version(1), destinationModel: Self.version(2))
                    .migrateStore(from: source, mapping: Self.mapping(sourceExpression: expression), to: directory.file("Migrated.sqlite"))
            }
            #expect(error.code == .migration)
            #expect(error.message.contains("NoteToNote"))
        }
        #expect(try Self.titles(in: try PersistentContainer.loaded(at: source, model: Self.version(1))).count == 5)
    }

    /// A filter the source entity cannot answer fails the migration with the fetch's reason.
    @Test func aFilterOnAnUnknownAttributeFailsTheMigration() throws {
        let directory = TemporaryDirectory()
        let source = try Self.store(in: directory)
        let filter = #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Note", "colour == 'red'"), $manager.sourceContext, NO)"#
        let error = try #require(throws: CoreDataError.self) {
            try MigrationManager(sourceModel: Self.version(1), destinationModel: Self.version(2))
                .migrateStore(from: source, mapping: Self.mapping(sourceExpression: filter), to: directory.file("Migrated.sqlite"))
        }
        #expect(error.message.contains("NoteToNote"))
        #expect(error.message.contains("colour"))
    }
}
