import OpenCoreData
import Testing
import TestSupport

@Suite(.dedicatedThread) struct InheritanceTests {
    @Test func subclassesBecomeSubentitiesNumberedAsCoreDataDoes() throws {
        let stack = try TestStack(.sqlite, model: zooModel())
        let model = stack.container.managedObjectModel
        let animal = try #require(model.entitiesByName["Animal"])
        #expect(Set(animal.subentities.map(\.name)) == ["Cat", "Dog"])
        #expect(model.entitiesByName["Dog"]?.superentity === animal)
        #expect(animal.isAbstract && model.entitiesByName["Dog"]?.isAbstract == false)
        // Z_ENT: depth-first, siblings by name; Z_SUPER names the parent; keys on the root row.
        let db = try RawSQLite(stack.storeURL)
        let keys = try db.rows("SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY ORDER BY Z_ENT").map { $0.map { "\($0 ?? "nil")" } }
        #expect(keys == [["1", "Animal", "0"], ["2", "Cat", "1"], ["3", "Dog", "1"], ["4", "Kennel", "0"]])
        // One table for the hierarchy; the to-one into it carries the row's entity.
        let tables = try db.rows("SELECT sql FROM sqlite_master WHERE name IN ('ZANIMAL', 'ZKENNEL') ORDER BY name").map { $0[0] as? String }
        #expect(tables == [
            "CREATE TABLE ZANIMAL ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZKENNEL INTEGER, ZLIVES INTEGER, ZNAME VARCHAR, ZBREED VARCHAR )",
            "CREATE TABLE ZKENNEL ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZSTAR INTEGER, Z1_STAR INTEGER, ZCITY VARCHAR )",
        ])
    }

    @Test(arguments: StoreKind.allCases)
    func batchedFetchesOfTheSuperentityReturnEachRowAsItsOwnEntity(kind: StoreKind) throws {
        let stack = try TestStack(kind, model: zooModel())
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            for index in 0..<5 {
                let dog = Dog(context: context)
                dog.name = "dog \(index)"
                dog.breed = "breed \(index)"
                let cat = Cat(context: context)
                cat.name = "cat \(index)"
                cat.lives = Int16(index)
            }
            try context.save()
        }
        let reader = stack.container.newBackgroundContext()
        try reader.performAndWait { () throws in
            let request = FetchRequest<Animal>(entityName: "Animal")
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            request.fetchBatchSize = 3
            let animals = try reader.fetchBatched(request)
            #expect(animals.count == 10)
            for animal in animals {
                if let dog = animal as? Dog {
                    #expect(dog.objectID.entity.name == "Dog")
                    #expect(dog.breed == "breed \(dog.name.suffix(1))")
                } else if let cat = animal as? Cat {
                    #expect(cat.objectID.entity.name == "Cat")
                    #expect("\(cat.lives)" == String(cat.name.suffix(1)))
                } else {
                    Issue.record("\(animal.name) came back as \(animal.entity.name)")
                }
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func fetchingTheSuperentityReturnsSubentityObjects(kind: StoreKind) throws {
        let stack = try TestStack(kind, model: zooModel())
        let context = stack.container.newBackgroundContext()
        let starID = try context.performAndWait { () throws in
            let kennel = Kennel(context: context)
            let rex = Dog(context: context)
            rex.name = "Rex"
            rex.breed = "collie"
            let tom = Cat(context: context)
            tom.name = "Tom"
            tom.lives = 7
            rex.kennel = kennel
            tom.kennel = kennel
            kennel.star = tom
            try context.save()
            return kennel.objectID
        }
        let reader = stack.container.newBackgroundContext()
        try reader.performAndWait { () throws in
            let request = FetchRequest<Animal>(entityName: "Animal")
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            let animals = try reader.fetch(request)
            #expect(animals.map(\.name) == ["Rex", "Tom"])
            let rex = try #require(animals.first as? Dog)
            #expect(rex.breed == "collie")
            #expect((animals.last as? Cat)?.lives == 7)
            // Only the entity itself.
            request.includesSubentities = false
            #expect(try reader.fetch(request).isEmpty)
            #expect(try reader.fetch(Dog.fetchRequest()).map(\.name) == ["Rex"])
            // Relationships into the hierarchy come back as the right class.
            let kennel = try #require(reader.object(with: starID) as? Kennel)
            #expect(kennel.star is Cat)
            #expect(Set(kennel.animals.map(\.name)) == ["Rex", "Tom"])
            // Object IDs name the row's own entity.
            let idRequest = FetchRequest<ManagedObjectID>(entityName: "Animal")
            idRequest.resultType = .managedObjectIDResultType
            let ids = try reader.fetch(idRequest)
            #expect(Set(ids.map(\.entity.name)) == ["Dog", "Cat"])
        }
    }

    @Test func insertingAnAbstractEntityTrapsNamingItsSubentities() async throws {
        let result = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let stack = try TestStack(.inMemory, model: zooModel())
            let context = stack.container.newBackgroundContext()
            context.performAndWait { _ = Animal(context: context) }
        }
        let message = String(decoding: result.standardErrorContent, as: UTF8.self)
        #expect(message.contains("The entity Animal is abstract"))
        #expect(message.contains("Cat, Dog"))
    }

    @Test func relationshipsInAModelCanNameItsDestinationOnlyWhenItExists() throws {
        let broken = EntityDescription(name: "Orphan", properties: [RelationshipDescription(name: "parent", destination: "Missing")])
        let container = PersistentContainer(name: "Broken", managedObjectModel: ManagedObjectModel(entities: [broken]))
        container.persistentStoreDescriptions = [PersistentStoreDescription(type: .inMemory)]
        let error = try #require(throws: CoreDataError.self) { try container.loadPersistentStores() }
        #expect(error.message.contains("'Missing'"))
    }
}

