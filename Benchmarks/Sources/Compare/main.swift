import Foundation
import OpenCoreData

@Managed
final class Note: ManagedObject {
    var id: Int32 = 0
    var text1: String?
    var text2: String?
    var text3: String?
}

if CommandLine.arguments.contains("--memory") {
    try MemoryScenario.run(count: CommandLine.arguments.contains("--quick") ? 100_000 : 1_000_000)
    exit(0)
}

let n = CommandLine.arguments.contains("--quick") ? 10_000 : 100_000
let runs = 5

func measure(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000_000
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

func scratchFile(_ name: String) -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-bench-\(UUID().uuidString)").appendingPathComponent(name)
    try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    return url
}

var oursInsert: [Double] = [], rawInsert: [Double] = [], oursFetch: [Double] = [], rawFetch: [Double] = []
for _ in 0..<runs {
    let rows = (0..<n).map { RawNote(id: Int32($0), text1: "text one \($0)", text2: "text two", text3: nil) }
    let raw = RawSQLitePeer(path: scratchFile("raw.sqlite").path)
    rawInsert.append(measure { raw.insert(rows) })
    rawFetch.append(measure { precondition(raw.fetchAll().count == n) })

    let container = PersistentContainer(name: "Bench", managedObjectModel: ManagedObjectModel(Note.self))
    container.persistentStoreDescriptions = [PersistentStoreDescription(url: scratchFile("ours.sqlite"))]
    try container.loadPersistentStores()
    let context = container.newBackgroundContext()
    try context.performAndWait {
        oursInsert.append(try measure {
            for row in rows {
                let note = Note(context: context)
                note.id = row.id
                note.text1 = row.text1
                note.text2 = row.text2
                note.text3 = row.text3
            }
            try context.save()
        })
    }
    let reader = container.newBackgroundContext()
    try reader.performAndWait {
        oursFetch.append(try measure {
            var checksum = 0
            for note in try reader.fetch(Note.fetchRequest()) {
                checksum &+= Int(note.id) &+ (note.text1?.utf8.count ?? 0) &+ (note.text2?.utf8.count ?? 0) &+ (note.text3?.utf8.count ?? 0)
            }
            precondition(checksum != 0)
        })
    }
}
func row(_ name: String, _ ours: [Double], _ raw: [Double]) {
    print(String(format: "%-28@ %10.1f ms %10.1f ms %8.2f×", name as NSString, median(ours), median(raw), median(ours) / median(raw)))
}
print("N = \(n), median of \(runs) runs (ours vs raw SQLite, same process)")
print(String(format: "%-28@ %13@ %13@ %9@", "scenario" as NSString, "ours" as NSString, "raw" as NSString, "ratio" as NSString))
row("insert + save", oursInsert, rawInsert)
row("fetch all, read attributes", oursFetch, rawFetch)
