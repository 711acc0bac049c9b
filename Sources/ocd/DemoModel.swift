import OpenCoreData

/// The note of the Core Data concurrency seeds.
@Managed
final class Note: ManagedObject {
    var id: Int32 = 0
    var text1: String?
    var text2: String?
    var text3: String?
}
