import OpenCoreDataCore

extension StoreErrorDetail {
    /// The SQLSTATE a PostgreSQL server answered: a deadlock (`40P01`) and a serialization failure
    /// (`40001`) are transient.
    static func postgreSQL(_ sqlState: String) -> StoreErrorDetail {
        StoreErrorDetail(engine: "PostgreSQL", code: sqlState, transient: ["40P01", "40001"].contains(sqlState))
    }
}

extension CoreDataError {
    /// The SQLSTATE the server answered, when PostgreSQL reported the failure (`23505` for a
    /// unique index's refusal, `55P03` for a lock not granted in time, …).
    var sqlState: String? {
        get { storeDetail?.engine == "PostgreSQL" ? storeDetail?.code : nil }
        set { storeDetail = newValue.map(StoreErrorDetail.postgreSQL) }
    }
}
