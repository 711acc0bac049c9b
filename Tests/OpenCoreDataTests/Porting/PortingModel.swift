import Foundation
import OpenCoreData

// Classes written by hand, as Xcode generates them for Core Data (no macro): the model file
// names them (`representedClassName`) and their accessors are Core Data's.

/// A quake whose hooks write down when they run.
final class PortQuake: NSManagedObject {
    /// The hooks that ran on this instance, in order.
    var hooks: [String] = []
    /// What `willSave` sets on every save (to check it loops only while values change).
    var willSaveSetsPlace: String?

    class func fetchRequest() -> NSFetchRequest<PortQuake> { NSFetchRequest<PortQuake>(entityName: "Quake") }

    var code: String? {
        get { value(forKey: "code") as? String }
        set { setValue(newValue, forKey: "code") }
    }
    var magnitude: Float {
        get {
            willAccessValue(forKey: "magnitude")
            defer { didAccessValue(forKey: "magnitude") }
            return primitiveValue(forKey: "magnitude") as? Float ?? 0
        }
        set {
            willChangeValue(forKey: "magnitude")
            setPrimitiveValue(newValue, forKey: "magnitude")
            didChangeValue(forKey: "magnitude")
        }
    }
    var place: String? {
        get { value(forKey: "place") as? String }
        set { setValue(newValue, forKey: "place") }
    }
    var time: Date? { value(forKey: "time") as? Date }
    var region: PortRegion? {
        get { value(forKey: "region") as? PortRegion }
        set { setValue(newValue, forKey: "region") }
    }

    override func awakeFromInsert() {
        super.awakeFromInsert()
        hooks.append("awakeFromInsert")
        setPrimitiveValue(Date(timeIntervalSince1970: 1_000), forKey: "time")
    }
    override func awakeFromFetch() {
        super.awakeFromFetch()
        hooks.append("awakeFromFetch")
        // Change processing is off here: this is not a change.
        if place == nil { place = "unknown" }
    }
    override func willSave() {
        super.willSave()
        hooks.append(isDeleted ? "willSave(deleted)" : "willSave")
        if let value = willSaveSetsPlace, !isDeleted, place != value { place = value }
    }
    override func didSave() {
        super.didSave()
        hooks.append(isDeleted ? "didSave(deleted)" : "didSave")
    }
    override func prepareForDeletion() {
        super.prepareForDeletion()
        hooks.append("prepareForDeletion(region: \(region?.name ?? "none"))")
    }
    override func willTurnIntoFault() {
        super.willTurnIntoFault()
        hooks.append("willTurnIntoFault(\(isFault ? "fault" : "loaded"))")
    }
    override func didTurnIntoFault() {
        super.didTurnIntoFault()
        hooks.append("didTurnIntoFault(\(isFault ? "fault" : "loaded"))")
    }
}

/// A region; deleting it cascades to its quakes.
final class PortRegion: NSManagedObject {
    var hooks: [String] = []
    /// A `willSave` that changes the region on every call.
    var restlessWillSave = false

    var name: String? {
        get { value(forKey: "name") as? String }
        set { setValue(newValue, forKey: "name") }
    }
    var quakes: Set<PortQuake> { (value(forKey: "quakes") as? Set<NSManagedObject> ?? []).compactMap { $0 as? PortQuake }.reduce(into: []) { $0.insert($1) } }
    var pinned: [PortQuake] { (value(forKey: "pinned") as? [NSManagedObject] ?? []).compactMap { $0 as? PortQuake } }

    override func prepareForDeletion() {
        super.prepareForDeletion()
        hooks.append("prepareForDeletion(quakes: \(quakes.count))")
    }
    override func willSave() {
        super.willSave()
        if restlessWillSave { setValue(UUID().uuidString, forKey: "name") }
    }
}

/// Writes the porting model as Xcode does (`Name.xcdatamodeld/Name.xcdatamodel/contents`).
enum PortingModel {
    static let contents = """
    <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
    <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="1" systemVersion="1" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
        <entity name="Quake" representedClassName="OpenCoreDataTests.PortQuake" syncable="YES">
            <attribute name="code" optional="YES" attributeType="String"/>
            <attribute name="magnitude" attributeType="Float" defaultValueString="0.0" usesScalarValueType="YES"/>
            <attribute name="place" optional="YES" attributeType="String"/>
            <attribute name="time" optional="YES" attributeType="Date" usesScalarValueType="NO"/>
            <relationship name="region" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Region" inverseName="quakes" inverseEntity="Region"/>
            <relationship name="pinnedIn" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Region" inverseName="pinned" inverseEntity="Region"/>
        </entity>
        <entity name="Region" representedClassName=".PortRegion" syncable="YES">
            <attribute name="name" optional="YES" attributeType="String"/>
            <relationship name="quakes" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Quake" inverseName="region" inverseEntity="Quake"/>
            <relationship name="pinned" optional="YES" toMany="YES" deletionRule="Nullify" ordered="YES" destinationEntity="Quake" inverseName="pinnedIn" inverseEntity="Quake"/>
        </entity>
    </model>
    """

    /// Writes `name.xcdatamodeld` into `directory` and returns its URL.
    @discardableResult
    static func write(named name: String, into directory: URL) throws -> URL {
        let bundle = directory.appendingPathComponent("\(name).xcdatamodeld")
        let version = bundle.appendingPathComponent("\(name).xcdatamodel")
        try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
        try Data(contents.utf8).write(to: version.appendingPathComponent("contents"))
        return bundle
    }
}

/// Carries a context's object out of `performAndWait` to be used on the same queue again later.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
