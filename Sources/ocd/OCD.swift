import ArgumentParser

/// `ocd`: the OpenCoreData command-line tool.
@main
struct OCD: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ocd",
        abstract: "OpenCoreData: Apple's Core Data rebuilt in Swift 6 for Linux.",
        subcommands: [DemoCommand.self, QuakesCommand.self, InspectCommand.self, DumpCommand.self, MigrateCommand.self, CopyCommand.self, CodegenCommand.self]
    )
}
