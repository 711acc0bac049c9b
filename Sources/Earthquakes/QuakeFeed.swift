import Foundation
import OpenCoreData

/// One feature of a feed.
public struct QuakeRecord: Sendable, Equatable {
    /// The USGS event id.
    public var code: String
    /// The magnitude (`nil` for `"mag": null`).
    public var magnitude: Double?
    /// Where, in words.
    public var place: String
    /// When it happened.
    public var time: Date
    /// When USGS last updated it.
    public var updated: Date?
    /// Degrees north.
    public var latitude: Double
    /// Degrees east.
    public var longitude: Double
    /// Kilometres below the surface.
    public var depth: Double
}

/// A USGS GeoJSON feed, decoded.
public struct QuakeFeed: Sendable {
    /// The features, in feed order.
    public let records: [QuakeRecord]

    /// Decodes a feed; throws a `CoreDataError` naming the feature when one is malformed.
    public init(data: Data) throws {
        guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let features = root["features"] as? [[String: Any]] else {
            throw CoreDataError(.coreData, "This is not a GeoJSON feature collection: expected an object with a \"features\" array.")
        }
        var records: [QuakeRecord] = []
        records.reserveCapacity(features.count)
        for (index, feature) in features.enumerated() {
            guard let properties = feature["properties"] as? [String: Any],
                  let code = (feature["id"] as? String) ?? (properties["code"] as? String),
                  let time = (properties["time"] as? NSNumber)?.doubleValue,
                  let geometry = feature["geometry"] as? [String: Any],
                  let coordinates = geometry["coordinates"] as? [NSNumber], coordinates.count >= 2 else {
                throw CoreDataError(.coreData, "Feature \(index) of the feed lacks an id, a time or coordinates.")
            }
            records.append(QuakeRecord(
                code: code,
                // `"mag": null` happens: the attribute is optional, the quake simply has no magnitude.
                magnitude: (properties["mag"] as? NSNumber)?.doubleValue,
                place: properties["place"] as? String ?? "",
                time: Date(timeIntervalSince1970: time / 1000),
                updated: (properties["updated"] as? NSNumber).map { Date(timeIntervalSince1970: $0.doubleValue / 1000) },
                latitude: coordinates[1].doubleValue, longitude: coordinates[0].doubleValue,
                depth: coordinates.count > 2 ? coordinates[2].doubleValue : 0))
        }
        self.records = records
    }

    /// A feed made of records (corrections, tests).
    public init(records: [QuakeRecord]) throws {
        self.records = records
    }

    /// Reads and decodes a feed file.
    public init(contentsOf url: URL) throws {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw CoreDataError(.coreData, "Could not read the feed at \(url.path): \(error.localizedDescription)")
        }
        try self.init(data: data)
    }
}
