import OpenCoreDataMacros
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosGenericTestSupport
import Testing
import TestSupport

/// Expands macros and reports mismatches through Swift Testing.
private func assertExpansion(_ source: String, expandedSource: String, diagnostics: [DiagnosticSpec] = [], sourceLocation: SourceLocation = #_sourceLocation) {
    let specs: [String: MacroSpec] = [
        "Managed": MacroSpec(type: ManagedMacro.self, conformances: ["ManagedEntity"]),
        "_ManagedAttribute": MacroSpec(type: ManagedAttributeMacro.self),
        "Transient": MacroSpec(type: MarkerMacro.self),
        "Attribute": MacroSpec(type: MarkerMacro.self),
        "Relationship": MacroSpec(type: MarkerMacro.self),
    ]
    assertMacroExpansion(source, expandedSource: expandedSource, diagnostics: diagnostics, macroSpecs: specs, indentationWidth: .spaces(4)) { failure in
        Issue.record(Comment(rawValue: failure.message), sourceLocation: sourceLocation)
    }
}

@Suite(.dedicatedThread) struct ManagedMacroTests {
    @Test func expandsAttributesDefaultsAndOptions() {
        assertExpansion(
            """
            @Managed
            final class Note: ManagedObject {
                var id: Int32 = 0
                var text1: String?
                @Attribute(.unique) var code: String = ""
                @Transient var scratch = 0
                var computed: Int { 1 }
            }
            """,
            expandedSource: """
            final class Note: ManagedObject {
                var id: Int32 {
                    init(initialValue) {
                    }
                    get {
                        self.managedAttributeValue(forKey: "id", index: 0, default: 0)
                    }
                    set {
                        self.setManagedAttributeValue(newValue, forKey: "id", index: 0)
                    }
                }
                var text1: String? {
                    get {
                        self.managedAttributeValue(forKey: "text1", index: 1, default: nil)
                    }
                    set {
                        self.setManagedAttributeValue(newValue, forKey: "text1", index: 1)
                    }
                }
                var code: String {
                    init(initialValue) {
                    }
                    get {
                        self.managedAttributeValue(forKey: "code", index: 2, default: "")
                    }
                    set {
                        self.setManagedAttributeValue(newValue, forKey: "code", index: 2)
                    }
                }
                var scratch = 0
                var computed: Int { 1 }

                /// The entity's name, as in the model.
                class var entityName: String {
                    "Note"
                }

                /// A new description of the entity of this class.
                class func makeEntityDescription() -> OpenCoreData.EntityDescription {
                    let entity = OpenCoreData.EntityDescription(name: "Note", managedObjectClass: Note.self, properties: [
                        OpenCoreData.AttributeDescription.managed("id", \\Note.id, default: 0),
                        OpenCoreData.AttributeDescription.managed("text1", \\Note.text1, default: nil),
                        OpenCoreData.AttributeDescription.managed("code", \\Note.code, default: "")
                    ])
                    entity.uniquenessConstraints = [["code"]]
                    return entity
                }
            }

            extension Note: OpenCoreData.ManagedEntity {
            }
            """
        )
    }

