import Foundation
import OpenCoreData
import Testing
import TestSupport

/// A migration rebuilds Core Data's own tables only: what the app added to the file itself (its
/// tables, a full-text index over the notes, their indexes and triggers) is there afterwards and
/// keeps working. When the app's own schema cannot survive the new version, the migration stops
/// before changing anything and says what to do.
@Suite(.dedicatedThread) struct MigrationKeepsAppTablesTests {
    /// Version 1: notes. Version 2: notes with a mandatory `pinned`, and tags.
    private static func model(_ version: Int) -> ManagedObjectModel {
        var note: [PropertyDescription] = [AttributeDescription(name: "title", type: .string)]
        var entities: [EntityDescription] = []
        if version > 1 {
            note.append(AttributeDescription(name: "pinned", type: .boolean, isOptional: false, defaultValue: false))
            entities.append(EntityDescription(name: "Tag", properties: [AttributeDescription(name: "name", type: .string)]))
        }
        return ManagedObjectModel(entities: [EntityDescription(name: "Note", properties: note)] + entities)
    }

    private static func insertNotes(_ titles: [String], into container: PersistentContainer) throws {
        let context = container.newBackgroundContext()
        try context.performAndWait { () throws in
            for title in titles {
                ManagedObject(entity: container.managedObjectModel.entitiesByName["Note"]!, insertInto: context).setValue(title, forKey: "title")
            }
            try context.save()
        }
    }

    /// A store at version 1 with three notes, and the app's own schema made by `sql`.
    private static func version1Store(in directory: TemporaryDirectory, _ sql: [String]) throws -> URL {
        let url = directory.file("Notes.sqlite")
        let container = try PersistentContainer.loaded(at: url, model: model(1))
        try insertNotes(["apple pie", "banana bread", "cherry tart"], into: container)
        try container.persistentStoreCoordinator.remove(container.persistentStoreCoordinator.persistentStores[0])
        let db = try RawSQLite(url, writable: true)
        for statement in sql { try db.execute(statement) }
        return url
    }

    /// A full-text index over the notes' titles kept current by triggers on Core Data's table
    /// (SQLite's external-content pattern), and a table of the app's settings with its own index
    /// and trigger.
    private static let appSchema = [
        "CREATE VIRTUAL TABLE note_search USING fts5(ZTITLE, content='ZNOTE', content_rowid='Z_PK')",
        "CREATE TRIGGER note_search_insert AFTER INSERT ON ZNOTE BEGIN INSERT INTO note_search(rowid, ZTITLE) VALUES (new.Z_PK, new.ZTITLE); END",
        "CREATE TRIGGER note_search_delete AFTER DELETE ON ZNOTE BEGIN INSERT INTO note_search(note_search, rowid, ZTITLE) VALUES ('delete', old.Z_PK, old.ZTITLE); END",
        "CREATE INDEX note_title_length ON ZNOTE (length(ZTITLE))",
        "INSERT INTO note_search(note_search) VALUES ('rebuild')",
        "CREATE TABLE app_settings (key TEXT PRIMARY KEY, value TEXT, changed INTEGER DEFAULT 0)",
        "CREATE INDEX app_settings_by_value ON app_settings (value)",
        "CREATE TRIGGER app_settings_changed AFTER UPDATE OF value ON app_settings BEGIN UPDATE app_settings SET changed = changed + 1 WHERE key = new.key; END",
        "INSERT INTO app_settings (key, value) VALUES ('theme', 'dark'), ('sync', 'off')",
        "CREATE VIEW long_titles AS SELECT ZTITLE FROM ZNOTE WHERE length(ZTITLE) > 10",
    ]

    private static func search(_ url: URL, _ term: String) throws -> [String] {
        try RawSQLite(url).rows("SELECT ZTITLE FROM note_search WHERE note_search MATCH '\(term)' ORDER BY rowid").compactMap { $0[0] as? String }
    }

