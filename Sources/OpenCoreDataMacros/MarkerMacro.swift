import SwiftSyntax
import SwiftSyntaxMacros

/// `@Transient` and `@Attribute(…)`: markers read by `@Managed`; they expand to nothing.
public struct MarkerMacro: PeerMacro {
    public static func expansion(of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
                                 in context: some MacroExpansionContext) throws -> [DeclSyntax] {
        []
    }
}
