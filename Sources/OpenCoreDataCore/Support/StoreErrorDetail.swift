/// What a store's database engine said about a failure, carried by a ``CoreDataError`` for
/// diagnosis: which engine, its own code for the failure, and the statement that failed (its text,
/// never its values). The store decides what the code means; Core asks it through questions such
/// as ``isTransientConflict``.
public struct StoreErrorDetail: Sendable, Hashable, CustomStringConvertible {
    /// The engine: `"SQLite"` or `"PostgreSQL"`.
    public let engine: String
    /// The engine's code: SQLite's extended result code (`"2067"`), PostgreSQL's SQLSTATE
    /// (`"40P01"`).
    public let code: String
    /// The statement that failed, without its values, when there was one.
    public let statement: String?
    /// Whether the same work, tried again, may succeed: the engine gave up because of another
    /// writer (a deadlock, a serialization failure, a busy or locked database), not because of the
    /// work itself.
    public let isTransientConflict: Bool

    /// A store's detail of a failure (`transient` as ``isTransientConflict`` says).
    package init(engine: String, code: String, statement: String? = nil, transient: Bool = false) {
        self.engine = engine
        self.code = code
        self.statement = statement
        self.isTransientConflict = transient
    }

    public var description: String {
        "\(engine) code \(code)" + (statement.map { " — SQL: \($0)" } ?? "")
    }
}
