import Foundation
import PackagePlugin

/// Writes the `@Managed` classes of every Core Data model file in a target (`.xcdatamodeld`,
/// `.xcdatamodel`) on each build, as Xcode's code generation does for an app: one Swift file per
/// model, `<Model>+Classes.swift`, compiled with the target. The classes keep the model file's
/// version hashes (see `ocd codegen` in docs/Porting.md).
///
/// ```swift
/// .target(name: "App", dependencies: [.product(name: "OpenCoreData", package: "OpenCoreData")],
///         exclude: ["Model.xcdatamodeld"],
///         plugins: [.plugin(name: "ModelCodegen", package: "OpenCoreData")])
/// ```
@main
struct ModelCodegen: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let tool = try context.tool(named: "ocd-codegen")
        return Self.models(under: target.directoryURL).map { model in
            let name = model.deletingPathExtension().lastPathComponent
            let output = context.pluginWorkDirectoryURL.appendingPathComponent("\(name)+Classes.swift")
            return .buildCommand(
                displayName: "Generating the @Managed classes of \(model.lastPathComponent)",
                executable: tool.url,
                arguments: [model.path, "--output", output.path],
                inputFiles: Self.files(under: model),
                outputFiles: [output])
        }
    }

    /// The model files in a target's folder: each `.xcdatamodeld`, and each `.xcdatamodel` that is
    /// not a version inside one.
    static func models(under directory: URL) -> [URL] {
        guard let enumerator = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil) else { return [] }
        var found: [URL] = []
        for case let url as URL in enumerator {
            switch url.pathExtension {
            case "xcdatamodeld":
                found.append(url)
                enumerator.skipDescendants()
            case "xcdatamodel":
                found.append(url)
                enumerator.skipDescendants()
            default:
                continue
            }
        }
        return found.sorted { $0.path < $1.path }
    }

    /// The files of a model bundle: a change to any of them runs the generator again.
    static func files(under model: URL) -> [URL] {
        guard let enumerator = FileManager.default.enumerator(at: model, includingPropertiesForKeys: [.isRegularFileKey]) else { return [] }
        return enumerator.compactMap { $0 as? URL }.filter { (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true }
    }
}