    @Test func theAppsTablesFullTextIndexViewsAndTriggersSurviveAMigration() throws {
        let directory = TemporaryDirectory()
        let url = try Self.version1Store(in: directory, Self.appSchema)
        #expect(try Self.search(url, "bread") == ["banana bread"])

        let container = try PersistentContainer.loaded(at: url, model: Self.model(2))
        let context = container.viewContext
        try context.performAndWait { () throws in
            let notes = try context.fetch(FetchRequest<ManagedObject>(entityName: "Note"))
            #expect(notes.count == 3)
            #expect(notes.allSatisfy { $0.value(forKey: "pinned") as? Bool == false }, "migrated to version 2")
        }
        let db = try RawSQLite(url, writable: true)
        #expect(try db.rows("SELECT key, value FROM app_settings ORDER BY key").map { "\($0[0]!)=\($0[1]!)" } == ["sync=off", "theme=dark"])
        #expect(try Self.search(url, "bread OR tart") == ["banana bread", "cherry tart"])
        #expect(try db.rows("SELECT ZTITLE FROM long_titles ORDER BY ZTITLE").compactMap { $0[0] as? String } == ["banana bread", "cherry tart"])
        let schema = Set(try db.rows("SELECT name FROM sqlite_master WHERE type IN ('index', 'trigger')").compactMap { $0[0] as? String })
        #expect(schema.isSuperset(of: ["note_search_insert", "note_search_delete", "note_title_length", "app_settings_by_value", "app_settings_changed"]))

        // The app's triggers work on the new tables: a saved note is found, a deleted one is not.
        try Self.insertNotes(["date loaf"], into: container)
        #expect(try Self.search(url, "loaf") == ["date loaf"])
        try context.performAndWait { () throws in
            let request = FetchRequest<ManagedObject>(entityName: "Note")
            request.predicate = NSPredicate(format: "title == %@", "apple pie")
            for note in try context.fetch(request) { context.delete(note) }
            try context.save()
        }
        #expect(try Self.search(url, "apple").isEmpty)
        try db.execute("UPDATE app_settings SET value = 'light' WHERE key = 'theme'")
        #expect(try db.rows("SELECT changed FROM app_settings WHERE key = 'theme'")[0][0] as? Int64 == 1)
    }

    @Test func anAppTableWithTheNameANewEntityNeedsStopsTheMigrationBeforeAnyChange() throws {
        let directory = TemporaryDirectory()
        let url = try Self.version1Store(in: directory, ["CREATE TABLE ZTAG (label TEXT)", "INSERT INTO ZTAG VALUES ('mine')"])
        let error = try #require(throws: CoreDataError.self) { try PersistentContainer.loaded(at: url, model: Self.model(2)) }
        #expect(error.code == .migration)
        #expect(error.message.contains("ZTAG"))
        let db = try RawSQLite(url)
        #expect(try db.rows("SELECT label FROM ZTAG").compactMap { $0[0] as? String } == ["mine"])
        let reopened = try PersistentContainer.loaded(at: url, model: Self.model(1))
        try reopened.viewContext.performAndWait { () throws in
            #expect(try reopened.viewContext.count(for: FetchRequest<ManagedObject>(entityName: "Note")) == 3)
        }
    }

    @Test func anAppTriggerOnATableTheNewVersionDropsStopsTheMigrationBeforeAnyChange() throws {
        let directory = TemporaryDirectory()
        let url = try Self.version1Store(in: directory, [
            "CREATE TABLE audit (title TEXT)",
            "CREATE TRIGGER audit_notes AFTER INSERT ON ZNOTE BEGIN INSERT INTO audit VALUES (new.ZTITLE); END",
        ])
        // Version 2 without notes: the entity's table goes, and the app's trigger on it cannot stay.
        let withoutNotes = ManagedObjectModel(entities: [EntityDescription(name: "Tag", properties: [AttributeDescription(name: "name", type: .string)])])
        let error = try #require(throws: CoreDataError.self) { try PersistentContainer.loaded(at: url, model: withoutNotes) }
        #expect(error.code == .migration)
        #expect(error.message.contains("audit_notes"))
        let reopened = try PersistentContainer.loaded(at: url, model: Self.model(1))
        try Self.insertNotes(["elderflower"], into: reopened)
        #expect(try RawSQLite(url).rows("SELECT title FROM audit").compactMap { $0[0] as? String } == ["elderflower"])
    }
}
