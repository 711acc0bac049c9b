#if os(Linux)
import Foundation
import SwiftData

/// A store file in a folder of its own (remove the folder when done).
func temporaryStoreURL(named name: String = "trips.store") throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("swiftdata-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder.appendingPathComponent(name)
}

// Models as SwiftData code declares them: plain classes, `@Model`, initializers that assign
// every property, relationships as optionals and arrays.

@Model
final class Trip {
    @Attribute(.unique) var name: String
    var destination: String
    var start: Date
    var budget: Double = 0
    var notes: String?
    @Relationship(deleteRule: .cascade, inverse: \Stop.trip) var stops: [Stop] = []
    @Transient var viewCount = 0

    init(name: String, destination: String, start: Date) {
        self.name = name
        self.destination = destination
        self.start = start
    }
}

@Model
final class Stop {
    var title: String
    var order: Int
    var trip: Trip?

    init(title: String, order: Int, trip: Trip? = nil) {
        self.title = title
        self.order = order
        self.trip = trip
    }
}
#endif
#if os(Linux)
import Foundation
import SwiftData

/// Attribute options as SwiftData code writes them.
@Model
final class Note {
    @Attribute(originalName: "title") var heading: String
    @Attribute(.ephemeral) var draft: String = ""
    @Attribute(.transformable(by: "NSSecureUnarchiveFromData")) var tags: [String]?
    @Attribute(.externalStorage) var attachment: Data?
    @Attribute(.preserveValueOnDeletion) var serial: Int = 0

    init(heading: String) {
        self.heading = heading
    }
}
#endif
#if os(Linux)
import Foundation
import SwiftData

/// Constraints and indexes over several properties, as SwiftData code declares them.
@Model
final class Person {
    #Unique<Person>([\.givenName, \.familyName])
    #Index<Person>([\.familyName], [\.familyName, \.givenName])

    var givenName: String
    var familyName: String
    var email: String?

    init(givenName: String, familyName: String, email: String? = nil) {
        self.givenName = givenName
        self.familyName = familyName
        self.email = email
    }
}
#endif
