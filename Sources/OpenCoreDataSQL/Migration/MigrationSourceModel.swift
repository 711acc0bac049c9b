import Foundation
import OpenCoreDataCore

/// The model a store was written with, for a lightweight migration of either SQL store.
package enum MigrationSourceModel {
    /// The model a store was written with (its version `hashes`), for a migration to
    /// `destination`: the source of a mapping model under `MappingModelsOption` from that version
    /// to `destination` (returned too), else one of `MigrationSourceModelsOption` or the store's
    /// `cached` model with those hashes. Throws 134130 naming `store` when none is at hand.
    package static func find(for store: String, hashes: [String: Data], cached: ManagedObjectModel?, destination: ManagedObjectModel,
                            options: [String: any Sendable]) throws -> (model: ManagedObjectModel, mappingModel: MappingModel?) {
        let candidates = (options[MigrationSourceModelsOption] as? [ManagedObjectModel] ?? []) + (cached.map { [$0] } ?? [])
        let current = destination.entityVersionHashesByName
        let mappingModel = (options[MappingModelsOption] as? [MappingModel] ?? []).first {
            $0.sourceModel.entityVersionHashesByName == hashes && $0.destinationModel.entityVersionHashesByName == current
        }
        guard let source = mappingModel?.sourceModel ?? candidates.first(where: { $0.entityVersionHashesByName == hashes }) else {
            throw CoreDataError(.migrationMissingSourceModel, """
                \(store) was written with a model that is not at hand (it has no usable model cache, and none \
                of the \(candidates.count) models given under MigrationSourceModelsOption has its version \
                hashes). Pass the older model versions, e.g. ManagedObjectModel.versions(contentsOf:) of the \
                .xcdatamodeld.
                """)
        }
        return (try source.frozenCopy(), mappingModel)
    }
}

extension ManagedObjectModel {
    /// The model, frozen (models at hand may already be frozen by another coordinator).
    fileprivate func frozenCopy() throws -> ManagedObjectModel {
        try freeze()
        return self
    }
}