/// A fetch of an entity returns its sub-entities' objects typed as the entity's class: a
/// sub-entity without a class of its own takes its superentity's, and one whose class is not a
/// subclass of it is refused when the model loads (objects of an unrelated class were returned
/// as the requested one).
@Suite(.dedicatedThread) struct SubentityClassTests {
    /// The Animal model plus a sub-entity of Animal built in code with `managedObjectClass`.
    static func model(subentityClass: ManagedObject.Type) -> (ManagedObjectModel, EntityDescription) {
        let entities = ManagedObjectModel(Animal.self, Dog.self, Cat.self, Kennel.self, Note.self).entities
        let robot = EntityDescription(name: "Robot", managedObjectClass: subentityClass, properties: [AttributeDescription(name: "model", type: .string)])
        entities.first { $0.name == "Animal" }?.subentities.append(robot)
        return (ManagedObjectModel(entities: entities + [robot]), robot)
    }

    @Test func aSubentityWithoutAClassOfItsOwnIsFetchedAsItsSuperentitysClass() throws {
        let (model, robot) = Self.model(subentityClass: ManagedObject.self)
        let stack = try TestStack(.sqlite, model: model)
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let machine = ManagedObject(entity: robot, insertInto: context)
            machine.setValue("R2", forKey: "name")
            machine.setValue("astromech", forKey: "model")
            let dog = Dog(context: context)
            dog.name = "Rex"
            try context.save()
        }
        // Read in a context of its own: the objects are made from the model.
        let reader = stack.container.newBackgroundContext()
        let (names, robotIsAnAnimal) = try reader.performAndWait { () throws in
            let animals: [Animal] = try reader.fetch(FetchRequest<Animal>(entityName: "Animal"))
            return (animals.map(\.name).sorted(), animals.contains { $0.entity.name == "Robot" && type(of: $0) == Animal.self })
        }
        #expect(names == ["R2", "Rex"])
        #expect(robotIsAnAnimal)
        // Animal's own class still names Animal, not the sub-entity that inherited it.
        #expect(try context.performAndWait { () throws in Dog(context: context).entity.superentity?.name } == "Animal")
    }

    @Test func aSubentityWhoseClassIsNotASubclassIsRefused() throws {
        let (model, _) = Self.model(subentityClass: Note.self)
        let error = try #require(throws: CoreDataError.self) { _ = try TestStack(.inMemory, model: model) }
        #expect(error.message.contains("not a subclass of Animal"))
    }
}
