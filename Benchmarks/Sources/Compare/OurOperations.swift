import Foundation
import OpenCoreData

/// Our side of the core scenarios, the same whatever the store: each returns its milliseconds.
enum OurOperations {
    /// Inserts a note per row and saves once.
    static func insertAndSave(_ rows: [RawNote], in context: ManagedObjectContext) throws -> Double {
        try context.performAndWait { () throws in
            try measure {
                for row in rows {
                    let note = Note(context: context)
                    (note.id, note.text1, note.text2, note.text3) = (row.id, row.text1, row.text2, row.text3)
                }
                try context.save()
            }
        }
    }

    /// Fetches every note and reads every attribute.
    static func fetchAndReadAll(in context: ManagedObjectContext) throws -> Double {
        try context.performAndWait { () throws in
            try measure {
                var checksum = 0
                for note in try context.fetch(Note.fetchRequest()) {
                    checksum &+= Int(note.id) &+ (note.text1?.utf8.count ?? 0) &+ (note.text2?.utf8.count ?? 0) &+ (note.text3?.utf8.count ?? 0)
                }
                precondition(checksum != 0)
            }
        }
    }

    /// Looks up each object by ID and reads an attribute (each a fault fulfilled from the store).
    /// `sum:` of `id` grouped by `text2` as dictionary results; checks the first group's sum.
    static func groupSums(expecting sum: Int64, in context: ManagedObjectContext) throws -> Double {
        try context.performAndWait { () throws in
            let request = FetchRequest<NSDictionary>(entityName: "Note")
            request.propertiesToFetch = ["text2", ExpressionDescription(name: "total", function: "sum:", keyPath: "id")]
            request.propertiesToGroupBy = ["text2"]
            return try measure {
                let found = try context.fetch(request).first?["total"] as? Int64
                precondition(found == sum)
            }
        }
    }

    static func lookups(_ ids: [ManagedObjectID], in context: ManagedObjectContext) throws -> Double {
        try context.performAndWait { () throws in
            try measure {
                var found = 0
                for id in ids where (try context.existingObject(with: id) as? Note)?.text1 != nil { found += 1 }
                precondition(found == ids.count)
            }
        }
    }

    /// Sets one attribute of every note (fetched beforehand, not measured) and saves once.
    static func updateAllAndSave(in context: ManagedObjectContext) throws -> Double {
        try context.performAndWait { () throws in
            let notes = try context.fetch(Note.fetchRequest())
            return try measure {
                for note in notes { note.text2 = "updated" }
                try context.save()
            }
        }
    }
}
