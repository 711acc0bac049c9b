import SwiftSyntax
import SwiftSyntaxMacros

/// `@_ManagedAttribute`, added by `@Managed` to each managed stored property: turns it into
/// accessors that read and write the object's managed storage.
public struct ManagedAttributeMacro: AccessorMacro {
    public static func expansion(of node: AttributeSyntax, providingAccessorsOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext) throws -> [AccessorDeclSyntax] {
        guard let variable = declaration.as(VariableDeclSyntax.self), let property = ManagedProperty.parse(variable) else { return [] }
        // The position among the class's managed properties (`@_ManagedAttribute(index:)`): a hint
        // for the slot lookup.
        var index = "-1"
        if case .argumentList(let arguments)? = node.arguments, let first = arguments.first {
            index = first.expression.trimmedDescription
        }
        let fallback = property.initializer?.trimmedDescription ?? (property.isOptional ? "nil" : nil)
        guard let fallback else { return [] }
        var accessors: [AccessorDeclSyntax] = []
        if property.initializer != nil {
            // The initial value lives in the entity description (the default of new objects);
            // the accessor only lets the declaration keep its `= value`.
            accessors.append("init(initialValue) {}")
        }
        accessors.append("get { self.managedAttributeValue(forKey: \(literal: property.name), index: \(raw: index), default: \(raw: fallback)) }")
        accessors.append("set { self.setManagedAttributeValue(newValue, forKey: \(literal: property.name), index: \(raw: index)) }")
        return accessors
    }
}
