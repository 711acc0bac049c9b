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
    // The PostgreSQL scenarios (`Compare --postgres`) link postgres-nio, SwiftNIO and BoringSSL,
    // a quarter of an hour of release build on two cores: only with this trait
    // (`swift build --traits PostgreSQL`; Benchmarks/compare turns it on for --postgres), so the
    // SQLite figures build in a few minutes.
    traits: [.trait(name: "PostgreSQL", description: "The PostgreSQL store's scenarios (Compare --postgres)")],
    dependencies: [
        .package(path: "../"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.65.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.5.3"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .systemLibrary(name: "CSQLitePeer", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .executableTarget(
            name: "Compare",
            dependencies: [.product(name: "OpenCoreData", package: root), "CSQLitePeer", .product(name: "GRDB", package: "GRDB.swift"),
                           // The SwiftData layer's scenario (Compare --swiftdata).
                           .product(name: "SwiftData", package: root, condition: .when(platforms: [.linux])),
                           .product(name: "OpenCoreDataPostgreSQL", package: root, condition: .when(traits: ["PostgreSQL"])),
                           .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["PostgreSQL"])),
                           .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["PostgreSQL"])),
                           .product(name: "Logging", package: "swift-log", condition: .when(traits: ["PostgreSQL"]))],
        ),
        // package-benchmark's suite (`swift package --package-path Benchmarks benchmark`): our
        // operations alone, with time, allocation and memory metrics, for regression tracking
        // against saved baselines. The three-way ratio table is `Compare` (Benchmarks/compare).
        .executableTarget(
            name: "OpenCoreDataBenchmarks",
            dependencies: [.product(name: "OpenCoreData", package: root), .product(name: "Benchmark", package: "benchmark")],
            path: "Benchmarks/OpenCoreDataBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
