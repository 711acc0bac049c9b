import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@Managed`: makes a `ManagedObject` subclass a Core Data entity.
///
/// - member attributes: `@_ManagedAttribute` on every managed stored `var`;
/// - extension: conformance to `ManagedEntity` with the entity description (attributes,
///   defaults, options, key paths) and `fetchRequest()`.
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
        // The property's position among the class's managed properties: the accessors' slot hint.
        let managed = declaration.memberBlock.members.compactMap { $0.decl.as(VariableDeclSyntax.self).flatMap(ManagedProperty.parse) }
            .filter(\.isManageable)
        let index = managed.firstIndex { $0.name == property.name } ?? -1
        return ["@_ManagedAttribute(index: \(raw: index))"]
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
        guard let classDecl = declaration.as(ClassDeclSyntax.self) else {
            context.diagnose(Diagnostic(node: node, message: ManagedDiagnostic.notAClass))
            return []
        }
        let className = classDecl.name.text
        var attributes: [String] = []
        var constraints: [String] = []
        var valid = true
        for member in classDecl.memberBlock.members {
            guard let variable = member.decl.as(VariableDeclSyntax.self) else { continue }
            if variable.bindingSpecifier.tokenKind == .keyword(.let),
               !variable.modifiers.contains(where: { $0.name.text == "static" }), !variable.hasAttribute("Transient") {
                context.diagnose(Diagnostic(node: variable, message: ManagedDiagnostic.letProperty))
                valid = false
                continue
            }
            guard let property = ManagedProperty.parse(variable) else { continue }
            guard ManagedProperty.supportedTypes.contains(property.baseTypeName) else {
                context.diagnose(Diagnostic(node: variable, message: ManagedDiagnostic.unsupportedType(property.name, property.typeText)))
                valid = false
                continue
            }
            guard property.initializer != nil || property.isOptional else {
                context.diagnose(Diagnostic(node: variable, message: ManagedDiagnostic.missingDefault(property.name, property.typeText)))
                valid = false
                continue
            }
            let known = ["unique", "indexed", "preserveValueOnDeletion", "externalStorage"]
            for option in property.options where !known.contains(option) {
                context.diagnose(Diagnostic(node: variable, message: ManagedDiagnostic.unknownOption(option)))
                valid = false
            }
            let defaultText = property.initializer?.trimmedDescription ?? "nil"
            let options = property.options.filter { known.contains($0) && $0 != "unique" }.map { ".\($0)" }
            attributes.append(
                "OpenCoreData.AttributeDescription.managed(\(stringLiteral(property.name)), \\\(className).\(property.name), default: \(defaultText)\(options.isEmpty ? "" : ", options: [\(options.joined(separator: ", "))]"))")
            if property.options.contains("unique") { constraints.append("[\(stringLiteral(property.name))]") }
        }
        guard valid else { return [] }
        let access = classDecl.modifiers.contains { ["public", "open"].contains($0.name.text) } ? "public " : ""
        let constraintLine = constraints.isEmpty ? "" : "\n        entity.uniquenessConstraints = [\(constraints.joined(separator: ", "))]"
        let decl: DeclSyntax = """
        extension \(type.trimmed): OpenCoreData.ManagedEntity {
            \(raw: access)static var entityName: String { \(literal: className) }

            \(raw: access)static func makeEntityDescription() -> OpenCoreData.EntityDescription {
                let entity = OpenCoreData.EntityDescription(name: \(literal: className), managedObjectClass: \(raw: className).self, properties: [
                    \(raw: attributes.joined(separator: ",\n            "))
                ])\(raw: constraintLine)
                return entity
            }

            /// A fetch request for all \(raw: className) objects, as Xcode's generated `fetchRequest()`.
            \(raw: access)static func fetchRequest() -> OpenCoreData.FetchRequest<\(raw: className)> {
                OpenCoreData.FetchRequest<\(raw: className)>(entityName: \(literal: className))
            }
        }
        """
        guard let ext = decl.as(ExtensionDeclSyntax.self) else { return [] }
        return [ext]
    }

    private static func stringLiteral(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if character == "\\" || character == "\"" { escaped.append("\\") }
            escaped.append(character)
        }
        return "\"" + escaped + "\""
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
            "Managed attributes must be 'var': Core Data changes them when objects are fetched, merged and refreshed. Use 'var', or mark the property @Transient"
        case .unsupportedType(let name, let type):
            "'\(name)' has type '\(type)', which is not a supported attribute type. Use \(ManagedProperty.supportedList), or mark the property @Transient"
        case .missingDefault(let name, let type):
            "'\(name)' needs a default value ('var \(name): \(type) = …') or an optional type ('\(type)?'): new objects must start with a value"
        case .unknownOption(let option):
            "Unknown attribute option '.\(option)'; the options are .unique, .indexed, .preserveValueOnDeletion, .externalStorage"
        }
    }

    var diagnosticID: MessageID { MessageID(domain: "OpenCoreDataMacros", id: "\(self)") }
    var severity: DiagnosticSeverity { .error }
}
