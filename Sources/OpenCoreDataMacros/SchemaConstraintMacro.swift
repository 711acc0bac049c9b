import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// SwiftData's `#Unique<Model>([\.a], [\.b, \.c])` and `#Index<Model>([\.a], [\.a, \.b])` in a
/// `@Model` class: a static member listing the key paths, which the schema turns into
/// uniqueness constraints and fetch indexes.
public struct UniqueMacro: DeclarationMacro {
    public static func expansion(of node: some FreestandingMacroExpansionSyntax,
                                 in context: some MacroExpansionContext) throws -> [DeclSyntax] {
        [SchemaConstraintMacro.member(named: "_$uniquenessConstraints", for: node)]
    }
}

/// See ``UniqueMacro``.
public struct IndexMacro: DeclarationMacro {
    public static func expansion(of node: some FreestandingMacroExpansionSyntax,
                                 in context: some MacroExpansionContext) throws -> [DeclSyntax] {
        [SchemaConstraintMacro.member(named: "_$indexes", for: node)]
    }
}

enum SchemaConstraintMacro {
    /// `static var <name>: [[AnyKeyPath]]`, the arguments typed by the macro's generic argument
    /// (`[\.a]` is a `[PartialKeyPath<Model>]`).
    static func member(named name: String, for node: some FreestandingMacroExpansionSyntax) -> DeclSyntax {
        let model = node.genericArgumentClause?.arguments.first?.argument.trimmedDescription ?? "Self"
        let lists = node.arguments.map(\.expression.trimmedDescription).joined(separator: ", ")
        return """
            static var \(raw: name): [[AnyKeyPath]] {
                let lists: [[PartialKeyPath<\(raw: model)>]] = [\(raw: lists)]
                return lists
            }
            """
    }
}
