import Foundation

/// The repository's `.ci/postgres-server`, run as a child process (`SpawnedProcess`): throwaway
/// PostgreSQL clusters for the tests and, through a symbolic link, the reliability harness.
package struct PostgreSQLServerScript: Sendable {
    /// The script's path.
    package let path: String

    package init(path: String) {
        self.path = path
    }

    /// Runs the script with `arguments` (a command, a folder, …) and returns what it printed,
    /// trimmed. The output goes to a file, not a pipe: a server the script starts keeps whatever
    /// descriptors it inherits, and a pipe would never reach its end.
    @discardableResult
    package func run(_ arguments: [String]) throws -> String {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-server-script-\(UUID().uuidString).out").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        let status = try SpawnedProcess.run(["/bin/bash", path] + arguments, outputPath: output)
        guard status == 0 else { throw ScriptError(".ci/postgres-server \(arguments.joined(separator: " ")) failed (wait status \(status))") }
        return ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    package struct ScriptError: Error, CustomStringConvertible {
        package let description: String
        init(_ description: String) { self.description = description }
    }
}

/// A primary and a hot standby of its own in temporary folders, for what the shared test server
/// must not go through: the primary crashed, the standby promoted (a failover).
package struct PostgreSQLServerPair: Sendable {
    package let script: PostgreSQLServerScript
    private let primaryFolder = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-primary-\(UUID().uuidString)").path
    private let standbyFolder = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-standby-\(UUID().uuidString)").path

    package init(script: PostgreSQLServerScript) {
        self.script = script
    }

    /// Starts the primary; returns its URL.
    package func start() throws -> URL {
        let printed = try script.run(["start", primaryFolder])
        guard let url = URL(string: printed), url.port != nil else {
            throw PostgreSQLServerScript.ScriptError("the primary printed no URL: \(printed)")
        }
        return url
    }

    /// Starts the standby, streaming from the primary; returns its host:port.
    package func startStandby() throws -> String { try script.run(["standby", standbyFolder, primaryFolder]) }

    /// Makes the primary acknowledge a COMMIT only once the standby has it (after the standby's
    /// copy was taken: the promoted standby has no standby of its own to wait for).
    package func makeSynchronous() throws { try script.run(["synchronous", primaryFolder]) }

    package func crashPrimary() throws { try script.run(["crash", primaryFolder]) }
    package func promoteStandby() throws { try script.run(["promote", standbyFolder]) }

    /// Stops both servers and removes their folders.
    package func stop() {
        _ = try? script.run(["stop", standbyFolder])
        _ = try? script.run(["stop", primaryFolder])
        try? FileManager.default.removeItem(atPath: primaryFolder)
        try? FileManager.default.removeItem(atPath: standbyFolder)
    }
}
