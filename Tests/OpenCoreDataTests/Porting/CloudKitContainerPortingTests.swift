import Foundation
import OpenCoreData
import Testing
import TestSupport

/// A stack written for `NSPersistentCloudKitContainer`, as Xcode's CloudKit template sets it up:
/// it runs, on a local store that keeps its history (nothing syncs).
@Suite(.dedicatedThread) struct CloudKitContainerPortingTests {
    @Test func theCloudKitTemplatesStackWorksLocally() throws {
        let directory = TemporaryDirectory()
        let container = NSPersistentCloudKitContainer(name: "Notes", managedObjectModel: ManagedObjectModel(Note.self))
        let description = try #require(container.persistentStoreDescriptions.first)
        description.url = directory.file("Notes.sqlite")
        description.cloudKitContainerOptions = NSPersistentCloudKitContainerOptions(containerIdentifier: "iCloud.com.example.Notes")
        description.setOption(true as NSNumber, forKey: NSPersistentHistoryTrackingKey)
        try container.loadPersistentStores()
        try container.initializeCloudKitSchema(options: [.dryRun])
        #expect(container.persistentStoreDescriptions.first?.cloudKitContainerOptions?.containerIdentifier == "iCloud.com.example.Notes")

        let context = container.newBackgroundContext()
        let transactions = try context.performAndWait { () throws in
            let note = Note(context: context)
            note.text1 = "kept locally"
            try context.save()
            return try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)).transactions
        }
        #expect(transactions.count == 1)
        let reader = container.newBackgroundContext()
        let texts = try reader.performAndWait { try reader.fetch(Note.fetchRequest()).map(\.text1) }
        #expect(texts == ["kept locally"])
    }
}
