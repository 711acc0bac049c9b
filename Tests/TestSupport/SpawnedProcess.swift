import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a program and waits for it, spawned and reaped directly (`posix_spawn`, `waitpid`).
/// Foundation's `Process` learns that a child ended when a descriptor the child inherited closes,
/// and a server a script starts (`.ci/postgres-server`) keeps it open, so `waitUntilExit` would
/// never return. Used by the tests and, through a symbolic link, by the reliability harness.
package enum SpawnedProcess {
    /// Runs `arguments` (the first is the program's path), its standard output into the file at
    /// `outputPath` when given (else this process's); returns the wait status (0: exited with 0),
    /// or throws when it could not be started.
    package static func run(_ arguments: [String], outputPath: String? = nil) throws -> Int32 {
        var argv = arguments.map { strdup($0) }
        argv.append(nil)
        defer { for argument in argv { free(argument) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let outputPath { posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600) }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, arguments[0], &actions, nil, argv, environ)
        guard spawned == 0 else {
            throw NSError(domain: NSPOSIXErrorDomain, code: Int(spawned), userInfo: [NSLocalizedDescriptionKey: "could not run \(arguments[0])"])
        }
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 && errno == EINTR {}
        return status
    }
}
