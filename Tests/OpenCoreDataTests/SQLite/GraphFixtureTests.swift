import OpenCoreData
import Testing
import TestSupport

/// Stores with relationships and inheritance written by Apple's Core Data, opened with models
/// written in code: the join table of a many-to-many (bnr-coredatastack) and single-table
/// inheritance (objc.io's Moody).
@Suite(.dedicatedThread) struct GraphFixtureTests {
    /// bnr-coredatastack's TestModel: Author.books ⇄ Book.authors.
    static func bookModel() -> ManagedObjectModel {
        let author = EntityDescription(name: "Author", properties: [
            AttributeDescription(name: "firstName", type: .string),
            AttributeDescription(name: "lastName", type: .string),
            RelationshipDescription(name: "books", destination: "Book", toMany: true, inverse: "authors"),
        ])
        let book = EntityDescription(name: "Book", properties: [
            AttributeDescription(name: "title", type: .string),
            RelationshipDescription(name: "authors", destination: "Author", toMany: true, inverse: "books"),
        ])
        return ManagedObjectModel(entities: [author, book])
    }

    @Test func aManyToManyJoinTableOfCoreDataIsReadAndWritten() throws {
        let directory = TemporaryDirectory()
        let url = try Fixtures.copy("bnr-coredatastack/Sample Model/Deprecated/TestModel.sqlite", into: directory)
        func open() throws -> PersistentContainer {
            let container = PersistentContainer(name: "TestModel", managedObjectModel: Self.bookModel())
            container.persistentStoreDescriptions = [PersistentStoreDescription(url: url)]
            try container.loadPersistentStores()     // fails with 134100 unless our hashes are Core Data's
            return container
        }
        let first = try open()
        let context = first.newBackgroundContext()
        try context.performAndWait { () throws in
            let author = NSManagedObject(entity: try #require(first.managedObjectModel.entitiesByName["Author"]), insertInto: context)
            author.setValue("Ada", forKey: "firstName")
            for title in ["Notes", "Sketches"] {
                let book = NSManagedObject(entity: try #require(first.managedObjectModel.entitiesByName["Book"]), insertInto: context)
                book.setValue(title, forKey: "title")
                book.setValue(Set([author]), forKey: "authors")
            }
            #expect((author.value(forKey: "books") as? Set<ManagedObject>)?.count == 2)
            try context.save()
        }
        // Core Data's join table holds the pairs: Z_1AUTHORS the author's key, Z_2BOOKS the book's.
        let db = try RawSQLite(url)
        let pairs = try db.rows("SELECT a.ZFIRSTNAME, b.ZTITLE FROM Z_1BOOKS j JOIN ZAUTHOR a ON a.Z_PK = j.Z_1AUTHORS JOIN ZBOOK b ON b.Z_PK = j.Z_2BOOKS ORDER BY b.ZTITLE")
        #expect(pairs.map { "\($0[0] as? String ?? "?")/\($0[1] as? String ?? "?")" } == ["Ada/Notes", "Ada/Sketches"])
        try first.persistentStoreCoordinator.persistentStores.forEach { try first.persistentStoreCoordinator.remove($0) }

        let second = try open()
        let reader = second.newBackgroundContext()
        try reader.performAndWait { () throws in
            let authors = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Author"))
            let books = try #require(authors.first?.value(forKey: "books") as? Set<ManagedObject>)
            #expect(Set(books.compactMap { $0.value(forKey: "title") as? String }) == ["Notes", "Sketches"])
        }
    }

    /// objc.io Moody, version 1: GeographicRegion (abstract) → Continent, Country; Mood.
    static func moodyModel() -> ManagedObjectModel {
        func attribute(_ name: String, _ type: AttributeType, optional: Bool = false, indexed: Bool = false) -> AttributeDescription {
            let attribute = AttributeDescription(name: name, type: type, isOptional: optional)
            attribute.isIndexed = indexed
            return attribute
        }
        let region = EntityDescription(name: "GeographicRegion", properties: [
            attribute("markedForDeletionDate", .date, optional: true),
            attribute("numberOfMoods", .integer64),
            attribute("numericISO3166Code", .integer16),
            attribute("uniquenessDummy", .integer16),
            attribute("updatedAt", .date),
        ])
        region.isAbstract = true
        region.uniquenessConstraints = [["numericISO3166Code", "uniquenessDummy"]]
        let continent = EntityDescription(name: "Continent", properties: [
            attribute("numberOfCountries", .integer64),
            RelationshipDescription(name: "countries", destination: "Country", toMany: true, isOptional: false, inverse: "continent"),
        ])
        let country = EntityDescription(name: "Country", properties: [
            RelationshipDescription(name: "continent", destination: "Continent", inverse: "countries"),
            RelationshipDescription(name: "moods", destination: "Mood", toMany: true, isOptional: false, inverse: "country"),
        ])
        region.subentities = [continent, country]
        let colors = attribute("colors", .transformable, optional: true)
        colors.valueTransformerName = "ColorsTransformer"
        let mood = EntityDescription(name: "Mood", properties: [
            colors,
            attribute("creatorID", .string, optional: true),
            attribute("date", .date),
            attribute("latitude", .double, optional: true),
            attribute("longitude", .double, optional: true),
            attribute("markedForDeletionDate", .date, optional: true, indexed: true),
            attribute("markedForRemoteDeletion", .boolean),
            attribute("remoteIdentifier", .string, optional: true, indexed: true),
            RelationshipDescription(name: "country", destination: "Country", inverse: "moods"),
        ])
        return ManagedObjectModel(entities: [region, continent, country, mood])
    }

    @Test func singleTableInheritanceOfCoreDataIsReadAndWritten() throws {
        let directory = TemporaryDirectory()
        let url = try Fixtures.copy("objcio-moody/Migrations/MigrationsTests/Moody.moody", into: directory)
        func open() throws -> PersistentContainer {
            let container = PersistentContainer(name: "Moody", managedObjectModel: Self.moodyModel())
            container.persistentStoreDescriptions = [PersistentStoreDescription(url: url)]
            try container.loadPersistentStores()
            return container
        }
        // What the file holds, read independently.
        let raw = try RawSQLite(url)
        let continents = try raw.rows("SELECT COUNT(*) FROM ZGEOGRAPHICREGION WHERE Z_ENT = 2")[0][0] as? Int64
        let countries = try raw.rows("SELECT COUNT(*) FROM ZGEOGRAPHICREGION WHERE Z_ENT = 3")[0][0] as? Int64
        let linked = try raw.rows("SELECT ZCOUNTRY FROM ZMOOD WHERE ZCOUNTRY IS NOT NULL ORDER BY Z_PK").compactMap { $0[0] as? Int64 }

        let first = try open()
        let context = first.newBackgroundContext()
        let moodID = try context.performAndWait { () throws -> ManagedObjectID in
            // The abstract root fetches both sub-entities, each as its own entity.
            let regions = try context.fetch(FetchRequest<ManagedObject>(entityName: "GeographicRegion"))
            #expect(regions.filter { $0.entity.name == "Continent" }.count == Int(continents ?? -1))
            #expect(regions.filter { $0.entity.name == "Country" }.count == Int(countries ?? -1))
            // Relationships: moods → country → continent, and back.
            let moods = try context.fetch(FetchRequest<ManagedObject>(entityName: "Mood"))
            let withCountry = moods.filter { $0.value(forKey: "country") != nil }
            #expect(withCountry.count == linked.count)
            let mood = try #require(withCountry.first)
            let country = try #require(mood.value(forKey: "country") as? ManagedObject)
            #expect(country.entity.name == "Country")
            #expect((country.value(forKey: "moods") as? Set<ManagedObject>)?.contains(mood) == true)
            if let continent = country.value(forKey: "continent") as? ManagedObject {
                #expect((continent.value(forKey: "countries") as? Set<ManagedObject>)?.contains(country) == true)
            }
            // Predicates across the relationship, in SQL.
            let request = FetchRequest<ManagedObject>(entityName: "Mood")
            request.predicate = NSPredicate(format: "country.numericISO3166Code == %@", country.value(forKey: "numericISO3166Code") as? Int16 ?? -1)
            #expect(try context.fetch(request).contains(mood))
            mood.setValue("ocd", forKey: "creatorID")
            try context.save()
            return mood.objectID
        }
        try first.persistentStoreCoordinator.persistentStores.forEach { try first.persistentStoreCoordinator.remove($0) }

        let second = try open()
        let reader = second.newBackgroundContext()
        try reader.performAndWait { () throws in
            let mood = try reader.existingObject(with: moodID)
            #expect(mood.value(forKey: "creatorID") as? String == "ocd")
        }
    }
}

/// DuckDuckGo's bookmarks (version 1): ordered children in `Z_FOK_PARENT`.
@Suite(.dedicatedThread) struct OrderedFixtureTests {
    static func bookmarksModel() -> ManagedObjectModel {
        let children = RelationshipDescription(name: "children", destination: "BookmarkEntity", toMany: true, inverse: "parent", deleteRule: .cascade, isOrdered: true)
        let favorites = RelationshipDescription(name: "favorites", destination: "BookmarkEntity", toMany: true, inverse: "favoriteFolder", isOrdered: true)
        let bookmark = EntityDescription(name: "BookmarkEntity", properties: [
            AttributeDescription(name: "isFavorite", type: .boolean, isOptional: false),
            AttributeDescription(name: "isFolder", type: .boolean, isOptional: false),
            AttributeDescription(name: "title", type: .string),
            AttributeDescription(name: "url", type: .string),
            AttributeDescription(name: "uuid", type: .string, isOptional: false),
            children,
            RelationshipDescription(name: "favoriteFolder", destination: "BookmarkEntity", inverse: "favorites"),
            favorites,
            RelationshipDescription(name: "parent", destination: "BookmarkEntity", inverse: "children"),
        ])
        return ManagedObjectModel(entities: [bookmark])
    }

    @Test func orderedChildrenOfCoreDataReadInOrderAndReorder() throws {
        let directory = TemporaryDirectory()
        let url = try Fixtures.copy("ddg-bsk/Tests/BookmarksTests/Resources/Bookmarks_V1.sqlite", into: directory)
        // The order as stored, read independently.
        let raw = try RawSQLite(url)
        let stored = try raw.rows("""
            SELECT c.ZTITLE FROM ZBOOKMARKENTITY c JOIN ZBOOKMARKENTITY r ON c.ZPARENT = r.Z_PK
            WHERE r.ZUUID = 'bookmarks_root' ORDER BY c.Z_FOK_PARENT
            """).compactMap { $0[0] as? String }
        #expect(stored.count == 5)
        func open() throws -> PersistentContainer {
            let container = PersistentContainer(name: "Bookmarks", managedObjectModel: Self.bookmarksModel())
            container.persistentStoreDescriptions = [PersistentStoreDescription(url: url)]
            try container.loadPersistentStores()
            return container
        }
        func rootChildren(_ context: ManagedObjectContext) throws -> (ManagedObject, [ManagedObject]) {
            let request = FetchRequest<ManagedObject>(entityName: "BookmarkEntity")
            request.predicate = NSPredicate(format: "uuid == %@", "bookmarks_root")
            let root = try #require(try context.fetch(request).first)
            return (root, try #require(root.value(forKey: "children") as? [ManagedObject]))
        }
        let first = try open()
        let context = first.newBackgroundContext()
        try context.performAndWait { () throws in
            let (root, children) = try rootChildren(context)
            #expect(children.compactMap { $0.value(forKey: "title") as? String } == stored)
            root.setValue(Array(children.reversed()), forKey: "children")
            try context.save()
        }
        try first.persistentStoreCoordinator.persistentStores.forEach { try first.persistentStoreCoordinator.remove($0) }
        let second = try open()
        let reader = second.newBackgroundContext()
        try reader.performAndWait { () throws in
            let (_, children) = try rootChildren(reader)
            #expect(children.compactMap { $0.value(forKey: "title") as? String } == stored.reversed())
        }
    }
}
