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
