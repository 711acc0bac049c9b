import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// A mapping model made in Xcode (`.xcmappingmodel`): how the entities and properties of one
/// model version become those of the next, where inference alone would not do. Mirrors
/// `NSMappingModel`; pass it under ``MappingModelsOption`` and a migration between its two
/// versions follows it.
///
/// A mapping that only renames or adds entities and gives property values as key paths from the
/// source object (`$source.continent.numericISO3166Code`) or constants is followed in SQL, row by
/// row, keeping keys. One that runs app code — a custom entity migration policy
/// (`EntityMigrationPolicy`, Core Data's `NSEntityMigrationPolicy`) or a `FUNCTION(…)`
/// expression — or that migrates only the source objects a filter predicate selects
/// (``EntityMapping/sourceExpression``) is followed object by object by a `MigrationManager`, as
/// Core Data's `NSMigrationManager` does.
// @unchecked Sendable: immutable after init (the models it holds are frozen on first use).
public final class MappingModel: @unchecked Sendable, CustomStringConvertible {
    /// How the objects of one destination entity are made.
    public struct EntityMapping: Sendable {
        /// The mapping's name, by which value expressions and policies refer to it
        /// (`FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:",
        /// "PersonToPerson", $source.owner)`): Xcode's `<Source>To<Destination>`.
        public var name: String
        /// The source entity (nil for an entity the migration adds empty).
        public var sourceEntityName: String?
        /// The destination entity.
        public var destinationEntityName: String
        /// The custom `NSEntityMigrationPolicy` subclass, if the mapping names one.
        public var migrationPolicyClassName: String?
        /// Value expressions of destination properties, in predicate format (`$source.date`,
        /// `YES`); properties not listed are inferred (same name or renaming identifier).
        public var valueExpressions: [String: String]
        /// Which source objects the mapping migrates, in expression format: Xcode's fetch of the
        /// source entity narrowed by the mapping's filter predicate,
        /// `FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Note",
        /// "archived == NO"), $manager.sourceContext, NO)`. `nil` migrates every object of
        /// `sourceEntityName` (sub-entities aside). Mirrors `NSEntityMapping.sourceExpression`.
        public var sourceExpression: String?

        /// A mapping from `sourceEntityName` (nil: the destination entity starts empty) to
        /// `destinationEntityName`; `name` defaults to Xcode's `<Source>To<Destination>`.
        public init(name: String? = nil, sourceEntityName: String?, destinationEntityName: String, migrationPolicyClassName: String? = nil,
                    valueExpressions: [String: String] = [:], sourceExpression: String? = nil) {
            self.name = name ?? sourceEntityName.map { "\($0)To\(destinationEntityName)" } ?? destinationEntityName
            self.sourceEntityName = sourceEntityName
            self.destinationEntityName = destinationEntityName
            self.migrationPolicyClassName = migrationPolicyClassName
            self.valueExpressions = valueExpressions
            self.sourceExpression = sourceExpression
        }

        /// The objects ``sourceExpression`` selects; `nil` without one. Throws 134110 for an
        /// expression other than Xcode's fetch.
        package func sourceSelection() throws(CoreDataError) -> MappingSourceExpression? {
            try sourceExpression.map { text throws(CoreDataError) in try MappingSourceExpression(text, mapping: name) }
        }

        /// Whether following this mapping takes a migration manager, object by object: it runs app
        /// code (a policy, a `FUNCTION(…)` value) or selects its source objects by an expression
        /// other than "all of the entity" (a filter predicate), which a migration in SQL does not
        /// apply.
        package var needsMigrationManager: Bool {
            migrationPolicyClassName != nil || valueExpressions.values.contains { $0.contains("FUNCTION(") } || filtersSources
        }

        /// Whether ``sourceExpression`` selects other objects than every one of the source entity
        /// (an expression that cannot be read counts: the migration manager says why).
        package var filtersSources: Bool {
            sourceExpression != nil && (try? sourceSelection())?.selectsAll != true
        }
    }

    /// The mapping model's name (its file name without extension).
    public let name: String
    /// The version it migrates from.
    public let sourceModel: ManagedObjectModel
    /// The version it migrates to.
    public let destinationModel: ManagedObjectModel
    /// One per destination entity the mapping lists, in the order they are followed.
    public let entityMappings: [EntityMapping]

    /// A mapping model made in code: how `sourceModel`'s objects become `destinationModel`'s.
    /// Entities and properties no mapping lists are inferred (same name, or the renaming
    /// identifier), as for a mapping model read from a file.
    public init(name: String, sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel, entityMappings: [EntityMapping]) {
        self.name = name
        self.sourceModel = sourceModel
        self.destinationModel = destinationModel
        self.entityMappings = entityMappings
    }

    /// Whether following the mapping takes a migration manager (app code, or a filter on the
    /// source objects), so that it is followed object by object rather than in SQL.
    package var needsMigrationManager: Bool { entityMappings.contains { $0.needsMigrationManager } }

