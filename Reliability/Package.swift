// swift-tools-version: 6.1
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its folder, which is wherever the repository was cloned.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

// A separate package, so that library users never build it: the reliability harness kills,
// starves and races processes on one store, then checks the store with plain SQLite.
let package = Package(
    name: "OpenCoreDataReliability",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: "../"),
    ],
    targets: [
        // The checks read the files through SQLite directly, not through the library under test.
        .systemLibrary(name: "CSQLiteCheck", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // A VFS that fails the Nth read, write or sync, or reports a full disk (I/O faults).
        .target(name: "CFaultVFS", dependencies: ["CSQLiteCheck"]),
        .executableTarget(
            name: "reliability",
            dependencies: [.product(name: "OpenCoreData", package: root), .product(name: "OpenCoreDataPostgreSQL", package: root), "CSQLiteCheck", "CFaultVFS"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
