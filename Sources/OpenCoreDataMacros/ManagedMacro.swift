import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@Managed`: makes a `ManagedObject` subclass a Core Data entity.
///
/// - member attributes: `@_ManagedAttribute` on every managed stored `var`;
/// - members: `entityName` and `makeEntityDescription()` (attributes, relationships, defaults,
///   options, key paths; overrides in a subclass of another managed class);
/// - extension: conformance to `ManagedEntity` (root classes only; subclasses inherit it).
public struct ManagedMacro {}

extension ManagedMacro: MemberAttributeMacro {
    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingAttributesFor member: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AttributeSyntax] {
        guard declaration.is(ClassDeclSyntax.self), let variable = member.as(VariableDeclSyntax.self),
              let property = ManagedProperty.parse(variable), property.isManageable else { return [] }
        // An attribute's position among the class's attributes: the accessors' slot hint.
        let attributes = declaration.memberBlock.members.compactMap { $0.decl.as(VariableDeclSyntax.self).flatMap(ManagedProperty.parse) }
            .filter { $0.isManageable && $0.kind == .attribute }
        let index = attributes.firstIndex { $0.name == property.name } ?? -1
        return ["@_ManagedAttribute(index: \(raw: index))"]
    }
}

extension ManagedMacro: MemberMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let classDecl = declaration.as(ClassDeclSyntax.self) else {
            context.diagnose(Diagnostic(node: node, message: ManagedDiagnostic.notAClass))
            return []
        }
        let (properties, constraints, problems) = describe(classDecl)
        for problem in problems { context.diagnose(problem) }
        guard problems.isEmpty else { return [] }
        let className = classDecl.name.text
        let access = classDecl.memberAccess
        let superclass = managedSuperclass(of: classDecl)
        let modifiers = access + (superclass == nil ? "" : "override ") + "class"
        // `@Managed(abstract:entityName:unique:hashModifier:)`, as source text by label.
        var given: [String: String] = [:]
        if case .argumentList(let arguments)? = node.arguments {
            for argument in arguments { given[argument.label?.text ?? ""] = argument.expression.trimmedDescription }
        }
        let entityName = given["entityName"] ?? "\"\(className)\""
        var setup = ""
        if !constraints.isEmpty || given["unique"] != nil {
            let own = constraints.isEmpty ? nil : "[\(constraints.joined(separator: ", "))]"
            setup += "\n    entity.uniquenessConstraints = \([own, given["unique"]].compactMap { $0 }.joined(separator: " + "))"
        }
        if let superclass { setup += "\n    entity.superentityClass = \(superclass).self" }
        if given["abstract"] == "true" { setup += "\n    entity.isAbstract = true" }
        if let modifier = given["hashModifier"] { setup += "\n    entity.versionHashModifier = \(modifier)" }
        return [
            """
            /// The entity's name, as in the model.
            \(raw: modifiers) var entityName: String { \(raw: entityName) }
            """,
            """
            /// A new description of the entity of this class.
            \(raw: modifiers) func makeEntityDescription() -> OpenCoreData.EntityDescription {
                let entity = OpenCoreData.EntityDescription(name: \(raw: entityName), managedObjectClass: \(raw: className).self, properties: [
                    \(raw: properties.joined(separator: ",\n        "))
                ])\(raw: setup)
                return entity
            }
            """,
        ]
    }

    /// The property descriptions and uniqueness constraints of a class, and the problems that
    /// keep properties from being managed.
    static func describe(_ classDecl: ClassDeclSyntax) -> (properties: [String], constraints: [String], problems: [Diagnostic]) {
        let className = classDecl.name.text
        var properties: [String] = []
        var constraints: [String] = []
        var problems: [Diagnostic] = []
        for member in classDecl.memberBlock.members {
            guard let variable = member.decl.as(VariableDeclSyntax.self) else { continue }
            if variable.bindingSpecifier.tokenKind == .keyword(.let),
               !variable.modifiers.contains(where: { $0.name.text == "static" }), !variable.hasAttribute("Transient") {
                problems.append(Diagnostic(node: variable, message: ManagedDiagnostic.letProperty))
                continue
            }
            guard let property = ManagedProperty.parse(variable) else { continue }
            switch property.kind {
            case .unsupported:
                problems.append(Diagnostic(node: variable, message: ManagedDiagnostic.unsupportedType(property.name, property.typeText)))
                continue
            case .toOne(let destination), .toMany(let destination), .orderedToMany(let destination):
                properties.append(relationship(property, destination: destination, className: className))
                continue
            case .attribute, .transformable:
                break
            }
            guard property.initializer != nil || property.isOptional else {
                problems.append(Diagnostic(node: variable, message: ManagedDiagnostic.missingDefault(property.name, property.typeText)))
                continue
            }
            let known = ["unique", "indexed", "preserveValueOnDeletion", "externalStorage", "minimum", "maximum", "earliest", "latest", "pattern",
                         "required", "optional", "hashModifier", "transformable", "derived"]
            for option in property.options where !known.contains(option) {
                problems.append(Diagnostic(node: variable, message: ManagedDiagnostic.unknownOption(option)))
            }
            let defaultText = property.initializer?.trimmedDescription ?? "nil"
            let options = zip(property.options, variable.attributeArguments("Attribute")).filter { known.contains($0.0) && $0.0 != "unique" }.map(\.1)
            // A Transformable attribute takes its optionality from the declaration (its type is any
            // type); every other attribute from its `ManagedAttributeValue` type.
            let (function, third) = property.kind == .transformable
                ? ("managedTransformable", "isOptional: \(property.isOptional)") : ("managed", "default: \(defaultText)")
            properties.append(
                """
                    OpenCoreData.AttributeDescription.\(function)(\(stringLiteral(property.name)), \
                    \\\(className).\(property.name), \
                    \(third)\(options.isEmpty ? "" : ", options: [\(options.joined(separator: ", "))]"))
                    """)
            if property.options.contains("unique") { constraints.append("[\(stringLiteral(property.name))]") }
        }
        return (properties, constraints, problems)
    }

    private static func relationship(_ property: ManagedProperty, destination: String, className: String) -> String {
        var arguments = [
            stringLiteral(property.name), "\\\(className).\(property.name)", "destination: \(destination).self",
        ]
        switch property.kind {
        case .toMany: arguments.append("toMany: true")
        case .orderedToMany: arguments += ["toMany: true", "isOrdered: true"]
        default: break
        }
        let given = property.relationshipArguments
        if property.isImplicitlyUnwrapped && given["isOptional"] == nil { arguments.append("isOptional: false") }
        for label in ["isOptional", "deleteRule", "inverse", "minimumCount", "maximumCount", "hashModifier"] {
            if let value = given[label] { arguments.append("\(label): \(value)") }
        }
        return "OpenCoreData.RelationshipDescription.managed(\(arguments.joined(separator: ", ")))"
    }

    /// The superclass when it is another managed class (not `ManagedObject` itself).
    static func managedSuperclass(of classDecl: ClassDeclSyntax) -> String? {
        guard let first = classDecl.inheritanceClause?.inheritedTypes.first?.type.trimmedDescription else { return nil }
        return ["ManagedObject", "OpenCoreData.ManagedObject", "NSManagedObject", "OpenCoreData.NSManagedObject"].contains(first) ? nil : first
    }

    static func stringLiteral(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if character == "\\" || character == "\"" { escaped.append("\\") }
            escaped.append(character)
        }
        return "\"" + escaped + "\""
    }
}

extension ManagedMacro: ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        // A subclass of a managed class inherits the conformance (and overrides the members).
        // Nothing when the members could not be made: the member expansion reports why.
        guard let classDecl = declaration.as(ClassDeclSyntax.self), managedSuperclass(of: classDecl) == nil,
              describe(classDecl).problems.isEmpty else { return [] }
        let decl: DeclSyntax = "extension \(type.trimmed): OpenCoreData.ManagedEntity {}"
        guard let ext = decl.as(ExtensionDeclSyntax.self) else { return [] }
        return [ext]
    }
}

enum ManagedDiagnostic: DiagnosticMessage {
    case notAClass
    case letProperty
    case unsupportedType(String, String)
    case missingDefault(String, String)
    case unknownOption(String)

    var message: String {
        switch self {
        case .notAClass:
            "@Managed applies to classes: declare 'final class Name: ManagedObject'"
        case .letProperty:
            """
                Managed attributes must be 'var': Core Data changes them when objects are fetched, merged and \
                refreshed. Use 'var', or mark the property @Transient
                """
        case .unsupportedType(let name, let type):
            """
                '\(name)' has type '\(type)', which is not a supported attribute type. Use \
                \(ManagedProperty.supportedList), or mark the property @Transient
                """
        case .missingDefault(let name, let type):
            "'\(name)' needs a default value ('var \(name): \(type) = …') or an optional type ('\(type)?'): new objects must start with a value"
        case .unknownOption(let option):
            """
                Unknown attribute option '.\(option)'; the options are .unique, .indexed, \
                .preserveValueOnDeletion, .externalStorage, .minimum(_:), .maximum(_:), .earliest(_:), \
                .latest(_:), .pattern(_:), .required, .optional, .hashModifier(_:), .transformable(by:), .derived(_:)
                """
        }
    }

    var diagnosticID: MessageID { MessageID(domain: "OpenCoreDataMacros", id: "\(self)") }
    var severity: DiagnosticSeverity { .error }
}
