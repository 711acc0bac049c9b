/// PostgreSQL's spelling of SQL pieces the store makes. Identifiers come from the model (or a
/// store URL) and are validated there; they are quoted all the same wherever SQL is made, so a
/// name can never be read as SQL.
package enum PostgreSQLSQL {
    /// `name` as a quoted identifier (`"name"`, inner quotes doubled); PostgreSQL keeps its case.
    package static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// A table (or other object) of `schema`, both quoted.
    package static func qualified(_ schema: String, _ name: String) -> String {
        quoted(schema) + "." + quoted(name)
    }
}
