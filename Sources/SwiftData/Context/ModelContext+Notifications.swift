public import Foundation
import OpenCoreDataCore

extension ModelContext {
    /// Posted (object: the context) when the context is about to save; no `userInfo`.
    public static let willSave = Notification.Name("ModelContextWillSave")
    /// Posted (object: the context) after the context saved, with the saved models'
    /// identifiers under ``NotificationKey`` (arrays of ``PersistentIdentifier``).
    public static let didSave = Notification.Name("ModelContextDidSave")

    /// The `userInfo` keys of ``didSave``.
    public enum NotificationKey: String, Sendable {
        /// The identifiers of the inserted models (permanent ones).
        case insertedIdentifiers
        /// The identifiers of the updated models.
        case updatedIdentifiers
        /// The identifiers of the deleted models.
        case deletedIdentifiers
        /// Not posted here: query generations are not used by model contexts.
        case queryGeneration
        /// Not posted here: a save never invalidates every model.
        case invalidatedAllIdentifiers
    }

    /// Saves, posting ``willSave`` before and ``didSave`` after (with the identifiers the context
    /// underneath announced for this save).
    func saveAnnouncing() throws {
        try onQueue {
            NotificationCenter.default.post(name: Self.willSave, object: self)
            // The context underneath announces a save's IDs on its queue, inside `save()`.
            let saved = Locked<[String: Set<ManagedObjectID>]?>(nil)
            let observer = NotificationCenter.default.addObserver(forName: ManagedObjectContext.didSaveObjectIDsNotification,
                                                                  object: managed, queue: nil) { notification in
                let ids = notification.userInfo as? [String: Set<ManagedObjectID>]
                saved.withLock { $0 = ids }
            }
            defer { NotificationCenter.default.removeObserver(observer) }
            try managed.save()
            guard let ids = saved.withLock({ $0 }) else { return }
            func identifiers(_ key: String) -> [PersistentIdentifier] { (ids[key] ?? []).map(PersistentIdentifier.init) }
            NotificationCenter.default.post(name: Self.didSave, object: self, userInfo: [
                NotificationKey.insertedIdentifiers.rawValue: identifiers(NSInsertedObjectIDsKey),
                NotificationKey.updatedIdentifiers.rawValue: identifiers(NSUpdatedObjectIDsKey),
                NotificationKey.deletedIdentifiers.rawValue: identifiers(NSDeletedObjectIDsKey),
            ])
        }
    }
}
