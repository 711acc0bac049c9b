import ArgumentParser
import Foundation
import OpenCoreData
import OpenCoreDataCore

/// `ocd codegen <model> --output <folder>`: `@Managed` classes for a model file, one file per
/// entity, with the model's version hashes (what Xcode's code generation gives an app on Apple
/// platforms; here the classes are the model, and no model file is needed at run time).
struct CodegenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "codegen",
        abstract: "Write @Managed classes for a model file (.xcdatamodeld, .xcdatamodel, .momd, .mom), one file per entity.",
        discussion: """
            The classes declare Xcode's property types (String? for strings, Int16 for scalar numbers, \
            Set<Tag> for to-many relationships) and keep the model file's version hashes, so that \
            ManagedObjectModel(Note.self, Folder.self, …) opens stores written with the model file. \
            Run it again after changing the model; existing files of the same names are replaced.
            """
    )

    @Argument(help: "The model file: an .xcdatamodeld (its current version), .xcdatamodel, .momd or .mom.")
    var model: String

    @Option(name: .long, help: "The folder to write the Swift files into (created when missing).")
    var output: String

    @Option(name: .long, help: "The version of an .xcdatamodeld or .momd to use instead of its current one (e.g. \"Model 2\").")
    var version: String?

    @Option(name: .long, help: "Prefixed to every class name (entity names stay): two models' classes in one module.")
    var classPrefix: String = ""

    @Option(name: .long, help: "The module the files import: OpenCoreData (default) or CoreData.")
    var module: String = "OpenCoreData"

    func run() throws {
        let url = URL(fileURLWithPath: model)
        let loaded = try ManagedObjectModel(contentsOf: url, version: version)
        var generator = ManagedClassSource()
        generator.classPrefix = classPrefix
        generator.moduleName = module
        generator.sourceName = url.lastPathComponent + (version.map { " (version \($0))" } ?? "")
        let files = try generator.files(for: loaded)
        let folder = URL(fileURLWithPath: output, isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for file in files {
            try Data(file.text.utf8).write(to: folder.appendingPathComponent(file.name), options: .atomic)
            print("wrote \(folder.appendingPathComponent(file.name).path)")
        }
    }
}
