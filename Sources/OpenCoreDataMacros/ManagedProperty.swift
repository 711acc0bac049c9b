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
    /// `Folder!`: a mandatory to-one relationship.
    var isImplicitlyUnwrapped = false

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
        var unwrapped = false
        if let opt = binding.typeAnnotation?.type.as(OptionalTypeSyntax.self) {
            base = opt.wrappedType.trimmedDescription
            optional = true
        } else if let iuo = binding.typeAnnotation?.type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) {
            base = iuo.wrappedType.trimmedDescription
            unwrapped = true
        } else if let ident = binding.typeAnnotation?.type.as(IdentifierTypeSyntax.self), ident.name.text == "Optional",
                  let arg = ident.genericArgumentClause?.arguments.first {
            base = arg.argument.trimmedDescription
            optional = true
        }
        if base.hasPrefix("Foundation.") { base = String(base.dropFirst("Foundation.".count)) }
        if base.hasPrefix("Swift.") { base = String(base.dropFirst("Swift.".count)) }
        return ManagedProperty(
            name: identifier.identifier.text, typeText: typeText, baseTypeName: base, isOptional: optional,
            initializer: binding.initializer?.value, options: decl.attributeOptions("Attribute"), declaration: decl,
            isImplicitlyUnwrapped: unwrapped)
    }
}

extension ManagedProperty {
    /// What kind of managed property a declaration is.
    enum Kind: Equatable {
        case attribute
        /// `@Attribute(.transformable(by:))`: any type, stored through a value transformer.
        case transformable
        /// `Folder?` (optional) or `Folder!` (mandatory).
        case toOne(destination: String)
        /// `Set<Memo>`.
        case toMany(destination: String)
        /// `[Memo]`.
        case orderedToMany(destination: String)
        /// A type that is neither an attribute type nor a relationship.
        case unsupported
    }

    var kind: Kind {
        if options.contains("transformable") { return .transformable }
        if Self.supportedTypes.contains(baseTypeName) { return .attribute }
        let type = declaration.bindings.first?.typeAnnotation?.type
        if !isOptional && !isImplicitlyUnwrapped {
            if let ident = type?.as(IdentifierTypeSyntax.self), ident.name.text == "Set",
               let element = ident.genericArgumentClause?.arguments.first?.argument.trimmedDescription, Self.isEntityName(element) {
                return .toMany(destination: element)
            }
            if let array = type?.as(ArrayTypeSyntax.self), Self.isEntityName(array.element.trimmedDescription) {
                return .orderedToMany(destination: array.element.trimmedDescription)
            }
            return .unsupported
        }
        return Self.isEntityName(baseTypeName) ? .toOne(destination: baseTypeName) : .unsupported
    }

    /// Whether a type name can be a managed class: a (possibly qualified) identifier that is not
    /// one of the attribute types or a standard collection.
    private static func isEntityName(_ name: String) -> Bool {
        let last = name.split(separator: ".").last.map(String.init) ?? name
        guard let first = last.first, first.isLetter || first == "_" else { return false }
        let notEntities: Set<String> = supportedTypes.union(["Any", "AnyObject", "Array", "Set", "Dictionary", "Optional", "Character", "UInt", "UInt8", "UInt16", "UInt32", "UInt64", "Int8"])
        return !notEntities.contains(last) && last.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
    }

    /// Whether `@Managed` turns the property into a managed attribute or relationship.
    var isManageable: Bool {
        switch kind {
        case .attribute, .transformable: initializer != nil || isOptional
        case .toOne: true
        case .toMany, .orderedToMany: true
        case .unsupported: false
        }
    }

    /// The labeled arguments of `@Relationship(...)`, as source text by label.
    var relationshipArguments: [String: String] {
        for element in declaration.attributes {
            guard case .attribute(let attribute) = element, attribute.attributeName.trimmedDescription == "Relationship",
                  case .argumentList(let arguments)? = attribute.arguments else { continue }
            var result: [String: String] = [:]
            for argument in arguments {
                result[argument.label?.text ?? ""] = argument.expression.trimmedDescription
            }
            return result
        }
        return [:]
    }
}

extension VariableDeclSyntax {
    func hasAttribute(_ name: String) -> Bool {
        attributes.contains { element in
            guard case .attribute(let attribute) = element else { return false }
            return attribute.attributeName.trimmedDescription == name
        }
    }

    /// The source text of the arguments of an attribute such as `@Attribute(.unique, .minimum(1))`.
    func attributeArguments(_ name: String) -> [String] {
        for element in attributes {
            guard case .attribute(let attribute) = element, attribute.attributeName.trimmedDescription == name,
                  case .argumentList(let arguments)? = attribute.arguments else { continue }
            return arguments.map(\.expression.trimmedDescription)
        }
        return []
    }

    /// The names of the `.option` arguments of an attribute such as `@Attribute(.unique)`.
    func attributeOptions(_ name: String) -> [String] {
        for element in attributes {
            guard case .attribute(let attribute) = element, attribute.attributeName.trimmedDescription == name,
                  case .argumentList(let arguments)? = attribute.arguments else { continue }
            return arguments.compactMap { argument in
                // `.indexed`, or `.minimum(1)`: the option's name.
                let expression = argument.expression.as(FunctionCallExprSyntax.self)?.calledExpression ?? argument.expression
                return expression.as(MemberAccessExprSyntax.self)?.declName.baseName.text
            }
        }
        return []
    }
}

extension ClassDeclSyntax {
    /// The access the members a macro adds need: `public ` for a public or open class.
    var memberAccess: String {
        modifiers.contains { ["public", "open"].contains($0.name.text) } ? "public " : ""
    }
}
