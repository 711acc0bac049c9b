import Foundation
import OpenCoreDataCore

// `ocd-codegen MODEL --output FILE [--module NAME] [--class-prefix PREFIX]`: every entity's
// `@Managed` class in one file. The build-tool plugin `ModelCodegen` runs it (`ocd codegen`
// writes one file per entity instead); it needs only the core library, so a package using the
// plugin builds no database client for it.

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("ocd-codegen: \(message)\n".utf8))
    exit(1)
}

var arguments = Array(CommandLine.arguments.dropFirst())
var options: [String: String] = [:]
var model: String?
while !arguments.isEmpty {
    let argument = arguments.removeFirst()
    if ["--output", "--module", "--class-prefix"].contains(argument) {
        guard !arguments.isEmpty else { fail("\(argument) needs a value") }
        options[argument] = arguments.removeFirst()
    } else if model == nil, !argument.hasPrefix("--") {
        model = argument
    } else {
        fail("unexpected argument \(argument); usage: ocd-codegen MODEL --output FILE [--module NAME] [--class-prefix PREFIX]")
    }
}
guard let model, let output = options["--output"] else {
    fail("usage: ocd-codegen MODEL --output FILE [--module NAME] [--class-prefix PREFIX]")
}
do {
    let url = URL(fileURLWithPath: model)
    var generator = ManagedClassSource()
    generator.moduleName = options["--module"] ?? "OpenCoreData"
    generator.classPrefix = options["--class-prefix"] ?? ""
    generator.sourceName = url.lastPathComponent
    let outputURL = URL(fileURLWithPath: output)
    let file = try generator.file(named: outputURL.lastPathComponent, for: ManagedObjectModel(contentsOf: url, version: nil))
    try Data(file.text.utf8).write(to: outputURL, options: .atomic)
} catch let error as CoreDataError {
    fail("\(model): \(error.message)")
} catch {
    fail("\(model): \(error)")
}
