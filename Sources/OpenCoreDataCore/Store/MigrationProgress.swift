import Foundation

/// How far a store migration has got: passed to the handler under
/// ``MigrationProgressHandlerOption`` as rows are copied. Core Data reports the same through
/// `NSMigrationManager.migrationProgress`.
public struct MigrationProgress: Sendable, CustomStringConvertible {
    /// The entity whose rows are being copied.
    public var entityName: String
    /// Rows copied so far, all entities together.
    public var completedRows: Int
    /// Rows the migration copies in all.
    public var totalRows: Int

    /// Makes a progress report.
    public init(entityName: String, completedRows: Int, totalRows: Int) {
        self.entityName = entityName
        self.completedRows = completedRows
        self.totalRows = totalRows
    }

    /// Between 0 and 1.
    public var fractionCompleted: Double { totalRows == 0 ? 1 : Double(completedRows) / Double(totalRows) }

    public var description: String { "\(completedRows)/\(totalRows) rows (\(entityName))" }
}

extension ManagedObjectModel {
    /// Every version of a model bundle (`.xcdatamodeld` or `.momd`), for
    /// ``MigrationSourceModelsOption``: a store without a model of its own migrates from
    /// whichever version wrote it.
    public static func versions(contentsOf url: URL) throws -> [ManagedObjectModel] {
        let suffix = url.pathExtension == "momd" ? ".mom" : ".xcdatamodel"
        let names = try FileManager.default.contentsOfDirectory(atPath: url.path).filter { $0.hasSuffix(suffix) }.sorted()
        return try names.map { try ManagedObjectModel(contentsOf: url, version: String($0.dropLast(suffix.count))) }
    }
}
