// swift-tools-version: 6.1
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its folder, which is wherever the repository was cloned.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

// A separate package, so that library users never build it: OpenCoreData measured against raw
// SQLite and GRDB in the same run.
let package = Package(
    name: "OpenCoreDataBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: "../"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        .systemLibrary(name: "CSQLitePeer", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .executableTarget(
            name: "Compare",
            dependencies: [.product(name: "OpenCoreData", package: root), "CSQLitePeer", .product(name: "GRDB", package: "GRDB.swift")],
        ),
    ],
    swiftLanguageModes: [.v6]
)
