import OpenCoreData
import Testing
import TestSupport

@Suite(.dedicatedThread) struct StoreLayoutTests {
    @Test func tablesColumnsAndKeysFollowCoreDatasLayout() throws {
        let stack = try TestStack(.sqlite)
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            for i in 0..<3 {
                let note = Note(context: context)
                note.id = Int32(i)
            }
            let sample = Sample(context: context)
            sample.code = "c"
            try context.save()
        }
        let db = try RawSQLite(stack.storeURL)
        #expect(try db.columns("ZNOTE") == ["Z_PK", "Z_ENT", "Z_OPT", "ZID", "ZTEXT1", "ZTEXT2", "ZTEXT3"])
        // Core Data's column order: integers and booleans, then dates/doubles/floats, decimal,
        // strings, URI, UUID, binary; by name inside each group.
        #expect(try db.columns("ZSAMPLE") == [
            "Z_PK", "Z_ENT", "Z_OPT", "ZFLAG", "ZLARGE", "ZMEDIUM", "ZPLAIN", "ZSMALL",
            "ZCREATED", "ZRATIO", "ZSINGLE", "ZAMOUNT", "ZCODE", "ZNOTE", "ZTITLE", "ZLINK", "ZIDENTIFIER", "ZPAYLOAD",
        ])
        #expect(try db.schema("ZNOTE") == "CREATE TABLE ZNOTE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZID INTEGER, ZTEXT1 VARCHAR, ZTEXT2 VARCHAR, ZTEXT3 VARCHAR )")
        #expect(try db.schema("Z_Sample_UNIQUE_code") == "CREATE UNIQUE INDEX Z_Sample_UNIQUE_code ON ZSAMPLE (ZCODE COLLATE BINARY ASC)")
        let keys = try db.rows("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT")
        #expect(keys.count == 2)
        #expect(keys[0][1] as? String == "Note" && keys[0][3] as? Int64 == 3 && keys[0][2] as? Int64 == 0)
        #expect(keys[1][1] as? String == "Sample" && keys[1][3] as? Int64 == 1)
        let rows = try db.rows("SELECT Z_PK, Z_ENT, Z_OPT, ZID FROM ZNOTE ORDER BY Z_PK")
        #expect(rows.map { $0[0] as? Int64 } == [1, 2, 3])
        #expect(rows.allSatisfy { $0[1] as? Int64 == 1 && $0[2] as? Int64 == 1 })
        #expect(rows.map { $0[3] as? Int64 } == [0, 1, 2])
        #expect(try db.rows("PRAGMA journal_mode").first?.first as? String == "wal")
    }

    @Test func zOptCountsSavedChanges() throws {
        let stack = try TestStack(.sqlite)
        let context = stack.container.newBackgroundContext()
        let db = try RawSQLite(stack.storeURL)
        try context.performAndWait { () throws in
            let note = Note(context: context)
            try context.save()
            #expect(try db.rows("SELECT Z_OPT FROM ZNOTE").first?.first as? Int64 == 1)
            for i in 0..<3 {
                note.text1 = "v\(i)"
                try context.save()
            }
            #expect(try db.rows("SELECT Z_OPT, ZTEXT1 FROM ZNOTE").first?.first as? Int64 == 4)
            #expect(try db.rows("SELECT ZTEXT1 FROM ZNOTE").first?.first as? String == "v2")
        }
    }

    @Test func valuesAreStoredAsCoreDataStoresThem() throws {
        let stack = try TestStack(.sqlite)
        let context = stack.container.newBackgroundContext()
        let uuid = UUID()
        try context.performAndWait { () throws in
            let sample = Sample(context: context)
            sample.created = Date(timeIntervalSinceReferenceDate: 12_345.5)
            sample.flag = true
            sample.identifier = uuid
            sample.link = URL(string: "file:///tmp/x")
            try context.save()
        }
        let db = try RawSQLite(stack.storeURL)
        let row = try #require(try db.rows("SELECT ZCREATED, ZFLAG, ZIDENTIFIER, ZLINK, typeof(ZCREATED) FROM ZSAMPLE").first)
        #expect(row[0] as? Double == 12_345.5)               // seconds since 2001-01-01
        #expect(row[4] as? String == "real")
        #expect(row[1] as? Int64 == 1)
        #expect((row[2] as? Data).map(Array.init) == withUnsafeBytes(of: uuid.uuid) { Array($0) })
        #expect(row[3] as? String == "file:///tmp/x")
    }

    @Test func metadataHoldsTheStoreUUIDAndTheModelsVersionHashes() throws {
        let stack = try TestStack(.sqlite)
        let store = stack.container.persistentStoreCoordinator.persistentStores[0]
        let db = try RawSQLite(stack.storeURL)
        let row = try #require(try db.rows("SELECT Z_VERSION, Z_UUID, Z_PLIST FROM Z_METADATA").first)
        #expect(row[0] as? Int64 == 1)
        #expect(row[1] as? String == store.identifier)
        let plistData = try #require(row[2] as? Data)
        #expect(plistData.prefix(8) == Data("bplist00".utf8))
        let plist = try #require(try PropertyListSerialization.propertyList(from: plistData, format: nil) as? [String: Any])
        #expect(plist["NSStoreType"] as? String == "SQLite")
        #expect(plist["NSStoreModelVersionHashesVersion"] as? Int == 3)
        let hashes = try #require(plist["NSStoreModelVersionHashes"] as? [AnyHashable: Any])
        let model = stack.container.managedObjectModel.entityVersionHashesByName
        #expect(hashes.count == 2)
        for (name, hash) in model { #expect(hashes[AnyHashable(name)] as? Data == hash) }

        let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: stack.storeURL)
        #expect(metadata[NSStoreUUIDKey] as? String == store.identifier)
        #expect(metadata["NSStoreModelVersionHashes"] as? [String: Data] == model)
    }

    @Test func aStoreWrittenClosedAndReopenedByANewContainerKeepsItsData() throws {
        let directory = TemporaryDirectory()
        var identifier = ""
        do {
            let stack = try TestStack(.sqlite, directory: directory)
            identifier = stack.container.persistentStoreCoordinator.persistentStores[0].identifier
            let context = stack.container.newBackgroundContext()
            try context.performAndWait { () throws in
                for i in 1...5 {
                    let note = Note(context: context)
                    note.id = Int32(i)
                }
                try context.save()
            }
            let coordinator = stack.container.persistentStoreCoordinator
            try coordinator.remove(coordinator.persistentStores[0])
        }
        let reopened = try TestStack(.sqlite, directory: directory)
        #expect(reopened.container.persistentStoreCoordinator.persistentStores[0].identifier == identifier)
        let context = reopened.container.newBackgroundContext()
        try context.performAndWait { () throws in
            #expect(try context.count(for: Note.fetchRequest()) == 5)
            let note = Note(context: context)
            try context.save()
            #expect(note.objectID.uriRepresentation().lastPathComponent == "p6")
        }
    }

    @Test func openingAStoreWithAnotherModelWithoutMigrationIs134100NamingTheEntities() throws {
        let directory = TemporaryDirectory()
        _ = try TestStack(.sqlite, directory: directory)
        let changed = EntityDescription(name: "Note", properties: [AttributeDescription(name: "id", type: .integer64)])
        let error = #expect(throws: CoreDataError.self) {
            try TestStack(.sqlite, model: ManagedObjectModel(entities: [changed]), directory: directory, options: [NSMigratePersistentStoresAutomaticallyOption: false])
        }
        #expect(error?.code == .persistentStoreIncompatibleVersionHash)
        #expect(error?.code.rawValue == 134100)
        #expect(error?.message.contains("Note (changed)") == true)
        #expect(error?.message.contains("Sample (not in the model)") == true)
    }

    @Test func aFileThatIsNotAStoreIsAClearError() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Test.sqlite")
        try Data(repeating: 0x41, count: 4096).write(to: url)
        let error = #expect(throws: CoreDataError.self) { try TestStack(.sqlite, directory: directory) }
        #expect(error?.code == .persistentStoreInvalidType)
        #expect(error?.storeDetail?.code == "26")
        #expect(error?.storeDetail?.engine == "SQLite" && error?.storeDetail?.isTransientConflict == false)
        // As Core Data's NSError carries it: SQLite's code under NSSQLiteErrorDomain.
        #expect(((error.map { $0 as NSError })?.userInfo[NSSQLiteErrorDomain] as? Int) == 26)
        #expect(throws: CoreDataError.self) { try PersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: directory.file("none.sqlite")) }
    }
}
