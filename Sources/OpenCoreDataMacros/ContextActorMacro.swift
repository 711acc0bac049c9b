import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@ContextActor` on an actor: stored `managedObjectContext` and `contextExecutor`, an
/// initializer taking a context and one taking a container (a new background context), and the
/// `ContextActing` conformance, whose `unownedExecutor` is the context's queue.
public struct ContextActorMacro: MemberMacro, ExtensionMacro {
    public static func expansion(of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax,
                                 conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext) throws -> [DeclSyntax] {
        guard declaration.is(ActorDeclSyntax.self) else {
            context.diagnose(Diagnostic(node: node, message: ContextActorMessage.notAnActor))
            return []
        }
        return [
            "public nonisolated let managedObjectContext: ManagedObjectContext",
            "public nonisolated let contextExecutor: ContextExecutor",
            """
            /// An actor that runs on `context`'s queue.
            public init(context: ManagedObjectContext) {
                self.managedObjectContext = context
                self.contextExecutor = ContextExecutor(context: context)
            }
            """,
            """
            /// An actor on a new background context of `container`.
            public init(container: PersistentContainer) {
                self.init(context: container.newBackgroundContext())
            }
            """,
        ]
    }

    public static func expansion(of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
                                 providingExtensionsOf type: some TypeSyntaxProtocol,
                                 conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext) throws -> [ExtensionDeclSyntax] {
        guard declaration.is(ActorDeclSyntax.self), !protocols.isEmpty else { return [] }
        return [try ExtensionDeclSyntax("extension \(type.trimmed): ContextActing {}")]
    }
}

enum ContextActorMessage: String, DiagnosticMessage {
    case notAnActor

    var message: String { "@ContextActor applies to an actor: write `@ContextActor actor Importer { … }`." }
    var diagnosticID: MessageID { MessageID(domain: "OpenCoreDataMacros", id: rawValue) }
    var severity: DiagnosticSeverity { .error }
}
