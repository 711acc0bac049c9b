import Foundation

/// ``CoreDataError`` as an `NSError` of Core Data's: domain `NSCocoaErrorDomain`, Core Data's
/// code, and the `userInfo` keys Core Data fills, so that error handling written against
/// `NSError` ports:
///
/// ```swift
/// do { try context.save() }
/// catch {
///     let error = error as NSError             // on Linux, `catch let error as NSError` does not match
///     if error.code == NSManagedObjectMergeError { … error.userInfo["conflictList"] … }
/// }
/// ```
/// What Core Data puts there as managed objects (`NSValidationObjectErrorKey`,
/// `NSAffectedObjectsErrorKey`) is left out: an error may leave its context's queue, and its
/// objects may not; ``CoreDataError/affectedObjectIDs`` names them.
extension CoreDataError: CustomNSError {
    /// `NSCocoaErrorDomain`, Core Data's domain.
    public static var errorDomain: String { NSCocoaErrorDomain }

    /// Core Data's code (``code``'s raw value).
    public var errorCode: Int { code.rawValue }

    /// The message as the localized description; the key (`NSValidationKeyErrorKey`); the errors
    /// reported together (`NSDetailedErrorsKey`, as `NSError`s); the merge or constraint conflicts
    /// (`"conflictList"`, as Core Data's 133020 and 133021 carry them); SQLite's result code
    /// (`NSSQLiteErrorDomain`).
    public var errorUserInfo: [String: Any] {
        var info: [String: Any] = [NSLocalizedDescriptionKey: message]
        if let key { info[NSValidationKeyErrorKey] = key }
        if !underlyingErrors.isEmpty { info[NSDetailedErrorsKey] = underlyingErrors.map { $0 as NSError } }
        if !conflicts.isEmpty {
            info[NSPersistentStoreSaveConflictsErrorKey] = conflicts
        } else if !constraintConflicts.isEmpty {
            info[NSPersistentStoreSaveConflictsErrorKey] = constraintConflicts
        }
        if let storeDetail, storeDetail.engine == "SQLite", let code = Int(storeDetail.code) { info[NSSQLiteErrorDomain] = code }
        return info
    }
}

/// The `userInfo` key under which Core Data's merge (133020) and constraint (133021) errors list
/// their conflicts: `"conflictList"`.
public let NSPersistentStoreSaveConflictsErrorKey = "conflictList"

/// The `userInfo` key of the property a validation error concerns.
public let NSValidationKeyErrorKey = "NSValidationErrorKey"
/// The `userInfo` key of the errors reported together by a 1560 error (`[NSError]`).
public let NSDetailedErrorsKey = "NSDetailedErrors"
/// The `userInfo` key (and domain name) of SQLite's result code in an SQLite error.
public let NSSQLiteErrorDomain = "NSSQLiteErrorDomain"

