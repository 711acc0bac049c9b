import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plugin that provides `@Managed` and its helper macros.
@main
struct OpenCoreDataMacrosPlugin: CompilerPlugin {
    let providingMacros: [Macro.Type] = [
        ManagedMacro.self,
        ManagedAttributeMacro.self,
        MarkerMacro.self,
        ContextActorMacro.self,
        ModelMacro.self,
        PersistedPropertyMacro.self,
        ModelActorMacro.self,
        UniqueMacro.self,
        IndexMacro.self,
    ]
}
