import Foundation
import OpenCoreData
import Testing

/// The SQLite store binds text and blob values from a buffer of the statement's own that SQLite
/// reads in place: every value of every row of a save must reach the file as it was, whatever
/// the sizes (a buffer too small for a row, values larger than it, empty ones) and whichever
/// values the rows before left bound.
@Suite(.dedicatedThread) struct BoundValueTests {
    /// Text of `length` characters (a two-byte character every seventh), different per row.
    private func text(_ length: Int, row: Int) -> String {
        String((0..<length).map { $0 % 7 == 6 ? "é" : Character(UnicodeScalar(UInt8(97 + (row + $0) % 26))) })
    }

    private func bytes(_ count: Int, row: Int) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ row) })
    }

    @Test func textsBlobsAndUUIDsOfEverySizeReachTheFileAsTheyWere() throws {
        let stack = try TestStack(.sqlite)
        // Lengths around the buffer's sizes and past its largest value (64 KiB), and nil.
        let lengths = [0, 1, 15, 16, 17, 100, 255, 256, 257, 1_000, 4_097, 65_536, 65_537, 200_000]
        var expected: [String: (note: String?, title: String, payload: Data?, identifier: UUID?)] = [:]
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            for row in 0..<120 {
                let sample = Sample(context: context)
                sample.code = "row \(row)"
                let length = lengths[row % lengths.count]
                sample.title = text(length, row: row)
                sample.note = row % 5 == 0 ? nil : text(lengths[(row * 7) % lengths.count], row: row + 1)
                sample.payload = row % 4 == 0 ? nil : bytes(lengths[(row * 3) % lengths.count], row: row)
                sample.identifier = row % 3 == 0 ? nil : UUID()
                expected[sample.code] = (sample.note, sample.title, sample.payload, sample.identifier)
            }
            try context.save()
            // Updates bind through the same statements again, with other sizes.
            let request = Sample.fetchRequest()
            request.predicate = NSPredicate(format: "code ENDSWITH '1' OR code ENDSWITH '4'")
            for sample in try context.fetch(request) {
                let row = Int(sample.code.dropFirst(4))!
                sample.title = text(lengths[(row + 5) % lengths.count], row: row + 2)
                sample.payload = bytes(lengths[(row + 9) % lengths.count], row: row + 3)
                expected[sample.code]?.title = sample.title
                expected[sample.code]?.payload = sample.payload
            }
            try context.save()
        }
        // Read back by another coordinator: from the file, not from anything kept in memory.
        let reader = try PersistentContainer.loaded(at: stack.storeURL, model: stack.container.managedObjectModel)
        let readContext = reader.newBackgroundContext()
        try readContext.performAndWait { () throws in
            let samples = try readContext.fetch(Sample.fetchRequest())
            #expect(samples.count == 120)
            for sample in samples {
                guard let want = expected[sample.code] else {
                    Issue.record("unexpected row \(sample.code)")
                    continue
                }
                #expect(sample.title == want.title, "title of \(sample.code)")
                #expect(sample.note == want.note, "note of \(sample.code)")
                #expect(sample.payload == want.payload, "payload of \(sample.code)")
                #expect(sample.identifier == want.identifier, "identifier of \(sample.code)")
            }
        }
    }
}
