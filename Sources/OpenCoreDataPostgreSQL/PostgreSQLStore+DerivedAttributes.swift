import OpenCoreDataCore
import OpenCoreDataSQL

extension PostgreSQLStore {
    /// Creates the triggers that keep the model's derived attributes current in `schema`
    /// (``DerivedAttributeTrigger``), inside the caller's transaction: those missing (a schema
    /// made before they were), or every one with `replacing` (tables moved from another schema
    /// keep triggers that run that schema's functions). Only what is missing is made on opening:
    /// creating a trigger locks its table against writers.
    static func ensureDerivedAttributeTriggers(_ session: PostgreSQLSession, schema: String, layout: RelationalLayout, model: ManagedObjectModel,
                                               replacing: Bool = false) throws {
        let wanted = layout.derivedAttributeTriggers(model: model).flatMap { $0.postgreSQLTriggers(schema: schema) }
        guard !wanted.isEmpty else { return }
        let present: Set<String> = replacing ? [] : Set(try session.execute("""
            SELECT t.tgname::text FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace \
            WHERE n.nspname = \(bind: .string(schema)) AND NOT t.tgisinternal
            """ as SQLFragment).rows.compactMap { row -> String? in
                if case .string(let name) = row[0] { name } else { nil }
            })
        for group in wanted where group.triggers.contains(where: { !present.contains($0.name) }) {
            try session.execute(text: group.function.sql)
            for trigger in group.triggers { try session.execute(text: trigger.sql) }
        }
    }
}
