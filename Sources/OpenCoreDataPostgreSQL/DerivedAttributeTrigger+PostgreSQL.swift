import OpenCoreDataSQL

extension DerivedAttributeTrigger {
    /// One PL/pgSQL function and the triggers that run it.
    struct PostgreSQLTriggers {
        /// The function's name and its `CREATE OR REPLACE FUNCTION`.
        var function: (name: String, sql: String)
        /// Each trigger's name and its `CREATE OR REPLACE TRIGGER`.
        var triggers: [(name: String, sql: String)]
    }

    /// The PostgreSQL triggers that keep the attribute current in `schema`: the same rules as
    /// the SQLite store's (Core Data's) triggers, as PL/pgSQL functions whose statements name the
    /// schema's tables (so that they work whatever `search_path` the writing session has). An
    /// update trigger fires only when its column's value changes (SQLite's fire whenever the
    /// column is written, changing nothing when the value is the same), so that a save rewriting
    /// a page does not lock its book.
    func postgreSQLTriggers(schema: String) -> [PostgreSQLTriggers] {
        let table = { (name: String) in PostgreSQLSQL.quoted(schema) + "." + name }
        func function(_ name: String, _ body: String) -> (name: String, sql: String) {
            let name = SQLDialect.postgreSQL.identifier(name)
            return (name, """
                CREATE OR REPLACE FUNCTION \(PostgreSQLSQL.quoted(schema)).\(name)() RETURNS trigger LANGUAGE \
                plpgsql AS $body$ BEGIN \(body) RETURN NULL; END $body$
                """)
        }
        func trigger(_ name: String, _ event: String, on target: String, when condition: String? = nil,
                     runs function: String) -> (name: String, sql: String) {
            let name = SQLDialect.postgreSQL.identifier(name)
            return (name,
                    "CREATE OR REPLACE TRIGGER \(name) AFTER \(event) ON \(table(target)) FOR EACH ROW" + (condition.map { " WHEN (\($0))" } ?? "")
                        + " EXECUTE FUNCTION \(PostgreSQLSQL.quoted(schema)).\(function)()")
        }
        switch kind {
        case .count(let parameterTable, let key):
            let prefix = "Z_DA_\(parameterTable)_\(entity)_\(attribute)"
            let parameter = function(prefix + "_PARAMETER", """
                IF TG_OP <> 'INSERT' AND OLD.\(key) IS NOT NULL THEN UPDATE \(table(source)) SET \(column) = \
                \(column) - 1 WHERE Z_PK = OLD.\(key); END IF; 
                """
                                     + """
                                         IF TG_OP <> 'DELETE' AND NEW.\(key) IS NOT NULL THEN UPDATE \
                                         \(table(source)) SET \(column) = COALESCE(\(column), 0) + 1 WHERE \
                                         Z_PK = NEW.\(key); END IF;
                                         """)
            let sourcePrefix = "Z_DA_\(source)_\(entity)_\(attribute)"
            let insert = function(sourcePrefix + "_SOURCE", """
                UPDATE \(table(source)) SET \(column) = (SELECT COUNT(\(key)) FROM \(table(parameterTable)) \
                WHERE \(key) = NEW.Z_PK) WHERE Z_PK = NEW.Z_PK;
                """)
            return [
                PostgreSQLTriggers(function: parameter, triggers: [
                    trigger(prefix + "_PARAMETER_INSERT", "INSERT", on: parameterTable, runs: parameter.name),
                    trigger(prefix + "_PARAMETER_UPDATE", "UPDATE OF \(key)", on: parameterTable, when: "OLD.\(key) IS DISTINCT FROM NEW.\(key)",
                            runs: parameter.name),
                    trigger(prefix + "_PARAMETER_DELETE", "DELETE", on: parameterTable, runs: parameter.name),
                ]),
                PostgreSQLTriggers(function: insert, triggers: [trigger(sourcePrefix + "_SOURCE_INSERT", "INSERT", on: source, runs: insert.name)]),
            ]
        case .copy(let foreignKey, let parameterTable, let parameterColumn):
            let prefix = "Z_DA_\(source)_\(entity)_\(attribute)"
            let parameter = function(prefix + "_PARAMETER",
                                     "UPDATE \(table(source)) SET \(column) = NEW.\(parameterColumn) WHERE \(foreignKey) = NEW.Z_PK;")
            let read = function(prefix + "_SOURCE", """
                UPDATE \(table(source)) SET \(column) = (SELECT \(parameterColumn) FROM \
                \(table(parameterTable)) WHERE Z_PK = NEW.\(foreignKey)) WHERE Z_PK = NEW.Z_PK;
                """)
            return [
                PostgreSQLTriggers(function: parameter, triggers: [
                    trigger(prefix + "_PARAMETER_UPDATE", "UPDATE OF \(parameterColumn)", on: parameterTable,
                            when: "OLD.\(parameterColumn) IS DISTINCT FROM NEW.\(parameterColumn)", runs: parameter.name),
                ]),
                PostgreSQLTriggers(function: read, triggers: [
                    trigger(prefix + "_SOURCE_UPDATE", "UPDATE OF \(foreignKey)", on: source,
                            when: "OLD.\(foreignKey) IS DISTINCT FROM NEW.\(foreignKey)", runs: read.name),
                    trigger(prefix + "_SOURCE_INSERT", "INSERT", on: source, runs: read.name),
                ]),
            ]
        }
    }
}
