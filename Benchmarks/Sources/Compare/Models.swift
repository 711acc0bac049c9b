import Foundation
import GRDB
import OpenCoreData

/// The seeds' note, as an OpenCoreData model.
@Managed
final class Note: ManagedObject {
    var id: Int32 = 0
    var text1: String?
    var text2: String?
    var text3: String?
}

/// The same row as a plain struct (raw SQLite) and as a GRDB record with hand-written
/// `init(row:)` / `encode(to:)` (GRDB's fastest idiomatic form).
struct RawNote: FetchableRecord, PersistableRecord {
    static let databaseTableName = "ZNOTE"
    var pk: Int64
    var id: Int32
    var text1: String?
    var text2: String?
    var text3: String?

    init(pk: Int64, id: Int32, text1: String?, text2: String?, text3: String?) {
        (self.pk, self.id, self.text1, self.text2, self.text3) = (pk, id, text1, text2, text3)
    }

    init(row: Row) {
        pk = row[0]
        id = row[1]
        text1 = row[2]
        text2 = row[3]
        text3 = row[4]
    }

    func encode(to container: inout PersistenceContainer) {
        container["Z_PK"] = pk
        container["Z_ENT"] = 1
        container["Z_OPT"] = 1
        container["ZID"] = id
        container["ZTEXT1"] = text1
        container["ZTEXT2"] = text2
        container["ZTEXT3"] = text3
    }

    static var databaseSelection: [any SQLSelectable] { [Column("Z_PK"), Column("ZID"), Column("ZTEXT1"), Column("ZTEXT2"), Column("ZTEXT3")] }

    static func rows(_ n: Int) -> [RawNote] {
        (0..<n).map { RawNote(pk: Int64($0 + 1), id: Int32($0), text1: "text one \($0)", text2: "text two", text3: nil) }
    }
}

/// The table every peer writes: Core Data's layout for `Note`.
let noteTableSQL = "CREATE TABLE IF NOT EXISTS ZNOTE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZID INTEGER, ZTEXT1 VARCHAR, ZTEXT2 VARCHAR, ZTEXT3 VARCHAR)"
