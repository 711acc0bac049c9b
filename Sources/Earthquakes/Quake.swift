import OpenCoreData

/// One earthquake of a USGS feed. `code` (the feature's id) is unique: importing a feed again
/// updates the quakes it already has instead of duplicating them.
@Managed
public final class Quake: ManagedObject {
    /// The USGS event id (`"ci38592402"`).
    @Attribute(.unique) public var code: String = ""
    /// The magnitude; USGS leaves it `null` for some events.
    public var magnitude: Double?
    /// Where, in words ("14km SW of Searles Valley, CA").
    public var place: String = ""
    /// When it happened.
    public var time: Date = Date(timeIntervalSinceReferenceDate: 0)
    /// When USGS last updated the event.
    public var updated: Date?
    /// Degrees north.
    public var latitude: Double = 0
    /// Degrees east.
    public var longitude: Double = 0
    /// Kilometres below the surface.
    public var depth: Double = 0
}
