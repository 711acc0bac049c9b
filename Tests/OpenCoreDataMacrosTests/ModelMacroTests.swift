import OpenCoreDataMacros
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosGenericTestSupport
import Testing
import TestSupport

/// Expands SwiftData's `@Model` and reports mismatches through Swift Testing.
private func assertModelExpansion(_ source: String, expandedSource: String, diagnostics: [DiagnosticSpec] = [],
                                  sourceLocation: SourceLocation = #_sourceLocation) {
    let specs: [String: MacroSpec] = [
        "Model": MacroSpec(type: ModelMacro.self, conformances: ["PersistentModel"]),
        "_PersistedProperty": MacroSpec(type: PersistedPropertyMacro.self),
        "Transient": MacroSpec(type: MarkerMacro.self),
        "Attribute": MacroSpec(type: MarkerMacro.self),
        "Relationship": MacroSpec(type: MarkerMacro.self),
        "Unique": MacroSpec(type: UniqueMacro.self),
        "Index": MacroSpec(type: IndexMacro.self),
    ]
    assertMacroExpansion(source, expandedSource: expandedSource, diagnostics: diagnostics, macroSpecs: specs, indentationWidth: .spaces(4)) { failure in
        Issue.record(Comment(rawValue: failure.message), sourceLocation: sourceLocation)
    }
}

@Suite(.dedicatedThread) struct ModelMacroTests {
    @Test func persistedPropertiesLiveInTheBackingDataAndDescribeTheSchema() {
        assertModelExpansion(
            """
            @Model
            final class Trip {
                @Attribute(.unique) var name: String
                var budget: Double = 0
                @Relationship(deleteRule: .cascade) var stops: [Stop] = []
                @Transient var views = 0
                var label: String { name }
                init(name: String) { self.name = name }
            }
            """,
            // The test expansion drops a property's initializer when accessors are added; the
            // compiler keeps it (`ModelContextTests` reads `budget`'s default).
            expandedSource: """
            final class Trip {
                var name: String {
                    @storageRestrictions(accesses: _$backingData, initializes: _$name)
                    init(initialValue) {
                        _$backingData.setInitialValue(initialValue, forKey: "name")
                        _$name = SwiftData._ModelNoValue()
                    }
                    get {
                        _$observationRegistrar.access(self, keyPath: \\.name)
                        return _$backingData.getValue(forKey: "name")
                    }
                    set {
                        _$observationRegistrar.withMutation(of: self, keyPath: \\.name) {
                            _$backingData.setValue(newValue, forKey: "name")
                        }
                    }
                }

                private var _$name: SwiftData._ModelNoValue
                var budget: Double {
                    @storageRestrictions(accesses: _$backingData, initializes: _$budget)
                    init(initialValue) {
                        _$backingData.setInitialValue(initialValue, forKey: "budget")
                        _$budget = SwiftData._ModelNoValue()
                    }
                    get {
                        _$observationRegistrar.access(self, keyPath: \\.budget)
                        return _$backingData.getValue(forKey: "budget")
                    }
                    set {
                        _$observationRegistrar.withMutation(of: self, keyPath: \\.budget) {
                            _$backingData.setValue(newValue, forKey: "budget")
                        }
                    }
                }

                private var _$budget: SwiftData._ModelNoValue
                var stops: [Stop] {
                    @storageRestrictions(accesses: _$backingData, initializes: _$stops)
                    init(initialValue) {
                        _$backingData.setInitialValue(initialValue, forKey: "stops")
                        _$stops = SwiftData._ModelNoValue()
                    }
                    get {
                        _$observationRegistrar.access(self, keyPath: \\.stops)
                        return _$backingData.getValue(forKey: "stops")
                    }
                    set {
                        _$observationRegistrar.withMutation(of: self, keyPath: \\.stops) {
                            _$backingData.setValue(newValue, forKey: "stops")
                        }
                    }
                }

                private var _$stops: SwiftData._ModelNoValue
                var views = 0
                var label: String { name }
                init(name: String) { self.name = name }

                /// Where this model's values live (SwiftData's backing data).
                private var _$backingData = SwiftData.ModelBackingData()

                private let _$observationRegistrar = Observation.ObservationRegistrar()

                /// Makes the model of a row a context read (or of values a context holds).
                required init(backingData: SwiftData.ModelBackingData) {
                    self._$backingData = backingData
                    self._$name = SwiftData._ModelNoValue()
                    self._$budget = SwiftData._ModelNoValue()
                    self._$stops = SwiftData._ModelNoValue()
                }

                /// Where this model's values live.
                var persistentBackingData: SwiftData.ModelBackingData {
                    get {
                        _$backingData
                    }
                    set {
                        _$backingData = newValue
                    }
                }

                /// The persisted properties: what the schema makes of this class.
                static var schemaMetadata: [SwiftData.Schema.PropertyMetadata] {
                    [
                        SwiftData.Schema.PropertyMetadata(name: "name", keypath: \\Trip.name, metadata: SwiftData.Schema.Attribute(.unique)),
                        SwiftData.Schema.PropertyMetadata(name: "budget", keypath: \\Trip.budget, defaultValue: (0) as Double),
                        SwiftData.Schema.PropertyMetadata(name: "stops", keypath: \\Trip.stops, defaultValue: ([]) as [Stop], metadata: SwiftData.Schema.Relationship(deleteRule: .cascade))
                    ]
                }
            }

            extension Trip: SwiftData.PersistentModel {
            }
            """)
    }

    @Test func propertiesAModelCannotPersistAreRefused() {
        assertModelExpansion(
            """
            @Model
            final class Trip {
                let name: String
                @Transient var cache: [String: Int]
                var count = 0
                init(name: String) { self.name = name; self.cache = [:] }
            }
            """,
            expandedSource: """
            final class Trip {
                let name: String
                var cache: [String: Int]
                var count = 0
                init(name: String) { self.name = name; self.cache = [:] }
            }
            """,
            diagnostics: [
                DiagnosticSpec(message: "Persisted properties must be 'var': contexts change them when models are fetched, merged and rolled back. Use 'var', or mark the property @Transient", line: 3, column: 5),
                DiagnosticSpec(message: "A @Transient stored property needs an initial value ('= …'): models a context reads from the store do not run the class's initializers", line: 4, column: 5),
                DiagnosticSpec(message: "A persisted property needs one name and a type annotation ('var name: String') and no observers (willSet, didSet), or mark it @Transient", line: 5, column: 5),
            ])
    }

    @Test func uniqueAndIndexListTheirKeyPathsTyped() {
        assertModelExpansion(
            """
            #Unique<Person>([\\.id], [\\.givenName, \\.familyName])
            #Index<Person>([\\.familyName])
            """,
            expandedSource: """
            static var _$uniquenessConstraints: [[AnyKeyPath]] {
                let lists: [[PartialKeyPath<Person>]] = [[\\.id], [\\.givenName, \\.familyName]]
                return lists
            }
            static var _$indexes: [[AnyKeyPath]] {
                let lists: [[PartialKeyPath<Person>]] = [[\\.familyName]]
                return lists
            }
            """)
    }

    @Test func aStructIsRefused() {
        assertModelExpansion(
            """
            @Model
            struct Trip {
                var name: String
            }
            """,
            expandedSource: """
            struct Trip {
                var name: String
            }
            """,
            diagnostics: [DiagnosticSpec(message: "@Model applies to classes: declare 'final class Name'", line: 1, column: 1)])
    }
}