    /// What `ocd codegen` writes for a model file: an entity named apart from its class, a
    /// constraint over two attributes, the model's optionality and a Transformable property.
    @Test func expandsWhatAModelFileSays() {
        assertExpansion(
            """
            @Managed(entityName: "Shelf", unique: [["city", "number"]])
            final class AppShelf: ManagedObject {
                @Attribute(.required) var city: String?
                @Attribute(.transformable(by: "LabelsTransformer")) var labels: [String]?
            }
            """,
            expandedSource: """
            final class AppShelf: ManagedObject {
                var city: String? {
                    get {
                        self.managedAttributeValue(forKey: "city", index: 0, default: nil)
                    }
                    set {
                        self.setManagedAttributeValue(newValue, forKey: "city", index: 0)
                    }
                }
                var labels: [String]? {
                    get {
                        self.value(forKey: "labels") as? [String]
                    }
                    set {
                        self.setValue(newValue, forKey: "labels")
                    }
                }

                /// The entity's name, as in the model.
                class var entityName: String {
                    "Shelf"
                }

                /// A new description of the entity of this class.
                class func makeEntityDescription() -> OpenCoreData.EntityDescription {
                    let entity = OpenCoreData.EntityDescription(name: "Shelf", managedObjectClass: AppShelf.self, properties: [
                        OpenCoreData.AttributeDescription.managed("city", \\AppShelf.city, default: nil, options: [.required]),
                        OpenCoreData.AttributeDescription.managedTransformable("labels", \\AppShelf.labels, isOptional: true, options: [.transformable(by: "LabelsTransformer")])
                    ])
                    entity.uniquenessConstraints = [["city", "number"]]
                    return entity
                }
            }

            extension AppShelf: OpenCoreData.ManagedEntity {
            }
            """
        )
    }

    @Test func unsupportedTypeIsACompileErrorThatListsTheSupportedTypes() {
        assertExpansion(
            """
            @Managed
            final class Bad: ManagedObject {
                var tags: [String] = []
            }
            """,
            expandedSource: """
            final class Bad: ManagedObject {
                var tags: [String] = []
            }
            """,
            diagnostics: [
                DiagnosticSpec(message: "'tags' has type '[String]', which is not a supported attribute type. Use Int16, Int32, Int64, Int, Double, Float, Bool, String, Date, Data, UUID, URL, Decimal (or an optional of one), or mark the property @Transient", line: 3, column: 5),
            ]
        )
    }

    @Test func nonOptionalWithoutDefaultIsAnError() {
        assertExpansion(
            """
            @Managed
            final class Bad: ManagedObject {
                var title: String
            }
            """,
            expandedSource: """
            final class Bad: ManagedObject {
                var title: String
            }
            """,
            diagnostics: [
                DiagnosticSpec(message: "'title' needs a default value ('var title: String = …') or an optional type ('String?'): new objects must start with a value", line: 3, column: 5),
            ]
        )
    }

    @Test func letPropertiesAndUnknownOptionsAreErrors() {
        assertExpansion(
            """
            @Managed
            final class Bad: ManagedObject {
                let fixed: Int = 1
                @Attribute(.sparkly) var name: String = ""
            }
            """,
            expandedSource: """
            final class Bad: ManagedObject {
                let fixed: Int = 1
                var name: String {
                    init(initialValue) {
                    }
                    get {
                        self.managedAttributeValue(forKey: "name", index: 0, default: "")
                    }
                    set {
                        self.setManagedAttributeValue(newValue, forKey: "name", index: 0)
                    }
                }
            }
            """,
            diagnostics: [
                DiagnosticSpec(message: "Managed attributes must be 'var': Core Data changes them when objects are fetched, merged and refreshed. Use 'var', or mark the property @Transient", line: 3, column: 5),
                DiagnosticSpec(message: "Unknown attribute option '.sparkly'; the options are .unique, .indexed, .preserveValueOnDeletion, .externalStorage, .minimum(_:), .maximum(_:), .earliest(_:), .latest(_:), .pattern(_:), .required, .optional, .hashModifier(_:), .transformable(by:), .derived(_:)", line: 4, column: 5),
            ]
        )
    }

    @Test func publicClassesGetPublicWitnesses() {
        assertExpansion(
            """
            @Managed
            public final class Tag: ManagedObject {
                public var name: String = ""
            }
            """,
            expandedSource: """
            public final class Tag: ManagedObject {
                public var name: String {
                    init(initialValue) {
                    }
                    get {
                        self.managedAttributeValue(forKey: "name", index: 0, default: "")
                    }
                    set {
                        self.setManagedAttributeValue(newValue, forKey: "name", index: 0)
                    }
                }

                /// The entity's name, as in the model.
                public class var entityName: String {
                    "Tag"
                }

                /// A new description of the entity of this class.
                public class func makeEntityDescription() -> OpenCoreData.EntityDescription {
                    let entity = OpenCoreData.EntityDescription(name: "Tag", managedObjectClass: Tag.self, properties: [
                        OpenCoreData.AttributeDescription.managed("name", \\Tag.name, default: "")
                    ])
                    return entity
                }
            }

            extension Tag: OpenCoreData.ManagedEntity {
            }
            """
        )
    }

