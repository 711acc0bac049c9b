import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// SwiftData's `@ModelActor` (module `SwiftData`): an actor whose methods run on a model
/// context's queue. Adds `modelExecutor`, `modelContainer` and `init(modelContainer:)` (a new
/// context of the container), and the `ModelActor` conformance, whose `unownedExecutor` is the
/// context's queue.
public struct ModelActorMacro: MemberMacro, ExtensionMacro {
    public static func expansion(of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax,
                                 conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext) throws -> [DeclSyntax] {
        guard declaration.is(ActorDeclSyntax.self) else {
            context.diagnose(Diagnostic(node: node, message: ModelActorMessage.notAnActor))
            return []
        }
        return [
            "public nonisolated let modelExecutor: any SwiftData.ModelExecutor",
            "public nonisolated let modelContainer: SwiftData.ModelContainer",
            """
            /// An actor on a new context of `modelContainer`, running on that context's queue.
            public init(modelContainer: SwiftData.ModelContainer) {
                self.modelExecutor = SwiftData.DefaultSerialModelExecutor(modelContext: SwiftData.ModelContext(modelContainer))
                self.modelContainer = modelContainer
            }
            """,
        ]
    }

    public static func expansion(of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
                                 providingExtensionsOf type: some TypeSyntaxProtocol,
                                 conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext) throws -> [ExtensionDeclSyntax] {
        guard declaration.is(ActorDeclSyntax.self), !protocols.isEmpty else { return [] }
        return [try ExtensionDeclSyntax("extension \(type.trimmed): SwiftData.ModelActor {}")]
    }
}

enum ModelActorMessage: String, DiagnosticMessage {
    case notAnActor

    var message: String { "@ModelActor applies to an actor: write `@ModelActor actor Importer { … }`." }
    var diagnosticID: MessageID { MessageID(domain: "OpenCoreDataMacros", id: "modelActor.\(rawValue)") }
    var severity: DiagnosticSeverity { .error }
}
