import Foundation

extension ManagedObject {
    /// Deny rules that refuse this object's delete.
    package func denyRuleErrors() -> [CoreDataError] {
        let denying = entity.denyingRelationships
        guard !denying.isEmpty, let context = managedObjectContext else { return [] }
        var errors: [CoreDataError] = []
        for relationship in denying {
            let remaining = context.destinations(of: self, relationship).filter { !context.object(with: $0).isDeletedFlag }
            guard !remaining.isEmpty else { continue }
            errors.append(CoreDataError(
                .validationRelationshipDeniedDelete,
                """
                    \(entity.name) \(objectID) cannot be deleted: its relationship '\(relationship.name)' has \
                    the deny rule and still holds \(remaining.count) object(s). Remove them from \
                    '\(relationship.name)' (or delete them) first.
                    """,
                key: relationship.name, affectedObjectIDs: [objectID]))
        }
        return errors
    }

    /// Every property rule the object breaks now.
    package func propertyValidationErrors() -> [CoreDataError] {
        guard !isFaultFlag else { return [] }
        var errors: [CoreDataError] = []
        func fail(_ code: CoreDataError.Code, _ property: PropertyDescription, _ message: String) {
            let kind = property is RelationshipDescription ? "relationship" : "attribute"
            errors.append(CoreDataError(code, "The \(kind) '\(property.name)' of \(entity.name) \(objectID) \(message)", key: property.name,
                                        affectedObjectIDs: [objectID]))
        }
        for slot in entity.validatedSlots {
            let attribute = entity.storedAttributes[slot]
            for (code, message) in attribute.ruleViolations(of: values[slot]) { fail(code, attribute, message) }
        }
        guard entity.hasRelationshipRules else { return errors }
        for (offset, relationship) in entity.toOneRelationships.enumerated() where !relationship.isOptional {
            if values[entity.storedAttributes.count + offset].isNull {
                fail(.validationMissingMandatoryProperty, relationship,
                     "is mandatory and has no destination. Set it before saving, or make it optional.")
            }
        }
        if let context = managedObjectContext {
            for relationship in entity.toManyRelationships
                where relationship.minCount > 0 || relationship.upperBound != nil || !relationship.isOptional {
                let count = ((try? context.members(of: self, relationship)) ?? []).count
                let name = relationship
                if count == 0 && !relationship.isOptional {
                    fail(.validationMissingMandatoryProperty, name, "is mandatory and empty. Add an object before saving, or make it optional.")
                } else if count > 0 || !relationship.isOptional, count < relationship.minCount {
                    fail(.validationRelationshipLacksMinimumCount, name, "holds \(count) object(s); at least \(relationship.minCount) are needed.")
                }
                if let maximum = relationship.upperBound, count > maximum {
                    fail(.validationRelationshipExceedsMaximumCount, name, "holds \(count) object(s); at most \(maximum) are allowed.")
                }
            }
        }
        return errors
    }

    /// Checks `value` against the rules of the attribute `key` (type, mandatory, bounds,
    /// pattern), without setting it: throws the one broken rule's error (Core Data's code), or
    /// 1560 with all of them; an unknown key or a value of another type is 1550. Mirrors
    /// `validateValue(_:forKey:)` (Core Data passes an `AutoreleasingUnsafeMutablePointer`,
    /// which Linux lacks: pass `&value` of type `Any?`); the value is left as it is.
    public func validateValue(_ value: inout Any?, forKey key: String) throws {
        guard let attribute = entity.slotByName[key].map({ entity.storedAttributes[$0] }) ?? entity.transientAttribute(named: key) else {
            if entity.relationshipsByName[key] != nil { return }
            throw CoreDataError(.managedObjectValidation, "The entity \(entity.name) has no attribute '\(key)' to validate a value for.", key: key)
        }
        guard let stored = attribute.storedValue(value) else {
            let shown = value.map { "\($0) (\(type(of: $0)))" } ?? "nil"
            throw CoreDataError(.managedObjectValidation, """
                The value \(shown) does not fit the attribute '\(key)' of \(entity.name), which is of type \
                \(attribute.attributeType).
                """, key: key, affectedObjectIDs: [objectID])
        }
        let errors = attribute.ruleViolations(of: stored).map { code, message in
            CoreDataError(code, "The attribute '\(key)' of \(entity.name) \(objectID) \(message)", key: key, affectedObjectIDs: [objectID])
        }
        try Self.throwing(errors)
    }

