import OpenCoreDataMacros
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosGenericTestSupport
import Testing
import TestSupport

@Suite(.dedicatedThread) struct ContextActorMacroTests {
    private func assertExpansion(_ source: String, expandedSource: String, diagnostics: [DiagnosticSpec] = [], sourceLocation: SourceLocation = #_sourceLocation) {
        let specs: [String: MacroSpec] = ["ContextActor": MacroSpec(type: ContextActorMacro.self, conformances: ["ContextActing"])]
        assertMacroExpansion(source, expandedSource: expandedSource, diagnostics: diagnostics, macroSpecs: specs, indentationWidth: .spaces(4)) { failure in
            Issue.record(Comment(rawValue: failure.message), sourceLocation: sourceLocation)
        }
    }

    @Test func addsTheContextTheExecutorAndTheInitializers() {
        assertExpansion(
            """
            @ContextActor
            actor Importer {
                func work() {}
            }
            """,
            expandedSource: """
            actor Importer {
                func work() {}

                public nonisolated let managedObjectContext: ManagedObjectContext

                public nonisolated let contextExecutor: ContextExecutor

                /// An actor that runs on `context`'s queue.
                public init(context: ManagedObjectContext) {
                    self.managedObjectContext = context
                    self.contextExecutor = ContextExecutor(context: context)
                }

                /// An actor on a new background context of `container`.
                public init(container: PersistentContainer) {
                    self.init(context: container.newBackgroundContext())
                }
            }

            extension Importer: ContextActing {
            }
            """)
    }

    @Test func aClassIsRefused() {
        assertExpansion(
            """
            @ContextActor
            final class Importer {}
            """,
            expandedSource: """
            final class Importer {}
            """,
            diagnostics: [DiagnosticSpec(message: "@ContextActor applies to an actor: write `@ContextActor actor Importer { … }`.", line: 1, column: 1)])
    }
}
