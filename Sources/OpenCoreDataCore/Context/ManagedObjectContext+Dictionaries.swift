import Foundation

extension ManagedObjectContext {
    /// One column of a dictionary result.
    private struct ResultColumn {
        var name: String
        var slot: Int
        var function: String?
        var type: AttributeType
        /// The attribute a plain column shows (its values go through its transformer).
        var attribute: AttributeDescription? = nil
    }

    /// Dictionary results: projection, grouping, aggregates, distinct, having, then the window.
    /// Computed from the same objects an object fetch returns (pending changes included), so the
    /// SQLite and in-memory stores give the same dictionaries.
    func fetchDictionaries<T>(_ request: FetchRequest<T>) throws -> [NSDictionary] {
        let entity = try plan(for: request).entity
        let columns = try resultColumns(request, entity: entity)
        let groupSlots = try (request.propertiesToGroupBy ?? []).map { try slot(of: $0, in: entity, role: "propertiesToGroupBy") }
        let aggregates = columns.contains { $0.function != nil }
        if !groupSlots.isEmpty || aggregates {
            for column in columns where column.function == nil && !groupSlots.contains(column.slot) {
                throw CoreDataError(.coreData, "The dictionary fetch groups its results but also fetches '\(column.name)', which is not in propertiesToGroupBy. Add it there, or fetch it through an aggregate (count:, sum:, min:, max:, average:).", key: column.name)
            }
        }
        let objects = try fetchObjects(request, ignoringWindow: true)
        var rows: [[ManagedValue]]
        if !groupSlots.isEmpty || aggregates {
            var groups: [[ManagedValue]: [[ManagedValue]]] = [:]
            var order: [[ManagedValue]] = []
            for object in objects {
                let key = groupSlots.map { object.values[$0] }
                if groups[key] == nil { order.append(key) }
                groups[key, default: []].append(object.values)
            }
            rows = order.map { key in columns.map { column in Self.aggregate(column, over: groups[key] ?? []) } }
        } else {
            rows = objects.map { object in columns.map { object.values[$0.slot] } }
        }
        if request.returnsDistinctResults {
            var seen = Set<[ManagedValue]>()
            rows = rows.filter { seen.insert($0).inserted }
        }
        if let having = request.havingPredicate {
            let resultEntity = EntityDescription(name: entity.name, properties: columns.map { AttributeDescription(name: $0.name, type: $0.type) })
            resultEntity.freeze()
            let bound = try having.bind(to: resultEntity)
            rows = rows.filter { bound.evaluate($0, primaryKey: nil) }
        }
        if request.fetchOffset > 0 { rows = Array(rows.dropFirst(request.fetchOffset)) }
        if request.fetchLimit > 0 { rows = Array(rows.prefix(request.fetchLimit)) }
        return rows.map { row in
            let dictionary = NSMutableDictionary()
            for (column, value) in zip(columns, row) {
                if let any = column.attribute.map({ $0.appValue(value) }) ?? value.anyValue(for: column.type) { dictionary[column.name] = any }
            }
            return dictionary
        }
    }

    private func resultColumns<T>(_ request: FetchRequest<T>, entity: EntityDescription) throws -> [ResultColumn] {
        guard let properties = request.propertiesToFetch else {
            return entity.storedAttributes.enumerated().map { ResultColumn(name: $1.name, slot: $0, function: nil, type: $1.attributeType, attribute: $1) }
        }
        return try properties.map { property in
            if let expression = property as? ExpressionDescription {
                let slot = try slot(of: expression.keyPath, in: entity, role: "an expression")
                let source = entity.storedAttributes[slot].attributeType
                guard let function = expression.function else {
                    return ResultColumn(name: expression.name, slot: slot, function: nil, type: source, attribute: entity.storedAttributes[slot])
                }
                let type: AttributeType
                switch function {
                case "count:": type = .integer64
                case "sum:": type = source.isInteger ? .integer64 : (source == .decimal ? .decimal : .double)
                case "average:": type = .double
                case "min:", "max:": type = source
                default:
                    throw CoreDataError(.coreData, "The expression '\(expression.name)' uses the function '\(function)'; use count:, sum:, min:, max: or average:.")
                }
                if function != "count:" && function != "min:" && function != "max:" && !source.isNumeric {
                    throw CoreDataError(.coreData, "The expression '\(expression.name)' applies \(function) to '\(expression.keyPath)', which is of type \(source), not a number.", key: expression.keyPath)
                }
                return ResultColumn(name: expression.name, slot: slot, function: function, type: type)
            }
            let slot = try slot(of: property, in: entity, role: "propertiesToFetch")
            let attribute = entity.storedAttributes[slot]
            return ResultColumn(name: attribute.name, slot: slot, function: nil, type: attribute.attributeType, attribute: attribute)
        }
    }

    private func slot(of property: Any, in entity: EntityDescription, role: String) throws -> Int {
        let name: String
        if let string = property as? String { name = string }
        else if let description = property as? PropertyDescription { name = description.name }
        else { throw CoreDataError(.coreData, "\(role) holds \(property), which is neither a property name nor an expression description.") }
        guard let slot = entity.slotByName[name] else {
            throw CoreDataError(.coreData, "\(role) names '\(name)', which the entity \(entity.name) does not have.", key: name)
        }
        return slot
    }

    private static func aggregate(_ column: ResultColumn, over rows: [[ManagedValue]]) -> ManagedValue {
        let values = rows.map { $0[column.slot] }
        guard let function = column.function else { return values.first ?? .null }
        let present = values.filter { !$0.isNull }
        switch function {
        case "count:":
            return .integer(Int64(present.count))
        case "min:":
            return present.min { ManagedValue.compare($0, $1) == .orderedAscending } ?? .null
        case "max:":
            return present.max { ManagedValue.compare($0, $1) == .orderedAscending } ?? .null
        case "sum:":
            switch column.type {
            case .integer64: return .integer(present.reduce(0) { total, value in if case .integer(let v) = value { return total &+ v }; return total })
            case .decimal: return .decimal(present.reduce(Decimal(0)) { total, value in if case .decimal(let v) = value { return total + v }; return total })
            default: return .double(present.reduce(0) { $0 + ($1.numericValue ?? 0) })
            }
        case "average:":
            guard !present.isEmpty else { return .null }
            return .double(present.reduce(0) { $0 + ($1.numericValue ?? 0) } / Double(present.count))
        default:
            return .null
        }
    }
}