    /// `validateValue(_:forKey:)` for Core Data code that declares the value as `AnyObject?`.
    public func validateValue(_ value: inout AnyObject?, forKey key: String) throws {
        var any: Any? = value
        try validateValue(&any, forKey: key)
    }

    /// Throws nothing, the one error, or 1560 with all of them.
    package static func throwing(_ errors: [CoreDataError]) throws {
        if errors.count == 1 { throw errors[0] }
        if errors.count > 1 { throw CoreDataError.multiple(errors) }
    }
}

extension CoreDataError {
    /// 1560 with the errors (flattening nested 1560s).
    package static func multiple(_ errors: [CoreDataError]) -> CoreDataError {
        let flat = errors.flatMap { $0.code == .validationMultipleErrors ? $0.underlyingErrors : [$0] }
        return CoreDataError(.validationMultipleErrors, "Multiple validation errors occurred; see underlyingErrors.",
                             affectedObjectIDs: flat.flatMap(\.affectedObjectIDs), underlyingErrors: flat)
    }
}

extension ManagedObjectContext {
    /// Validates what a save writes: inserts, updates and deletes. Throws the one error, or 1560.
    func validateForSave() throws {
        var errors: [CoreDataError] = []
        func record(_ error: any Error) {
            if let error = error as? CoreDataError {
                errors += error.code == .validationMultipleErrors ? error.underlyingErrors : [error]
            } else {
                errors.append(CoreDataError(.managedObjectValidation, "Validation failed: \(error)"))
            }
        }
        for object in graph.pending.liveInserts(in: self) {
            do { try object.validateForInsert() } catch { record(error) }
        }
        for object in graph.pending.liveChanges(in: self) {
            do {
                if object.isDeletedFlag { try object.validateForDelete() } else if !object.isFaultFlag { try object.validateForUpdate() }
            } catch { record(error) }
        }
        try ManagedObject.throwing(errors)
    }
}

extension AttributeDescription {
    /// The rules of this attribute a stored value breaks: NaN, mandatory, string length and
    /// pattern, date and number bounds. Each with Core Data's code and the end of a message
    /// that starts with the attribute.
    package func ruleViolations(of value: ManagedValue) -> [(CoreDataError.Code, String)] {
        if value.isNaN {
            return [(.managedObjectValidation, """
                is NaN (not a number), which no store keeps: SQLite would read it back as nil or 0. Store nil \
                in an optional attribute for a missing value.
                """)]
        }
        var violations: [(CoreDataError.Code, String)] = []
        switch value {
        case .null:
            if !isOptional { violations.append((.validationMissingMandatoryProperty,
                                                "is mandatory and has no value. Set it before saving, or make it optional.")) }
        case .string(let text):
            let length = Double(text.count)
            if let maximum, length > maximum {
                violations.append((.validationStringTooLong,
                                   "is \(text.count) characters long; at most \(Int(exactly: maximum) ?? Int.max) are allowed."))
            }
            if let minimum, length < minimum {
                violations.append((.validationStringTooShort,
                                   "is \(text.count) characters long; at least \(Int(exactly: minimum) ?? Int.max) are needed."))
            }
            if let regularExpression, !StringMatching.evaluate(.matches, options: [], value: text, pattern: regularExpression) {
                violations.append((.validationStringPatternMatching, "(\"\(text)\") does not match the pattern \(regularExpression)."))
            }
        case .date(let date):
            if let latestDate, date > latestDate { violations.append((.validationDateTooLate,
                                                                      "(\(date)) is after the latest allowed date, \(latestDate).")) }
            if let earliestDate, date < earliestDate {
                violations.append((.validationDateTooSoon, "(\(date)) is before the earliest allowed date, \(earliestDate)."))
            }
        case let value:
            guard let number = value.numericValue else { break }
            if let maximum, number > maximum { violations.append((.validationNumberTooLarge, "(\(number)) is above the maximum, \(maximum).")) }
            if let minimum, number < minimum { violations.append((.validationNumberTooSmall, "(\(number)) is below the minimum, \(minimum).")) }
        }
        return violations
    }
}
