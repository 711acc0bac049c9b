import Foundation

extension ManagedObjectContext {
    /// One column of a dictionary result: the store's column, under its name.
    private struct ResultColumn {
        var name: String
        var column: StoreDictionaryRequest.Column
        /// The attribute a plain column shows (its values go through its transformer).
        var attribute: AttributeDescription? = nil
        /// The type an expression description asks its values in, when not the computed one.
        var resultType: AttributeType? = nil

        init(name: String, slot: Int, function: StoreDictionaryRequest.Function?, type: AttributeType, attribute: AttributeDescription? = nil) {
            self.name = name
            column = StoreDictionaryRequest.Column(slot: slot, function: function, type: type)
            self.attribute = attribute
        }
    }

    /// Dictionary results: projection, grouping, aggregates, distinct, having, then the window,
    /// computed by the store (in SQL where it can). As in Core Data they show what the stores
    /// hold: unsaved changes of this context (or of a parent) do not count.
    func fetchDictionaries<T>(_ request: FetchRequest<T>) throws -> [NSDictionary] {
        let plan = try plan(for: request)
        let entity = plan.entity
        let columns = try resultColumns(request, entity: entity)
        let groupSlots = try (request.propertiesToGroupBy ?? []).map { try slot(of: $0, in: entity, role: "propertiesToGroupBy") }
        let aggregates = columns.contains { $0.column.function != nil }
        if !groupSlots.isEmpty || aggregates {
            for column in columns where column.column.function == nil && !groupSlots.contains(column.column.slot) {
                throw CoreDataError(.coreData, """
                    The dictionary fetch groups its results but also fetches '\(column.name)', which is not in \
                    propertiesToGroupBy. Add it there, or fetch it through an aggregate (count:, sum:, min:, \
                    max:, average:).
                    """, key: column.name)
            }
        }
        var having: BoundPredicate?
        if let predicate = request.havingPredicate {
            let resultEntity = EntityDescription(name: entity.name,
                                                 properties: columns.map { AttributeDescription(name: $0.name, type: $0.column.type) })
            resultEntity.freeze()
            having = try predicate.bind(to: resultEntity)
        }
        var storeRequest = plan.storeRequest
        storeRequest.limit = request.fetchLimit
        storeRequest.offset = request.fetchOffset
        let dictionaryRequest = StoreDictionaryRequest(fetch: storeRequest, columns: columns.map(\.column), groupBy: groupSlots,
                                                       distinct: request.returnsDistinctResults, having: having)
        let rows: [[ManagedValue]]
        do { rows = try reading { try plan.coordinator.fetchDictionaries(dictionaryRequest) } } catch { throw PersistentStoreCoordinator.wrap(error) }
        return rows.map { row in
            let dictionary = NSMutableDictionary()
            for (column, value) in zip(columns, row) {
                var any = column.attribute.map({ $0.appValue(value) }) ?? value.anyValue(for: column.column.type)
                if let type = column.resultType, type != column.column.type {
                    any = ManagedValue(converting: any, to: type)?.anyValue(for: type) ?? any
                }
                if let any { dictionary[column.name] = any }
            }
            return dictionary
        }
    }

    private func resultColumns<T>(_ request: FetchRequest<T>, entity: EntityDescription) throws -> [ResultColumn] {
        guard let properties = request.propertiesToFetch else {
            return entity.storedAttributes.enumerated().map {
                ResultColumn(name: $1.name, slot: $0, function: nil, type: $1.attributeType, attribute: $1)
            }
        }
        return try properties.map { property in
            if let expression = property as? ExpressionDescription {
                var column = try expressionColumn(expression, entity: entity)
                column.resultType = expression.expressionResultType
                return column
            }
            let slot = try slot(of: property, in: entity, role: "propertiesToFetch")
            let attribute = entity.storedAttributes[slot]
            return ResultColumn(name: attribute.name, slot: slot, function: nil, type: attribute.attributeType, attribute: attribute)
        }
    }

    /// The column of an expression description: a key path, or a function over one.
    private func expressionColumn(_ expression: ExpressionDescription, entity: EntityDescription) throws -> ResultColumn {
        guard let computed = expression.expression,
              computed.expressionType == .keyPath
                  || (computed.expressionType == .function && computed.arguments?.count == 1 && computed.arguments?[0].expressionType == .keyPath) else {
            throw CoreDataError(.coreData, """
                The expression description '\(expression.name)' computes \
                \(expression.expression.map(\.description) ?? "nothing"); a dictionary fetch computes a key \
                path, or count:, sum:, min:, max: or average: of one key path.
                """)
        }
        let slot = try slot(of: expression.keyPath, in: entity, role: "The expression description '\(expression.name)'")
        let source = entity.storedAttributes[slot].attributeType
        guard let name = expression.function else {
            return ResultColumn(name: expression.name, slot: slot, function: nil, type: source, attribute: entity.storedAttributes[slot])
        }
        guard let function = StoreDictionaryRequest.Function(rawValue: name) else {
            throw CoreDataError(.coreData, """
                The expression '\(expression.name)' uses the function '\(name)'; use count:, sum:, min:, max: \
                or average:.
                """)
        }
        let type: AttributeType
        switch function {
        case .count: type = .integer64
        case .sum: type = source.isInteger ? .integer64 : (source == .decimal ? .decimal : .double)
        case .average: type = .double
        case .minimum, .maximum: type = source
        }
        if (function == .sum || function == .average) && !source.isNumeric {
            throw CoreDataError(.coreData, """
                The expression '\(expression.name)' applies \(name) to '\(expression.keyPath)', which is of \
                type \(source), not a number.
                """, key: expression.keyPath)
        }
        return ResultColumn(name: expression.name, slot: slot, function: function, type: type)
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
}
