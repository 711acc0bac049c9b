import OpenCoreData

/// The note of the Core Data concurrency seeds.
@Managed
final class Note: ManagedObject {
    var id: Int32 = 0
    var text1: String?
    var text2: String?
    var text3: String?
}

/// The object graph of `ocd demo graph`: folders own memos (cascade), memos and tags are
/// many-to-many.
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
