import Foundation
import OpenCoreDataCore

/// The columns of one entity's rows in the new store — keys, attributes, to-one keys, then the
/// `Z<n>_` entity columns and `Z_FOK_` order columns of its to-ones — and where each attribute's
/// value comes from in the old rows (worked out once per entity, not per row).
struct MigrationRowWriter {
    enum AttributeSource {
        /// A column of the old row (its position in the select) of the old attribute's type.
        case column(Int, AttributeType)
        case keyPath([String])
        case constant(ManagedValue)
        case none
    }

    /// The new table's columns, in the order of a row's values.
    let columns: [String]
    let entityColumnRelationships: Set<String>
    let orderColumnRelationships: Set<String>
    /// Per stored attribute of the new entity, in slot order.
    let attributeSources: [AttributeSource]

    init(entity: EntityDescription, layout: RelationalLayout, from sourceEntity: EntityDescription, layout sourceLayout: RelationalLayout,
         mapping: InferredMapping) throws {
        let sourceMapping = try sourceLayout.mapping(for: sourceEntity)
        attributeSources = entity.storedAttributes.map { attribute in
            switch mapping.source(of: attribute, in: entity) {
            case .property(let old as AttributeDescription)?:
                guard let slot = sourceEntity.slotByName[old.name] else { return .none }
                return .column(3 + sourceMapping.tableIndexes[slot], old.attributeType)
            case .keyPath(let path)?: return .keyPath(path)
            case .constant(let value)?: return .constant(value)
            default: return .none
            }
        }
        let mapping = try layout.mapping(for: entity)
        var columns = ["Z_PK", "Z_ENT", "Z_OPT"] + mapping.columns
        var withEntity = Set<String>(), withOrder = Set<String>()
        var orderColumns: [String] = []
        for (offset, relationship) in entity.toOneRelationships.enumerated() {
            if let column = mapping.entityColumns[entity.storedAttributes.count + offset] {
                columns.append(column.name)
                withEntity.insert(relationship.name)
            }
        }
        for relationship in entity.toOneRelationships {
            if let column = layout.orderColumn(ofToOne: relationship) {
                orderColumns.append(column)
                withOrder.insert(relationship.name)
            }
        }
        columns += orderColumns
        self.columns = columns
        entityColumnRelationships = withEntity
        orderColumnRelationships = withOrder
    }
}
