import SwiftSyntax
import SwiftSyntaxMacros

/// `@_ManagedAttribute`, added by `@Managed` to each managed stored property: turns it into
/// accessors that read and write the object's managed storage.
public struct ManagedAttributeMacro: AccessorMacro {
    public static func expansion(of node: AttributeSyntax, providingAccessorsOf declaration: some DeclSyntaxProtocol,
                                 in context: some MacroExpansionContext) throws -> [AccessorDeclSyntax] {
        guard let variable = declaration.as(VariableDeclSyntax.self), let property = ManagedProperty.parse(variable) else { return [] }
        // The position among the class's managed properties (`@_ManagedAttribute(index:)`): a hint
        // for the slot lookup.
        var index = "-1"
        if case .argumentList(let arguments)? = node.arguments, let first = arguments.first {
            index = first.expression.trimmedDescription
        }
        var accessors: [AccessorDeclSyntax] = []
        switch property.kind {
        case .toOne(let destination):
            if property.initializer != nil { accessors.append("init(initialValue) {}") }
            accessors.append("get { self.managedToOne(forKey: \(literal: property.name), as: \(raw: destination).self) }")
            accessors.append("set { self.setManagedToOne(newValue, forKey: \(literal: property.name)) }")
            return accessors
        case .toMany(let destination):
            if property.initializer != nil { accessors.append("init(initialValue) {}") }
            accessors.append("get { self.managedToMany(forKey: \(literal: property.name), as: \(raw: destination).self) }")
            accessors.append("set { self.setManagedToMany(newValue, forKey: \(literal: property.name)) }")
            return accessors
        case .orderedToMany(let destination):
            if property.initializer != nil { accessors.append("init(initialValue) {}") }
            accessors.append("get { self.managedOrderedToMany(forKey: \(literal: property.name), as: \(raw: destination).self) }")
            accessors.append("set { self.setManagedOrderedToMany(newValue, forKey: \(literal: property.name)) }")
            return accessors
        case .transformable:
            // The transformer's value, as the property's type (`Any` takes it as it is).
            if property.initializer != nil { accessors.append("init(initialValue) {}") }
            let key = ManagedMacro.stringLiteral(property.name)
            let read = property.baseTypeName == "Any" ? "self.value(forKey: \(key))" : "self.value(forKey: \(key)) as? \(property.baseTypeName)"
            let fallback = property.isOptional ? "" : " ?? \(property.initializer?.trimmedDescription ?? "nil")"
            accessors.append("get { \(raw: read)\(raw: fallback) }")
            accessors.append("set { self.setValue(newValue, forKey: \(literal: property.name)) }")
            return accessors
        case .unsupported:
            return []
        case .attribute:
            break
        }
        let fallback = property.initializer?.trimmedDescription ?? (property.isOptional ? "nil" : nil)
        guard let fallback else { return [] }
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
