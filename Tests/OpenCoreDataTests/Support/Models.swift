import OpenCoreData

// Models are declared here, outside the library, exactly as users declare theirs.

@Managed
final class Note: ManagedObject {
    var id: Int32 = 0
    var text1: String?
    var text2: String?
    var text3: String?
}

@Managed
final class Sample: ManagedObject {
    var small: Int16 = 0
    var medium: Int32 = 0
    var large: Int64 = 0
    var plain: Int = 0
    var ratio: Double = 0
    var single: Float = 0
    var flag: Bool = false
    var title: String = "untitled"
    var created: Date = Date(timeIntervalSinceReferenceDate: 0)
    var payload: Data?
    var identifier: UUID?
    var link: URL?
    var amount: Decimal = 0
    var note: String?
    @Attribute(.unique) var code: String = ""
    @Transient var scratch: Int = 0
}

// The object graph of the issue: folders own memos (cascade), memos and tags are many-to-many.

@Managed
final class Drawer: ManagedObject {
    var label: String = ""
    @Relationship(deleteRule: .cascade, inverse: \Folder.drawer) var folders: Set<Folder> = []
}

@Managed
final class Folder: ManagedObject {
    var title: String = ""
    var drawer: Drawer?
    @Relationship(deleteRule: .cascade, inverse: \Memo.folder) var memos: Set<Memo> = []
}

@Managed
final class Memo: ManagedObject {
    var body: String = ""
    var folder: Folder?
    @Relationship(inverse: \Tag.memos) var tags: Set<Tag> = []
}

@Managed
final class Tag: ManagedObject {
    var name: String = ""
    var memos: Set<Memo> = []
}

/// An owner cannot be deleted while it has pets (deny); a pet must have an owner.
@Managed
final class Owner: ManagedObject {
    @Attribute(.minimum(2), .maximum(20), .pattern("[A-Z][a-z]*")) var name: String = "Ann"
    @Attribute(.minimum(0), .maximum(150)) var age: Int16 = 30
    @Attribute(.earliest(Date(timeIntervalSinceReferenceDate: 0))) var since: Date = Date(timeIntervalSinceReferenceDate: 100)
    @Relationship(deleteRule: .deny, inverse: \Pet.owner, maximumCount: 3) var pets: Set<Pet> = []
}

@Managed
final class Pet: ManagedObject {
    var name: String = ""
    var owner: Owner!
}

/// The graph model.
func graphModel() -> ManagedObjectModel { ManagedObjectModel(Drawer.self, Folder.self, Memo.self, Tag.self, Owner.self, Pet.self) }

// Entity inheritance: one table for Animal, Dog and Cat.

@Managed(abstract: true)
class Animal: ManagedObject {
    var name: String = ""
    var kennel: Kennel?
}

@Managed
final class Dog: Animal {
    var breed: String = ""
}

@Managed
final class Cat: Animal {
    var lives: Int16 = 9
}

@Managed
final class Kennel: ManagedObject {
    var city: String = ""
    @Relationship(inverse: \Animal.kennel) var animals: Set<Animal> = []
    /// A to-one into the hierarchy: stored with the destination's Z_ENT beside its key.
    var star: Animal?
}

func zooModel() -> ManagedObjectModel { ManagedObjectModel(Animal.self, Dog.self, Cat.self, Kennel.self) }

// Ordered to-many: a playlist keeps its tracks in order.

@Managed
final class Playlist: ManagedObject {
    var name: String = ""
    @Relationship(deleteRule: .cascade, inverse: \Track.playlist) var tracks: [Track] = []
}

@Managed
final class Track: ManagedObject {
    var title: String = ""
    var playlist: Playlist?
}

/// For persistent history: the code survives deletion in the tombstone.
@Managed
final class Entry: ManagedObject {
    @Attribute(.preserveValueOnDeletion) var code: String = ""
    var value: Int64 = 0
}

// The differential tests' graph: probes with values of every kind, labels they point at through
// a to-many and a to-one relationship.

@Managed
final class Probe: ManagedObject {
    var small: Int16 = 0
    var ratio: Double = 0
    var title: String = ""
    var note: String?
    var amount: Decimal = 0
    var identifier: UUID?
    var payload: Data?
    var created: Date = Date(timeIntervalSinceReferenceDate: 0)
    var code: String = ""
    /// Written only by batch updates, to see which objects they selected.
    var mark: Int64 = 0
    @Relationship(inverse: \Label.probes) var labels: Set<Label> = []
    @Relationship(inverse: \Label.owned) var owner: Label?
}

@Managed
final class Label: ManagedObject {
    var name: String = ""
    var rank: Int32 = 0
    var probes: Set<Probe> = []
    var owned: Set<Probe> = []
}
