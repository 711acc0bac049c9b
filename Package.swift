// swift-tools-version: 6.1
import CompilerPluginSupport
import PackageDescription

let package = Package(
    name: "OpenCoreData",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "OpenCoreData", targets: ["OpenCoreData"]),
        // `import CoreData` where Apple's framework is absent (Linux): the library under Core
        // Data's module name. Depend on it with `condition: .when(platforms: [.linux])`.
        .library(name: "CoreData", targets: ["CoreData"]),
        // `import SwiftData` where Apple's framework is absent (Linux): `@Model`, `ModelContainer`,
        // `ModelContext` over the library. Depend on it with `condition: .when(platforms: [.linux])`.
        .library(name: "SwiftData", targets: ["SwiftData"]),
        // The PostgreSQL store, apart: apps on one SQLite file never build SwiftNIO and BoringSSL.
        .library(name: "OpenCoreDataPostgreSQL", targets: ["OpenCoreDataPostgreSQL"]),
        .executable(name: "ocd", targets: ["ocd"]),
        // The @Managed classes of a target's model files (.xcdatamodeld), written on each build.
        .plugin(name: "ModelCodegen", targets: ["ModelCodegen"]),
    ],
    dependencies: [
        .package(url: "https://github.com/swiftlang/swift-syntax", from: "603.0.1"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // `swift package generate-documentation` (the DocC catalog in Sources/OpenCoreData).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
        // The PostgreSQL store's client (OpenCoreDataPostgreSQL only).
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.25.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.5.3"),
    ],
    targets: [
        // The C boundary: the system's libsqlite3 plus a small shim header.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // zlib: Core Data keeps the model cache of a store as raw DEFLATE.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // Objects, contexts, model, coordinator, the store protocol and the in-memory store.
        // No SQLite, no swift-syntax.
        .target(name: "OpenCoreDataCore"),
        // Core Data's relational layout and the predicate compiler, shared by the SQL stores
        // through a dialect. Pure Swift: no database client.
        .target(name: "OpenCoreDataSQL", dependencies: ["OpenCoreDataCore"]),
        // The SQLite store in Core Data's file layout.
        .target(name: "OpenCoreDataSQLite", dependencies: ["OpenCoreDataCore", "OpenCoreDataSQL", "CSQLite", "CZlib"]),
        // The PostgreSQL store: Core Data's tables in a schema, over postgres-nio.
        .target(
            name: "OpenCoreDataPostgreSQL",
            dependencies: [
                "OpenCoreDataCore",
                "OpenCoreDataSQL",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // @Managed and friends.
        .macro(
            name: "OpenCoreDataMacros",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
            ]
        ),
        // The umbrella users import: re-exports the core and the SQLite store, declares the macros,
        // and assembles the container.
        .target(name: "OpenCoreData", dependencies: ["OpenCoreDataCore", "OpenCoreDataSQLite", "OpenCoreDataMacros"]),
        // Core Data's module name over the umbrella, for code written for Apple's framework.
        .target(name: "CoreData", dependencies: ["OpenCoreData"]),
        // SwiftData's API (`@Model`, `ModelContainer`, `ModelContext`) over the library.
        .target(name: "SwiftData", dependencies: ["OpenCoreData", "OpenCoreDataMacros"]),
        // Apple's Earthquakes sample: a USGS feed batch-imported, a view context kept current
        // through persistent history. Used by `ocd quakes` and its tests.
        .target(name: "Earthquakes", dependencies: ["OpenCoreData"]),
        // The same sample written the SwiftData way (`ocd quakes … --swiftdata`), on the same store.
        .target(name: "EarthquakesSwiftData", dependencies: ["SwiftData", "Earthquakes"]),
        .executableTarget(
            name: "ocd",
            dependencies: ["OpenCoreData", "OpenCoreDataPostgreSQL", "Earthquakes",
                           // Apple platforms have their own SwiftData: the SwiftData sample is Linux's.
                           .target(name: "EarthquakesSwiftData", condition: .when(platforms: [.linux])),
                           .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // The generator the ModelCodegen plugin runs: the core library only (no store, no NIO).
        .executableTarget(name: "ocd-codegen", dependencies: ["OpenCoreDataCore"]),
        .plugin(name: "ModelCodegen", capability: .buildTool(), dependencies: ["ocd-codegen"]),
        // What every test target runs its tests with: each test case on a thread of its own, off
        // Swift's cooperative pool, with a time limit on its own run (docs/Testing.md).
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        // Models are declared here, outside the library, exactly as users declare theirs.
        .testTarget(name: "OpenCoreDataTests", dependencies: ["OpenCoreData", "OpenCoreDataPostgreSQL", "Earthquakes", "CSQLite", "TestSupport"]),
        // Files written for Apple's Core Data (`import CoreData`, `import Foundation`), built and
        // run unchanged on Linux through the `CoreData` module.
        .testTarget(name: "CoreDataModuleTests", dependencies: [.target(name: "CoreData", condition: .when(platforms: [.linux])), "TestSupport"]),
        // Files written for SwiftData (`import SwiftData`), built and run on Linux.
        .testTarget(name: "SwiftDataTests", dependencies: [
            .target(name: "SwiftData", condition: .when(platforms: [.linux])),
            // For the @Managed twins of the SwiftData models and a look at the store file (ManagedTwins.swift).
            "OpenCoreData", "CSQLite", "TestSupport",
            // The Earthquakes sample both ways, on one store; the PostgreSQL store.
            "Earthquakes", .target(name: "EarthquakesSwiftData", condition: .when(platforms: [.linux])), "OpenCoreDataPostgreSQL",
        ]),
        // Against a real PostgreSQL server (OCD_POSTGRES_URL; .ci/run starts one).
        .testTarget(
            name: "OpenCoreDataPostgreSQLTests",
            dependencies: ["OpenCoreDataPostgreSQL", "OpenCoreDataSQL", "TestSupport", .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio")]
        ),
        // A target whose classes the ModelCodegen plugin writes from its model file on each build.
        .testTarget(
            name: "ModelCodegenPluginTests",
            dependencies: ["OpenCoreData", "TestSupport"],
            resources: [.copy("Library.xcdatamodeld")],
            plugins: ["ModelCodegen"]
        ),
        .testTarget(
            name: "OpenCoreDataMacrosTests",
            dependencies: [
                "OpenCoreDataMacros",
                "TestSupport",
                .product(name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
