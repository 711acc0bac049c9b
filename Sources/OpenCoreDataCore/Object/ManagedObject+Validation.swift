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
                "\(entity.name) \(objectID) cannot be deleted: its relationship '\(relationship.name)' has the deny rule and still holds \(remaining.count) object(s). Remove them from '\(relationship.name)' (or delete them) first.",
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
            errors.append(CoreDataError(code, "The \(kind) '\(property.name)' of \(entity.name) \(objectID) \(message)", key: property.name, affectedObjectIDs: [objectID]))
        }
        for slot in entity.validatedSlots {
            let attribute = entity.storedAttributes[slot]
            let name = attribute
            if values[slot].isNaN {
                fail(.managedObjectValidation, name, "is NaN (not a number), which no store keeps: SQLite would read it back as nil or 0. Store nil in an optional attribute for a missing value.")
                continue
            }
            switch values[slot] {
            case .null:
                if !attribute.isOptional { fail(.validationMissingMandatoryProperty, name, "is mandatory and has no value. Set it before saving, or make it optional.") }
            case .string(let text):
                let length = Double(text.count)
                if let maximum = attribute.maximum, length > maximum { fail(.validationStringTooLong, name, "is \(text.count) characters long; at most \(Int(exactly: maximum) ?? Int.max) are allowed.") }
                if let minimum = attribute.minimum, length < minimum { fail(.validationStringTooShort, name, "is \(text.count) characters long; at least \(Int(exactly: minimum) ?? Int.max) are needed.") }
                if let pattern = attribute.regularExpression, !StringMatching.evaluate(.matches, options: [], value: text, pattern: pattern) {
                    fail(.validationStringPatternMatching, name, "(\"\(text)\") does not match the pattern \(pattern).")
                }
            case .date(let date):
                if let latest = attribute.latestDate, date > latest { fail(.validationDateTooLate, name, "(\(date)) is after the latest allowed date, \(latest).") }
                if let earliest = attribute.earliestDate, date < earliest { fail(.validationDateTooSoon, name, "(\(date)) is before the earliest allowed date, \(earliest).") }
            case let value:
                guard let number = value.numericValue else { break }
                if let maximum = attribute.maximum, number > maximum { fail(.validationNumberTooLarge, name, "(\(number)) is above the maximum, \(maximum).") }
                if let minimum = attribute.minimum, number < minimum { fail(.validationNumberTooSmall, name, "(\(number)) is below the minimum, \(minimum).") }
            }
        }
        guard entity.hasRelationshipRules else { return errors }
        for (offset, relationship) in entity.toOneRelationships.enumerated() where !relationship.isOptional {
            if values[entity.storedAttributes.count + offset].isNull {
                fail(.validationMissingMandatoryProperty, relationship, "is mandatory and has no destination. Set it before saving, or make it optional.")
            }
        }
        if let context = managedObjectContext {
            for relationship in entity.toManyRelationships where relationship.minCount > 0 || relationship.upperBound != nil || !relationship.isOptional {
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
