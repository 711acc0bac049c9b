import CSQLite
import OpenCoreDataCore

extension StoreErrorDetail {
    /// SQLite's (extended) result code for the statement `sql`: busy and locked are transient.
    static func sqlite(_ code: Int32, sql: String? = nil) -> StoreErrorDetail {
        let primary = code & 0xff
        return StoreErrorDetail(engine: "SQLite", code: String(code), statement: sql, transient: primary == SQLITE_BUSY || primary == SQLITE_LOCKED)
    }
}

extension CoreDataError {
    /// SQLite's extended result code, when SQLite reported the failure.
    var sqliteCode: Int32? {
        guard let storeDetail, storeDetail.engine == "SQLite" else { return nil }
        return Int32(storeDetail.code)
    }
}