/// 1550 (``CoreDataError/Code/managedObjectValidation``).
public let NSManagedObjectValidationError = CoreDataError.Code.managedObjectValidation.rawValue
/// 1560 (``CoreDataError/Code/validationMultipleErrors``).
public let NSValidationMultipleErrorsError = CoreDataError.Code.validationMultipleErrors.rawValue
/// 1570 (``CoreDataError/Code/validationMissingMandatoryProperty``).
public let NSValidationMissingMandatoryPropertyError = CoreDataError.Code.validationMissingMandatoryProperty.rawValue
/// 1580 (``CoreDataError/Code/validationRelationshipLacksMinimumCount``).
public let NSValidationRelationshipLacksMinimumCountError = CoreDataError.Code.validationRelationshipLacksMinimumCount.rawValue
/// 1590 (``CoreDataError/Code/validationRelationshipExceedsMaximumCount``).
public let NSValidationRelationshipExceedsMaximumCountError = CoreDataError.Code.validationRelationshipExceedsMaximumCount.rawValue
/// 1600 (``CoreDataError/Code/validationRelationshipDeniedDelete``).
public let NSValidationRelationshipDeniedDeleteError = CoreDataError.Code.validationRelationshipDeniedDelete.rawValue
/// 1610 (``CoreDataError/Code/validationNumberTooLarge``).
public let NSValidationNumberTooLargeError = CoreDataError.Code.validationNumberTooLarge.rawValue
/// 1620 (``CoreDataError/Code/validationNumberTooSmall``).
public let NSValidationNumberTooSmallError = CoreDataError.Code.validationNumberTooSmall.rawValue
/// 1630 (``CoreDataError/Code/validationDateTooLate``).
public let NSValidationDateTooLateError = CoreDataError.Code.validationDateTooLate.rawValue
/// 1640 (``CoreDataError/Code/validationDateTooSoon``).
public let NSValidationDateTooSoonError = CoreDataError.Code.validationDateTooSoon.rawValue
/// 1650 (``CoreDataError/Code/validationInvalidDate``).
public let NSValidationInvalidDateError = CoreDataError.Code.validationInvalidDate.rawValue
/// 1660 (``CoreDataError/Code/validationStringTooLong``).
public let NSValidationStringTooLongError = CoreDataError.Code.validationStringTooLong.rawValue
/// 1670 (``CoreDataError/Code/validationStringTooShort``).
public let NSValidationStringTooShortError = CoreDataError.Code.validationStringTooShort.rawValue
/// 1680 (``CoreDataError/Code/validationStringPatternMatching``).
public let NSValidationStringPatternMatchingError = CoreDataError.Code.validationStringPatternMatching.rawValue
/// 132000 (``CoreDataError/Code/managedObjectContextLocking``).
public let NSManagedObjectContextLockingError = CoreDataError.Code.managedObjectContextLocking.rawValue
/// 133000 (``CoreDataError/Code/managedObjectReferentialIntegrity``).
public let NSManagedObjectReferentialIntegrityError = CoreDataError.Code.managedObjectReferentialIntegrity.rawValue
/// 133010 (``CoreDataError/Code/managedObjectExternalRelationship``).
public let NSManagedObjectExternalRelationshipError = CoreDataError.Code.managedObjectExternalRelationship.rawValue
/// 133020 (``CoreDataError/Code/managedObjectMerge``).
public let NSManagedObjectMergeError = CoreDataError.Code.managedObjectMerge.rawValue
/// 133021 (``CoreDataError/Code/managedObjectConstraintMerge``).
public let NSManagedObjectConstraintMergeError = CoreDataError.Code.managedObjectConstraintMerge.rawValue
/// 134000 (``CoreDataError/Code/persistentStoreInvalidType``).
public let NSPersistentStoreInvalidTypeError = CoreDataError.Code.persistentStoreInvalidType.rawValue
/// 134010 (``CoreDataError/Code/persistentStoreTypeMismatch``).
public let NSPersistentStoreTypeMismatchError = CoreDataError.Code.persistentStoreTypeMismatch.rawValue
/// 134020 (``CoreDataError/Code/persistentStoreIncompatibleSchema``).
public let NSPersistentStoreIncompatibleSchemaError = CoreDataError.Code.persistentStoreIncompatibleSchema.rawValue
/// 134030 (``CoreDataError/Code/persistentStoreSave``).
public let NSPersistentStoreSaveError = CoreDataError.Code.persistentStoreSave.rawValue
/// 134060 (``CoreDataError/Code/coreData``).
public let NSCoreDataError = CoreDataError.Code.coreData.rawValue
/// 134070 (``CoreDataError/Code/persistentStoreOperation``).
public let NSPersistentStoreOperationError = CoreDataError.Code.persistentStoreOperation.rawValue
/// 134080 (``CoreDataError/Code/persistentStoreOpen``).
public let NSPersistentStoreOpenError = CoreDataError.Code.persistentStoreOpen.rawValue
/// 134090 (``CoreDataError/Code/persistentStoreTimeout``).
public let NSPersistentStoreTimeoutError = CoreDataError.Code.persistentStoreTimeout.rawValue
/// 134100 (``CoreDataError/Code/persistentStoreIncompatibleVersionHash``).
public let NSPersistentStoreIncompatibleVersionHashError = CoreDataError.Code.persistentStoreIncompatibleVersionHash.rawValue
/// 134110 (``CoreDataError/Code/migration``).
public let NSMigrationError = CoreDataError.Code.migration.rawValue
/// 134130 (``CoreDataError/Code/migrationMissingSourceModel``).
public let NSMigrationMissingSourceModelError = CoreDataError.Code.migrationMissingSourceModel.rawValue
/// 134140 (``CoreDataError/Code/migrationMissingMappingModel``).
public let NSMigrationMissingMappingModelError = CoreDataError.Code.migrationMissingMappingModel.rawValue
/// 134180 (``CoreDataError/Code/sqlite``).
public let NSSQLiteError = CoreDataError.Code.sqlite.rawValue
/// 134190 (``CoreDataError/Code/inferredMappingModel``).
public let NSInferredMappingModelError = CoreDataError.Code.inferredMappingModel.rawValue
/// 134301 (``CoreDataError/Code/persistentHistoryTokenExpired``).
public let NSPersistentHistoryTokenExpiredError = CoreDataError.Code.persistentHistoryTokenExpired.rawValue
