import SwiftSyntax

/// A stored property of a `@Managed` class, as the macros see it.
struct ManagedProperty {
    var name: String
    /// The type as written (`Int32`, `String?`).
    var typeText: String
    /// The type without optional sugar (`String` for `String?`).
    var baseTypeName: String
    var isOptional: Bool
    var initializer: ExprSyntax?
    var options: [String]
    var declaration: VariableDeclSyntax

    /// The Swift types an attribute may have.
    static let supportedTypes: Set<String> = [
        "Int16", "Int32", "Int64", "Int", "Double", "Float", "Bool", "String",
        "Date", "Data", "UUID", "URL", "Decimal",
    ]
    static let supportedList = "Int16, Int32, Int64, Int, Double, Float, Bool, String, Date, Data, UUID, URL, Decimal (or an optional of one)"

    /// Reads a `var` declaration; `nil` for declarations that are not managed (static,
    /// computed, `@Transient`, `let`).
    static func parse(_ decl: VariableDeclSyntax) -> ManagedProperty? {
        guard decl.bindingSpecifier.tokenKind == .keyword(.var) else { return nil }
        guard !decl.modifiers.contains(where: { ["static", "class", "lazy", "override"].contains($0.name.text) }) else { return nil }
        guard !decl.hasAttribute("Transient") else { return nil }
        guard decl.bindings.count == 1, let binding = decl.bindings.first,
              let identifier = binding.pattern.as(IdentifierPatternSyntax.self) else { return nil }
        if let accessors = binding.accessorBlock {
            // Computed properties (get/set or a bare getter) are not attributes; observers are.
            switch accessors.accessors {
            case .getter: return nil
            case .accessors(let list):
                if list.contains(where: { ["get", "set", "_read", "_modify", "init"].contains($0.accessorSpecifier.text) }) { return nil }
            }
        }
        let typeText = binding.typeAnnotation?.type.trimmedDescription ?? ""
        var base = typeText
        var optional = false
        if let opt = binding.typeAnnotation?.type.as(OptionalTypeSyntax.self) {
            base = opt.wrappedType.trimmedDescription
            optional = true
        } else if let ident = binding.typeAnnotation?.type.as(IdentifierTypeSyntax.self), ident.name.text == "Optional",
                  let arg = ident.genericArgumentClause?.arguments.first {
            base = arg.argument.trimmedDescription
            optional = true
        }
        if base.hasPrefix("Foundation.") { base = String(base.dropFirst("Foundation.".count)) }
        if base.hasPrefix("Swift.") { base = String(base.dropFirst("Swift.".count)) }
        return ManagedProperty(
            name: identifier.identifier.text, typeText: typeText, baseTypeName: base, isOptional: optional,
            initializer: binding.initializer?.value, options: decl.attributeOptions("Attribute"), declaration: decl)
    }
}

extension ManagedProperty {
    /// Whether `@Managed` turns the property into a managed attribute.
    var isManageable: Bool {
        Self.supportedTypes.contains(baseTypeName) && (initializer != nil || isOptional)
    }
}

extension VariableDeclSyntax {
    func hasAttribute(_ name: String) -> Bool {
        attributes.contains { element in
            guard case .attribute(let attribute) = element else { return false }
            return attribute.attributeName.trimmedDescription == name
        }
    }

    /// The `.option` arguments of an attribute such as `@Attribute(.unique)`.
    func attributeOptions(_ name: String) -> [String] {
        for element in attributes {
            guard case .attribute(let attribute) = element, attribute.attributeName.trimmedDescription == name,
                  case .argumentList(let arguments)? = attribute.arguments else { continue }
            return arguments.compactMap { $0.expression.as(MemberAccessExprSyntax.self)?.declName.baseName.text }
        }
        return []
    }
}
