import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// SwiftData's `@Model` (module `SwiftData`): makes a plain class a persistent model.
///
/// - member attributes: `@_PersistedProperty` on every stored `var` that is not `@Transient`;
/// - members: the backing data (`_$backingData`, where the values live: pending values before
///   the model is inserted, then the context's object), the observation registrar,
///   `init(backingData:)` (how a context makes a model for a fetched row), `persistentBackingData`
///   and `schemaMetadata` (each persisted property's name, key path, default and
///   `@Attribute` / `@Relationship` options, from which the container builds the entity);
/// - extension: conformance to `PersistentModel` (which is `Observable`, `Hashable`, `Identifiable`).
public struct ModelMacro {}

extension ModelMacro: MemberAttributeMacro {
    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingAttributesFor member: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AttributeSyntax] {
        guard declaration.is(ClassDeclSyntax.self), let variable = member.as(VariableDeclSyntax.self),
              ModelProperty.parse(variable) != nil else { return [] }
        return ["@_PersistedProperty"]
    }
}

extension ModelMacro: MemberMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let classDecl = declaration.as(ClassDeclSyntax.self) else {
            context.diagnose(Diagnostic(node: node, message: ModelDiagnostic.notAClass))
            return []
        }
        let (properties, problems) = describe(classDecl)
        for problem in problems { context.diagnose(problem) }
        guard problems.isEmpty else { return [] }
        let className = classDecl.name.text
        let access = classDecl.memberAccess
        let placeholders = properties.map { "self._$\($0.name) = SwiftData._ModelNoValue()" }
        let metadata = properties.map { property -> String in
            var arguments = ["name: \(ManagedMacro.stringLiteral(property.name))", "keypath: \\\(className).\(property.name)"]
            if let initializer = property.initializer {
                arguments.append("defaultValue: (\(initializer.trimmedDescription)) as \(property.typeText)")
            }
            if let options = property.options {
                arguments.append("metadata: \(options)")
            }
            return "SwiftData.Schema.PropertyMetadata(\(arguments.joined(separator: ", ")))"
        }
        return [
            """
            /// Where this model's values live (SwiftData's backing data).
            private var _$backingData = SwiftData.ModelBackingData()
            """,
            """
            private let _$observationRegistrar = Observation.ObservationRegistrar()
            """,
            """
            /// Makes the model of a row a context read (or of values a context holds).
            \(raw: access)required init(backingData: SwiftData.ModelBackingData) {
                \(raw: (["self._$backingData = backingData"] + placeholders).joined(separator: "\n    "))
            }
            """,
            """
            /// Where this model's values live.
            \(raw: access)var persistentBackingData: SwiftData.ModelBackingData {
                get { _$backingData }
                set { _$backingData = newValue }
            }
            """,
            """
            /// The persisted properties: what the schema makes of this class.
            \(raw: access)static var schemaMetadata: [SwiftData.Schema.PropertyMetadata] {
                [
                    \(raw: metadata.joined(separator: ",\n        "))
                ]
            }
            """,
        ]
    }

    /// The persisted properties of a class, and the problems that keep it from being a model.
    static func describe(_ classDecl: ClassDeclSyntax) -> (properties: [ModelProperty], problems: [Diagnostic]) {
        var properties: [ModelProperty] = []
        var problems: [Diagnostic] = []
        for member in classDecl.memberBlock.members {
            guard let variable = member.decl.as(VariableDeclSyntax.self) else { continue }
            let isStatic = variable.modifiers.contains { ["static", "class"].contains($0.name.text) }
            if isStatic { continue }
            if variable.hasAttribute("Transient") {
                // A transient stored property keeps its own storage: it needs a value for models
                // a context makes (`init(backingData:)` does not run the class's initializers).
                if variable.isStored, variable.bindings.contains(where: { $0.initializer == nil }) {
                    problems.append(Diagnostic(node: variable, message: ModelDiagnostic.transientWithoutDefault))
                }
                continue
            }
            if variable.bindingSpecifier.tokenKind == .keyword(.let) {
                problems.append(Diagnostic(node: variable, message: ModelDiagnostic.letProperty))
                continue
            }
            guard variable.isStored else { continue }
            guard let property = ModelProperty.parse(variable) else {
                problems.append(Diagnostic(node: variable, message: ModelDiagnostic.unreadable))
                continue
            }
            properties.append(property)
        }
        return (properties, problems)
    }
}

extension ModelMacro: ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard let classDecl = declaration.as(ClassDeclSyntax.self), describe(classDecl).problems.isEmpty else { return [] }
        let decl: DeclSyntax = "extension \(type.trimmed): SwiftData.PersistentModel {}"
        guard let ext = decl.as(ExtensionDeclSyntax.self) else { return [] }
        return [ext]
    }
}

