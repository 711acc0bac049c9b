import Foundation
import OpenCoreDataCore

/// Core Data's persistent-history tables, shared by the SQL stores: `ATRANSACTION` (one row per
/// save or batch request), `ACHANGE` (one row per changed object), `ATRANSACTIONSTRING` (authors,
/// context names, process and bundle identifiers, stored once and referenced by the `…TS`
/// columns). Their keys come from `Z_PRIMARYKEY` like any entity's, under these `Z_ENT`s.
package enum HistoryTables {
    /// The history tables, keyed by `Z_PK INTEGER PRIMARY KEY` as entity tables are.
    package static let tableNames = ["ACHANGE", "ATRANSACTION", "ATRANSACTIONSTRING"]
    package static let changeEntity = 16001
    package static let transactionEntity = 16002
    package static let stringEntity = 16003

    /// The refusal of a write by a store that does not record history, in a store another
    /// coordinator or process started recording history in after it was opened. Core Data opens
    /// such a store read-only ("Store opened without NSPersistentHistoryTrackingKey but previously
    /// had been opened with NSPersistentHistoryTrackingKey"); writing on would leave the other
    /// process's history without these changes.
    package static func startedElsewhere(in store: String) -> CoreDataError {
        CoreDataError(.persistentStoreSave, """
            Another coordinator or process started recording persistent history in \(store) after it was \
            opened here without NSPersistentHistoryTrackingKey; nothing was written, since the change would be \
            missing from that history. A store that records history is read-only to coordinators without the \
            option, as with Core Data: add the store with NSPersistentHistoryTrackingKey set to true.
            """)
    }

    /// `ACHANGE.ZCOLUMNS`: changed slots as a little-endian bit vector (bit n: slot n).
    package static func bitVector(_ slots: [Int]) -> Data {
        var bytes = [UInt8](repeating: 0, count: ((slots.max() ?? 0) / 8) + 1)
        for slot in slots { bytes[slot / 8] |= 1 << UInt8(slot % 8) }
        return Data(bytes)
    }

    /// The slots a `ZCOLUMNS` bit vector names.
    package static func slots(of bitVector: Data) -> [Int] {
        var slots: [Int] = []
        for (index, byte) in bitVector.enumerated() {
            for bit in 0..<8 where byte & (1 << UInt8(bit)) != 0 { slots.append(index * 8 + bit) }
        }
        return slots
    }

    /// The distinct authors of the recorded transactions (what inspection lists): Core Data keeps
    /// them in `ATRANSACTIONSTRING`, referred to by `ZAUTHORTS`; older stores in `ZAUTHOR`.
    package static let authorsQuery = """
        SELECT DISTINCT COALESCE(s.ZNAME, t.ZAUTHOR) AS author FROM ATRANSACTION t LEFT JOIN \
        ATRANSACTIONSTRING s ON s.Z_PK = t.ZAUTHORTS WHERE COALESCE(s.ZNAME, t.ZAUTHOR) IS NOT NULL ORDER BY \
        author
        """
    /// The same for a store without `ATRANSACTIONSTRING`.
    package static let plainAuthorsQuery = "SELECT DISTINCT ZAUTHOR FROM ATRANSACTION WHERE ZAUTHOR IS NOT NULL ORDER BY ZAUTHOR"
}
