import Foundation

/// An error thrown by OpenCoreData, with Core Data's error codes.
///
/// Mirrors the `NSError`s of Core Data's `NSCocoaErrorDomain`: the ``code`` has the same
/// raw value as in Core Data (133020 for a merge conflict, 1570 for a missing mandatory
/// property, …) so that the numbers can be looked up in Apple's documentation. The
/// ``message`` says what went wrong and what to do about it.
///
/// ```swift
/// do { try context.save() }
/// catch let error as CoreDataError where error.code == .managedObjectMerge {
///     for conflict in error.conflicts { print(conflict.sourceObject.objectID) }
/// }
/// ```
public struct CoreDataError: Error, Sendable, CustomStringConvertible {
    /// A Core Data error code. Raw values are Core Data's (`NSCocoaErrorDomain`).
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The numeric value, as in Core Data.
        public var rawValue: Int
        /// Makes a code from its Core Data number.
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// 1550: a value does not fit its property (`NSManagedObjectValidationError`).
        public static let managedObjectValidation = Code(rawValue: 1550)
        /// 1560: several validation errors together (`NSValidationMultipleErrorsError`).
        public static let validationMultipleErrors = Code(rawValue: 1560)
        /// 1570: a mandatory property has no value (`NSValidationMissingMandatoryPropertyError`).
        public static let validationMissingMandatoryProperty = Code(rawValue: 1570)
        /// 1580: a to-many relationship has too few objects (`NSValidationRelationshipLacksMinimumCountError`).
        public static let validationRelationshipLacksMinimumCount = Code(rawValue: 1580)
        /// 1590: a to-many relationship has too many objects (`NSValidationRelationshipExceedsMaximumCountError`).
        public static let validationRelationshipExceedsMaximumCount = Code(rawValue: 1590)
        /// 1600: a deny delete rule refused the delete (`NSValidationRelationshipDeniedDeleteError`).
        public static let validationRelationshipDeniedDelete = Code(rawValue: 1600)
        /// 1610: a number is above its maximum (`NSValidationNumberTooLargeError`).
        public static let validationNumberTooLarge = Code(rawValue: 1610)
        /// 1620: a number is below its minimum (`NSValidationNumberTooSmallError`).
        public static let validationNumberTooSmall = Code(rawValue: 1620)
        /// 1630: a date is after its latest allowed date (`NSValidationDateTooLateError`).
        public static let validationDateTooLate = Code(rawValue: 1630)
        /// 1640: a date is before its earliest allowed date (`NSValidationDateTooSoonError`).
        public static let validationDateTooSoon = Code(rawValue: 1640)
        /// 1650: a date is not valid (`NSValidationInvalidDateError`).
        public static let validationInvalidDate = Code(rawValue: 1650)
        /// 1660: a string is longer than its maximum length (`NSValidationStringTooLongError`).
        public static let validationStringTooLong = Code(rawValue: 1660)
        /// 1670: a string is shorter than its minimum length (`NSValidationStringTooShortError`).
        public static let validationStringTooShort = Code(rawValue: 1670)
        /// 1680: a string does not match its pattern (`NSValidationStringPatternMatchingError`).
        public static let validationStringPatternMatching = Code(rawValue: 1680)
        /// 132000: a context could not be used (`NSManagedObjectContextLockingError`).
        public static let managedObjectContextLocking = Code(rawValue: 132000)
        /// 133000: the object an ID refers to does not exist in the store (`NSManagedObjectReferentialIntegrityError`).
        public static let managedObjectReferentialIntegrity = Code(rawValue: 133000)
        /// 133010: an object refers to an object in another store (`NSManagedObjectExternalRelationshipError`).
        public static let managedObjectExternalRelationship = Code(rawValue: 133010)
        /// 133020: optimistic locking failed: the object changed in the store since it was read (`NSManagedObjectMergeError`).
        public static let managedObjectMerge = Code(rawValue: 133020)
        /// 133021: a uniqueness constraint was violated (`NSManagedObjectConstraintMergeError`).
        public static let managedObjectConstraintMerge = Code(rawValue: 133021)
        /// 134000: the store type is unknown or the file is not a store (`NSPersistentStoreInvalidTypeError`).
        public static let persistentStoreInvalidType = Code(rawValue: 134000)
        /// 134010: the store is not of the type asked for (`NSPersistentStoreTypeMismatchError`).
        public static let persistentStoreTypeMismatch = Code(rawValue: 134010)
        /// 134020: the store's schema does not fit the model (`NSPersistentStoreIncompatibleSchemaError`).
        public static let persistentStoreIncompatibleSchema = Code(rawValue: 134020)
        /// 134030: a save to the store failed (`NSPersistentStoreSaveError`).
        public static let persistentStoreSave = Code(rawValue: 134030)
        /// 134060: a general Core Data error, such as a malformed request (`NSCoreDataError`).
        public static let coreData = Code(rawValue: 134060)
        /// 134070: a store operation failed (`NSPersistentStoreOperationError`).
        public static let persistentStoreOperation = Code(rawValue: 134070)
        /// 134080: the store could not be opened (`NSPersistentStoreOpenError`).
        public static let persistentStoreOpen = Code(rawValue: 134080)
        /// 134090: the store was busy for too long (`NSPersistentStoreTimeoutError`).
        public static let persistentStoreTimeout = Code(rawValue: 134090)
        /// 134900: a save's COMMIT was sent to a database server and no answer came back, and the
        /// server could not be asked afterwards whether it committed. OpenCoreData's own code:
        /// Core Data has no client-server store. The context keeps its changes; saving them again
        /// cannot write them twice (a row the lost commit wrote has moved on, so the retry meets a
        /// conflict instead — see docs/PostgreSQL.md, "When the server or the network fails").
        public static let persistentStoreCommitOutcomeUnknown = Code(rawValue: 134900)
        /// 134100: the store was written with a different model (`NSPersistentStoreIncompatibleVersionHashError`).
        public static let persistentStoreIncompatibleVersionHash = Code(rawValue: 134100)
        /// 134110: migrating a store failed (`NSMigrationError`).
        public static let migration = Code(rawValue: 134110)
        /// 134130: the model a store was written with is not among the models at hand
        /// (`NSMigrationMissingSourceModelError`).
        public static let migrationMissingSourceModel = Code(rawValue: 134130)
        /// 134140: a migration step needs a mapping model that cannot be used
        /// (`NSMigrationMissingMappingModelError`).
        public static let migrationMissingMappingModel = Code(rawValue: 134140)
        /// 134190: no mapping can be inferred between two models (`NSInferredMappingModelError`).
        public static let inferredMappingModel = Code(rawValue: 134190)
        /// 134180: SQLite reported an error (`NSSQLiteError`).
        public static let sqlite = Code(rawValue: 134180)
        /// 134301: the history token refers to deleted history (`NSPersistentHistoryTokenExpiredError`).
        public static let persistentHistoryTokenExpired = Code(rawValue: 134301)

