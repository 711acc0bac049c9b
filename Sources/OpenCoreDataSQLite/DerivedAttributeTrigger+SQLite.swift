import OpenCoreDataSQL

extension DerivedAttributeTrigger {
    /// The SQLite triggers, with Core Data's SQL and names (read from stores it wrote), so that
    /// either framework keeps the other's values. Counts call Core Data's
    /// `NSCoreDataDATrigger…AffectedObjectValue` functions as its triggers do (`SQLiteFunctions`).
    var sqliteStatements: [String] {
        switch kind {
        case .count(let parameterTable, let key):
            func tell(_ function: String, _ row: String) -> String {
                "SELECT \(function)('\(source)', Z_ENT, Z_PK, '\(attribute)', \(column)) FROM \(source) WHERE Z_PK = \(row);"
            }
            let prefix = "Z_DA_\(parameterTable)_\(entity)_\(attribute)"
            let updated = "NSCoreDataDATriggerUpdatedAffectedObjectValue"
            return [
                """
                    CREATE TRIGGER IF NOT EXISTS \(prefix)_PARAMETER_INSERT AFTER INSERT ON \(parameterTable) \
                    FOR EACH ROW WHEN (NEW.\(key) NOT NULL) BEGIN UPDATE \(source) SET \(column) = \
                    IFNULL(\(column), 0) + 1 WHERE Z_PK = NEW.\(key); \(tell(updated, "NEW.\(key)")) END
                    """,
                """
                    CREATE TRIGGER IF NOT EXISTS \(prefix)_PARAMETER_UPDATE_INCREMENT AFTER UPDATE OF \(key) \
                    ON \(parameterTable) FOR EACH ROW WHEN (NEW.\(key) NOT NULL) BEGIN UPDATE \(source) SET \
                    \(column) = \(column) + 1 WHERE Z_PK = NEW.\(key); \(tell(updated, "NEW.\(key)")) END
                    """,
                """
                    CREATE TRIGGER IF NOT EXISTS \(prefix)_PARAMETER_UPDATE_DECREMENT AFTER UPDATE OF \(key) \
                    ON \(parameterTable) FOR EACH ROW WHEN (OLD.\(key) NOT NULL) BEGIN UPDATE \(source) SET \
                    \(column) = \(column) - 1 WHERE Z_PK = OLD.\(key); \(tell(updated, "OLD.\(key)")) END
                    """,
                """
                    CREATE TRIGGER IF NOT EXISTS \(prefix)_PARAMETER_DELETE AFTER DELETE ON \(parameterTable) \
                    FOR EACH ROW WHEN (OLD.\(key) NOT NULL) BEGIN UPDATE \(source) SET \(column) = \(column) - \
                    1 WHERE Z_PK = OLD.\(key); \(tell(updated, "OLD.\(key)")) END
                    """,
                """
                    CREATE TRIGGER IF NOT EXISTS Z_DA_\(source)_\(entity)_\(attribute)_SOURCE_INSERT AFTER \
                    INSERT ON \(source) FOR EACH ROW BEGIN UPDATE \(source) SET \(column) = (SELECT \
                    IFNULL(COUNT(\(key)), 0) FROM \(parameterTable) WHERE \(key) = NEW.Z_PK) WHERE Z_PK = \
                    NEW.Z_PK; \(tell("NSCoreDataDATriggerInsertUpdatedAffectedObjectValue", "NEW.Z_PK")) END
                    """,
            ]
        case .copy(let foreignKey, let parameterTable, let parameterColumn):
            let prefix = "Z_DA_\(source)_\(entity)_\(attribute)"
            let read = """
                UPDATE \(source) SET \(column) = (SELECT \(parameterColumn) FROM \(parameterTable) WHERE Z_PK \
                = NEW.\(foreignKey)) WHERE Z_PK = NEW.Z_PK;
                """
            return [
                """
                    CREATE TRIGGER IF NOT EXISTS \(prefix)_PARAMETER_UPDATE AFTER UPDATE OF \(parameterColumn) \
                    ON \(parameterTable) FOR EACH ROW BEGIN UPDATE \(source) SET \(column) = \
                    NEW.\(parameterColumn) WHERE \(foreignKey) = NEW.Z_PK; END
                    """,
                "CREATE TRIGGER IF NOT EXISTS \(prefix)_SOURCE_UPDATE AFTER UPDATE OF \(foreignKey) ON \(source) FOR EACH ROW BEGIN \(read) END",
                "CREATE TRIGGER IF NOT EXISTS \(prefix)_SOURCE_INSERT AFTER INSERT ON \(source) FOR EACH ROW BEGIN \(read) END",
            ]
        }
    }
}