/// `@_PersistedProperty`, added by `@Model` to each persisted stored property: accessors over
/// the model's backing data (an init accessor, so that the class's own initializer assigns the
/// property as it is written), and the empty stored peer the init accessor initializes.
public struct PersistedPropertyMacro: AccessorMacro, PeerMacro {
    public static func expansion(of node: AttributeSyntax, providingAccessorsOf declaration: some DeclSyntaxProtocol,
                                 in context: some MacroExpansionContext) throws -> [AccessorDeclSyntax] {
        guard let variable = declaration.as(VariableDeclSyntax.self), let property = ModelProperty.parse(variable) else { return [] }
        let name = property.name
        let key = ManagedMacro.stringLiteral(name)
        return [
            """
            @storageRestrictions(accesses: _$backingData, initializes: _$\(raw: name))
            init(initialValue) {
                _$backingData.setInitialValue(initialValue, forKey: \(raw: key))
                _$\(raw: name) = SwiftData._ModelNoValue()
            }
            """,
            """
            get {
                _$observationRegistrar.access(self, keyPath: \\.\(raw: name))
                return _$backingData.getValue(forKey: \(raw: key))
            }
            """,
            """
            set {
                _$observationRegistrar.withMutation(of: self, keyPath: \\.\(raw: name)) {
                    _$backingData.setValue(newValue, forKey: \(raw: key))
                }
            }
            """,
        ]
    }

    public static func expansion(of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
                                 in context: some MacroExpansionContext) throws -> [DeclSyntax] {
        guard let variable = declaration.as(VariableDeclSyntax.self), let property = ModelProperty.parse(variable) else { return [] }
        return ["private var _$\(raw: property.name): SwiftData._ModelNoValue"]
    }
}

/// A persisted stored property of a `@Model` class, as the macros see it.
struct ModelProperty {
    var name: String
    var typeText: String
    var initializer: ExprSyntax?
    /// `SwiftData.Schema.Attribute(…)` or `SwiftData.Schema.Relationship(…)` from the property's
    /// `@Attribute` / `@Relationship`, as source text.
    var options: String?

    /// A stored `var` with one name, a type annotation and no observers that is not `@Transient`;
    /// nil otherwise.
    static func parse(_ variable: VariableDeclSyntax) -> ModelProperty? {
        guard variable.bindingSpecifier.tokenKind == .keyword(.var), variable.isStored, !variable.hasAttribute("Transient"),
              !variable.modifiers.contains(where: { ["static", "class", "lazy", "override"].contains($0.name.text) }),
              variable.bindings.count == 1, let binding = variable.bindings.first,
              binding.accessorBlock == nil, let identifier = binding.pattern.as(IdentifierPatternSyntax.self),
              !identifier.identifier.text.hasPrefix("_$"),
              let type = binding.typeAnnotation?.type else { return nil }
        var options: String?
        for element in variable.attributes {
            guard case .attribute(let attribute) = element else { continue }
            let attributeName = attribute.attributeName.trimmedDescription
            guard ["Attribute", "Relationship"].contains(attributeName) else { continue }
            var arguments = ""
            if case .argumentList(let list)? = attribute.arguments { arguments = list.trimmedDescription }
            options = "SwiftData.Schema.\(attributeName)(\(arguments))"
        }
        return ModelProperty(name: identifier.identifier.text, typeText: type.trimmedDescription,
                             initializer: binding.initializer?.value, options: options)
    }
}

extension VariableDeclSyntax {
    /// Whether the declaration stores its value: no getter or setter (observers allowed).
    var isStored: Bool {
        bindings.allSatisfy { binding in
            guard let accessors = binding.accessorBlock else { return true }
            switch accessors.accessors {
            case .getter: return false
            case .accessors(let list):
                return !list.contains { ["get", "set", "_read", "_modify", "init"].contains($0.accessorSpecifier.text) }
            }
        }
    }
}

enum ModelDiagnostic: DiagnosticMessage {
    case notAClass
    case letProperty
    case unreadable
    case transientWithoutDefault

    var message: String {
        switch self {
        case .notAClass:
            "@Model applies to classes: declare 'final class Name'"
        case .letProperty:
            "Persisted properties must be 'var': contexts change them when models are fetched, merged and rolled back. Use 'var', or mark the property @Transient"
        case .unreadable:
            "A persisted property needs one name and a type annotation ('var name: String') and no observers (willSet, didSet), or mark it @Transient"
        case .transientWithoutDefault:
            "A @Transient stored property needs an initial value ('= …'): models a context reads from the store do not run the class's initializers"
        }
    }

    var diagnosticID: MessageID { MessageID(domain: "OpenCoreDataMacros", id: "model.\(self)") }
    var severity: DiagnosticSeverity { .error }
}
