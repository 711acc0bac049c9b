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
final class Folder: ManagedObject {
    var title: String = ""
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

/// The graph model.
func graphModel() -> ManagedObjectModel { ManagedObjectModel(Folder.self, Memo.self, Tag.self) }
