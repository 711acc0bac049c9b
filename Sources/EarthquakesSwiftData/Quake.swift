import Foundation
import SwiftData
import Earthquakes

/// One earthquake of a USGS feed, as a SwiftData model: the same entity as the Core Data
/// sample's `Quake` (same name, attributes and version hashes), so that both samples read and
/// write one store. `code` is unique: inserting a quake already stored updates it.
@Model
public final class Quake {
    /// The USGS event id (`"ci38592402"`).
    @Attribute(.unique) public var code: String
    /// The magnitude; USGS leaves it `null` for some events.
    public var magnitude: Double?
    /// Where, in words.
    public var place: String
    /// When it happened.
    public var time: Date
    /// When USGS last updated the event.
    public var updated: Date?
    /// Degrees north.
    public var latitude: Double
    /// Degrees east.
    public var longitude: Double
    /// Kilometres below the surface.
    public var depth: Double

    /// A quake from a feed's record.
    public init(_ record: QuakeRecord) {
        code = record.code
        magnitude = record.magnitude
        place = record.place
        time = record.time
        updated = record.updated
        latitude = record.latitude
        longitude = record.longitude
        depth = record.depth
    }
}