    /// Reads `url` (an `.xcmappingmodel` folder or its `xcmapping.xml`); its source and
    /// destination versions are loaded from `models` (the `.xcdatamodeld` they belong to), by
    /// the version names the mapping records.
    public init(contentsOf url: URL, models: URL) throws {
        let file = url.pathExtension == "xcmappingmodel" ? url.appendingPathComponent("xcmapping.xml") : url
        let name = url.pathExtension == "xcmappingmodel"
            ? url.deletingPathExtension().lastPathComponent
            : url.deletingLastPathComponent().deletingPathExtension().lastPathComponent
        self.name = name
        guard let data = try? Data(contentsOf: file) else {
            throw CoreDataError(.coreData, "Could not read the mapping model at \(file.path). Pass an .xcmappingmodel folder.")
        }
        let reader = MappingXMLReader()
        if let failure = try XMLInput.parse(data, with: reader, file: file, what: "mapping model") {
            throw CoreDataError(.coreData, "The mapping model at \(file.path) is not valid Core Data mapping XML: \(failure).")
        }
        func version(_ key: String) throws -> ManagedObjectModel {
            guard let path = reader.model[key] else {
                throw CoreDataError(.coreData, """
                    The mapping model \(name) does not name its \
                    \(key == "sourcemodelpath" ? "source" : "destination") model version.
                    """)
            }
            let version = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
            return try ManagedObjectModel(contentsOf: models, version: version)
        }
        sourceModel = try version("sourcemodelpath")
        destinationModel = try version("destinationmodelpath")
        entityMappings = reader.entityMappings()
    }

    public var description: String { "MappingModel(\(name))" }
}

/// Reads `xcmapping.xml`: Core Data's XML store of Xcode's mapping objects
/// (`XDDEVENTITYMAPPING`, `XDDEVATTRIBUTEMAPPING`, `XDDEVRELATIONSHIPMAPPING`,
/// `XDDEVMAPPINGMODEL`), whose value expressions are archived `NSExpression`s.
// Used on one thread, by one parse.
private final class MappingXMLReader: NSObject, XMLParserDelegate {
    private struct Object {
        var type: String
        var attributes: [String: String] = [:]
        var references: [String: String] = [:]
    }
    private var objects: [String: Object] = [:]
    private var current: (id: String, object: Object)?
    private var attribute: String?
    private var text = ""
    var model: [String: String] = [:]

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        switch name {
        case "object":
            if let id = attributes["id"], let type = attributes["type"] { current = (id, Object(type: type)) }
        case "attribute":
            attribute = attributes["name"]
            text = ""
        case "relationship":
            if let relationship = attributes["name"], let target = attributes["idrefs"] { current?.object.references[relationship] = target }
        default:
            break
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if attribute != nil { text += string }
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        switch name {
        case "attribute":
            if let attribute { current?.object.attributes[attribute] = text }
            attribute = nil
        case "object":
            if let current {
                objects[current.id] = current.object
                if current.object.type == "XDDEVMAPPINGMODEL" { model = current.object.attributes }
            }
            current = nil
        default:
            break
        }
    }

    func entityMappings() -> [MappingModel.EntityMapping] {
        var mappings: [String: MappingModel.EntityMapping] = [:]
        var order: [String: Int] = [:]
        for (id, object) in objects where object.type == "XDDEVENTITYMAPPING" {
            guard let destination = object.attributes["destinationname"], !destination.isEmpty else { continue }
            let policy = object.attributes["migrationpolicyclassname"].flatMap { $0.isEmpty || $0 == "NSEntityMigrationPolicy" ? nil : $0 }
            let source = object.attributes["sourcename"].flatMap { $0.isEmpty ? nil : $0 }
            mappings[id] = .init(sourceEntityName: source, destinationEntityName: destination, migrationPolicyClassName: policy,
                                 sourceExpression: source.flatMap { Self.sourceExpression(of: object, source: $0) })
            order[id] = object.attributes["mappingnumber"].flatMap { Int($0) } ?? Int.max
        }
        for object in objects.values where object.type == "XDDEVATTRIBUTEMAPPING" || object.type == "XDDEVRELATIONSHIPMAPPING" {
            guard let owner = object.references["entitymapping"], let property = object.attributes["name"] else { continue }
            // A relationship mapped in Xcode by key path and entity mapping: the expression
            // Xcode compiles for it.
            if object.type == "XDDEVRELATIONSHIPMAPPING", object.attributes["valueexpressiondata"] == nil,
               let name = object.attributes["sourcemappingname"], let path = object.attributes["sourcekeypath"],
               Self.isName(name), path.hasPrefix("$source"), path.dropFirst().allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." || $0 == "@" }) {
                mappings[owner]?.valueExpressions[property] = """
                    FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \
                    \"\(name)\", \(path))
                    """
                continue
            }
            guard let encoded = object.attributes["valueexpressiondata"],
                  let data = Data(base64Encoded: encoded, options: .ignoreUnknownCharacters),
                  let archive = try? KeyedArchive(data) else { continue }
            mappings[owner]?.valueExpressions[property] = archive.expressionText(.uid(archive.root))
        }
        // Xcode's order (the mapping number), then by name for mappings that have none.
        return mappings.sorted { (order[$0.key, default: .max], $0.value.name) < (order[$1.key, default: .max], $1.value.name) }.map(\.value)
    }

    /// An entity mapping's source expression: one written in Xcode (`sourceexpressiondata`, an
    /// archived expression, unless the expression is generated), else Xcode's fetch of `source`
    /// narrowed by the filter predicate (`sourcefilterpredicatestring`); `nil` without either.
    /// (These two attribute names come from a public reimplementation of Xcode's mapping
    /// compiler; no fixture written by Xcode here has a filter predicate to confirm them.)
    private static func sourceExpression(of object: Object, source: String) -> String? {
        if object.attributes["autogenerateexpression"].map({ ["1", "YES", "true"].contains($0) }) != true,
           let encoded = object.attributes["sourceexpressiondata"],
           let data = Data(base64Encoded: encoded, options: .ignoreUnknownCharacters), let archive = try? KeyedArchive(data) {
            return archive.expressionText(.uid(archive.root))
        }
        guard let filter = object.attributes["sourcefilterpredicatestring"], !filter.isEmpty else { return nil }
        return MappingSourceExpression.fetch(source, filter: filter)
    }

    private static func isName(_ text: String) -> Bool {
        !text.isEmpty && text.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
    }
}
