import OpenCoreData

@Managed
public final class Quake: ManagedObject {
    public var code: String = ""
    public var magnitude: Double?
    public var place: String = ""
    public var time: Date = Date(timeIntervalSinceReferenceDate: 0)
    public var updated: Date?
    public var latitude: Double = 0
    public var longitude: Double = 0
    public var depth: Double = 0
}