    @Test func relationshipsAndSubclassesExpand() {
        assertExpansion(
            """
            @Managed
            final class Memo: Note {
                var body: String = ""
                var folder: Folder?
                var owner: Person!
                @Relationship(deleteRule: .cascade, inverse: \\Tag.memos, minimumCount: 1) var tags: Set<Tag> = []
            }
            """,
            expandedSource: """
            final class Memo: Note {
                var body: String {
                    init(initialValue) {
                    }
                    get {
                        self.managedAttributeValue(forKey: "body", index: 0, default: "")
                    }
                    set {
                        self.setManagedAttributeValue(newValue, forKey: "body", index: 0)
                    }
                }
                var folder: Folder? {
                    get {
                        self.managedToOne(forKey: "folder", as: Folder.self)
                    }
                    set {
                        self.setManagedToOne(newValue, forKey: "folder")
                    }
                }
                var owner: Person! {
                    get {
                        self.managedToOne(forKey: "owner", as: Person.self)
                    }
                    set {
                        self.setManagedToOne(newValue, forKey: "owner")
                    }
                }
                var tags: Set<Tag> {
                    init(initialValue) {
                    }
                    get {
                        self.managedToMany(forKey: "tags", as: Tag.self)
                    }
                    set {
                        self.setManagedToMany(newValue, forKey: "tags")
                    }
                }

                /// The entity's name, as in the model.
                override class var entityName: String {
                    "Memo"
                }

                /// A new description of the entity of this class.
                override class func makeEntityDescription() -> OpenCoreData.EntityDescription {
                    let entity = OpenCoreData.EntityDescription(name: "Memo", managedObjectClass: Memo.self, properties: [
                        OpenCoreData.AttributeDescription.managed("body", \\Memo.body, default: ""),
                        OpenCoreData.RelationshipDescription.managed("folder", \\Memo.folder, destination: Folder.self),
                        OpenCoreData.RelationshipDescription.managed("owner", \\Memo.owner, destination: Person.self, isOptional: false),
                        OpenCoreData.RelationshipDescription.managed("tags", \\Memo.tags, destination: Tag.self, toMany: true, deleteRule: .cascade, inverse: \\Tag.memos, minimumCount: 1)
                    ])
                    entity.superentityClass = Note.self
                    return entity
                }
            }
            """
        )
    }

    @Test func orderedToManyExpandsToAnArrayRelationship() {
        assertExpansion(
            """
            @Managed
            final class Book: ManagedObject {
                @Relationship(deleteRule: .cascade) var pages: [Page] = []
            }
            """,
            expandedSource: """
            final class Book: ManagedObject {
                var pages: [Page] {
                    init(initialValue) {
                    }
                    get {
                        self.managedOrderedToMany(forKey: "pages", as: Page.self)
                    }
                    set {
                        self.setManagedOrderedToMany(newValue, forKey: "pages")
                    }
                }

                /// The entity's name, as in the model.
                class var entityName: String {
                    "Book"
                }

                /// A new description of the entity of this class.
                class func makeEntityDescription() -> OpenCoreData.EntityDescription {
                    let entity = OpenCoreData.EntityDescription(name: "Book", managedObjectClass: Book.self, properties: [
                        OpenCoreData.RelationshipDescription.managed("pages", \\Book.pages, destination: Page.self, toMany: true, isOrdered: true, deleteRule: .cascade)
                    ])
                    return entity
                }
            }

            extension Book: OpenCoreData.ManagedEntity {
            }
            """
        )
    }
}