        public var description: String { String(rawValue) }
    }

    /// Core Data's error code.
    public var code: Code
    /// What went wrong and what to do about it.
    public var message: String
    /// The key (property name) concerned, when there is one.
    public var key: String?
    /// The IDs of the objects concerned.
    public var affectedObjectIDs: [ManagedObjectID]
    /// For optimistic-locking errors (133020): the conflicts found.
    public var conflicts: [MergeConflict]
    /// For uniqueness-constraint errors (133021): the conflicts found.
    public var constraintConflicts: [ConstraintConflict] = []
    /// For a failure the store's database engine reported: what it said (engine, code, statement).
    public var storeDetail: StoreErrorDetail?
    /// Several errors reported together (code 1560).
    public var underlyingErrors: [CoreDataError]

    /// Makes an error.
    public init(
        _ code: Code,
        _ message: String,
        key: String? = nil,
        affectedObjectIDs: [ManagedObjectID] = [],
        conflicts: [MergeConflict] = [],
        storeDetail: StoreErrorDetail? = nil,
        underlyingErrors: [CoreDataError] = []
    ) {
        self.code = code
        self.message = message
        self.key = key
        self.affectedObjectIDs = affectedObjectIDs
        self.conflicts = conflicts
        self.storeDetail = storeDetail
        self.underlyingErrors = underlyingErrors
    }

    public var description: String {
        var text = "CoreDataError \(code.rawValue): \(message)"
        if let storeDetail { text += " (\(storeDetail))" }
        for error in underlyingErrors { text += "\n  - \(error.description)" }
        return text
    }
}
