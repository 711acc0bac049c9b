import Foundation

/// The rows of a ``BatchInsertRequest`` as stored values in slot order, each checked against its
/// attribute's type and the entity's mandatory attributes — what the stores insert.
///
/// What a row costs is paid per value, so what does not change from row to row is worked out
/// once per request: each slot's name, type and transformer, and the mandatory slots. A key is
/// found by comparing it with the names (a short string compares as two words, and a name of
/// another length at once) rather than by hashing it, for entities of up to
/// `namesComparedInTurn` attributes.
struct BatchInsertRows {
    private let entity: EntityDescription
    private let names: [String]
    private let types: [AttributeType]
    private let transformers: [(any ValueTransforming)?]
    private let hasTransformer: [Bool]
    private let mandatorySlots: [Int]
    /// The rows converted so far.
    private(set) var rows: StoredRows

    /// Above this many attributes a key is looked up by hashing.
    private static let namesComparedInTurn = 16

    init(entity: EntityDescription, capacity: Int = 0) {
        self.entity = entity
        let attributes = entity.storedAttributes
        names = attributes.map(\.name)
        types = attributes.map(\.attributeType)
        transformers = attributes.map(\.transformer)
        hasTransformer = transformers.map { $0 != nil }
        mandatorySlots = attributes.indices.filter { !attributes[$0].isOptional }
        rows = StoredRows(width: entity.defaultValues.count, capacity: capacity)
    }

    /// Every row of `request`, converted.
    static func converting(_ request: BatchInsertRequest, entity: EntityDescription) throws -> StoredRows {
        let capacity = if case .rows(let dictionaries) = request.source { dictionaries.count } else { 0 }
        var converter = BatchInsertRows(entity: entity, capacity: capacity)
        switch request.source {
        case .rows(let dictionaries):
            for dictionary in dictionaries { try converter.append(dictionary) }
        case .dictionaries(let handler):
            while true {
                let dictionary = NSMutableDictionary()
                if handler(dictionary) { break }
                var converted: [String: Any] = [:]
                for (key, value) in dictionary { if let key = key as? String { converted[key] = value } }
                try converter.append(converted)
            }
        case .objects(let handler):
            while true {
                let scratch = entity.managedObjectClass.init(entity: entity, insertInto: nil)
                if handler(scratch) { break }
                try converter.appendChecked(scratch.values)
            }
        }
        return converter.rows
    }

    /// Appends a row given as a dictionary of attribute names to values.
    mutating func append(_ dictionary: [String: Any]) throws {
        let index = rows.count
        rows.append(entity.defaultValues)
        for (key, value) in dictionary {
            let slot = try self.slot(of: key, row: index)
            guard let stored = storedValue(value, slot: slot) else {
                throw CoreDataError(.managedObjectValidation, """
                    Row \(index) of the batch insert has \(value) (\(type(of: value))) for '\(key)', which \
                    is of type \(types[slot]).
                    """, key: key)
            }
            guard !stored.isNaN else {
                throw CoreDataError(.managedObjectValidation, """
                    Row \(index) of the batch insert has NaN (not a number) for '\(key)', which no store \
                    keeps (SQLite would read it back as nil or 0). Leave the key out, or set nil, for a \
                    missing value.
                    """, key: key)
            }
            rows[index, slot] = stored
        }
        try checkMandatory(row: index)
    }

    /// Appends a row of stored values after checking its mandatory attributes.
    private mutating func appendChecked(_ values: [ManagedValue]) throws {
        rows.append(values)
        try checkMandatory(row: rows.count - 1)
    }

    private func checkMandatory(row index: Int) throws {
        for slot in mandatorySlots where rows[index, slot].isNull {
            throw CoreDataError(.validationMissingMandatoryProperty,
                                "Row \(index) of the batch insert has no value for '\(names[slot])', which is mandatory.", key: names[slot])
        }
    }

    /// The slot of `key`.
    private func slot(of key: String, row index: Int) throws -> Int {
        if names.count <= Self.namesComparedInTurn {
            let length = key.utf8.count
            for slot in names.indices where names[slot].utf8.count == length && names[slot] == key { return slot }
        } else if let slot = entity.slotByName[key] {
            return slot
        }
        throw CoreDataError(.coreData, """
            Row \(index) of the batch insert has the key '\(key)', which the entity \(entity.name) \
            does not have.
            """, key: key)
    }

    /// `value` in stored form for `slot`; nil when it does not fit the attribute.
    private func storedValue(_ value: Any, slot: Int) -> ManagedValue? {
        if hasTransformer[slot], let transformer = transformers[slot], !(value is NSNull) {
            return transformer.transformedValue(value).map(ManagedValue.data)
        }
        return ManagedValue.converting(value, to: types[slot])
    }
}
