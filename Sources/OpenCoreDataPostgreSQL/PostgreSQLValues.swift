import Foundation
import NIOCore
import OpenCoreDataCore
import PostgresNIO

/// How values cross to PostgreSQL and back. Every value is bound as a parameter, never written
/// into SQL text.
///
/// | value | bound as | read back from |
/// |---|---|---|
/// | integer | `bigint` | `smallint`, `integer`, `bigint` → integer |
/// | double | `double precision` | `real`, `double precision` → double |
/// | bool | `boolean` | `boolean` → bool |
/// | decimal | `numeric` | `numeric` → decimal |
/// | string, URL (absolute string) | `text` | `text`, `varchar`, `char`, `name` → string |
/// | date | `double precision`: seconds since 2001-01-01, as Core Data keeps dates | (a double, read by the attribute's type) |
/// | data | `bytea` | `bytea` → data |
/// | UUID | `uuid` | `uuid` → UUID |
/// | object | its primary key, `bigint` | (an integer) |
///
/// Dates are stored as Core Data's SQLite stores keep them, not as `timestamptz` (microseconds):
/// a date must come back equal to the one saved, or fetches by date would disagree with the
/// SQLite store.
package enum PostgreSQLValues {
    package static func bind(_ value: ManagedValue, into bindings: inout PostgresBindings) throws {
        switch value {
        case .null: bindings.appendNull()
        case .integer(let v): bindings.append(v)
        case .bool(let v): bindings.append(v)
        case .double(let v): bindings.append(v)
        case .decimal(let v): try bindings.append(v)
        case .string(let v): bindings.append(v)
        case .url(let v): bindings.append(v.absoluteString)
        case .date(let v): bindings.append(v.timeIntervalSinceReferenceDate)
        case .data(let v): try bindings.append(v)
        case .uuid(let v): bindings.append(v)
        case .object(let id):
            guard let key = id.primaryKey else {
                throw CoreDataError(.persistentStoreOperation, """
                    The object \(id) has no permanent ID yet and cannot be written to a PostgreSQL store: \
                    obtain permanent IDs (or save) first.
                    """)
            }
            bindings.append(key)
        }
    }

    /// The value of a cell, by its PostgreSQL type.
    package static func value(of cell: PostgresCell) throws -> ManagedValue {
        guard cell.bytes != nil else { return .null }
        do {
            switch cell.dataType {
            case .int2: return .integer(Int64(try cell.decode(Int16.self)))
            case .int4: return .integer(Int64(try cell.decode(Int32.self)))
            case .int8: return .integer(try cell.decode(Int64.self))
            case .float4: return .double(Double(try cell.decode(Float.self)))
            case .float8: return .double(try cell.decode(Double.self))
            case .bool: return .bool(try cell.decode(Bool.self))
            case .numeric: return .decimal(try cell.decode(Decimal.self))
            case .text, .varchar, .bpchar, .name: return .string(try cell.decode(String.self))
            case .bytea: return .data(try cell.decode(Data.self))
            case .uuid: return .uuid(try cell.decode(UUID.self))
            default:
                throw CoreDataError(.persistentStoreOperation, """
                    The column \(cell.columnName) has the PostgreSQL type \(cell.dataType), which a store does \
                    not read. Store tables are made by the store; was this one changed by hand?
                    """)
            }
        } catch let error as CoreDataError {
            throw error
        } catch {
            throw CoreDataError(.persistentStoreOperation, "The column \(cell.columnName) (\(cell.dataType)) could not be read: \(error).")
        }
    }

    /// What the server said, without the query text and bound values postgres-nio keeps beside
    /// it (they may hold user data).
    static func describe(_ error: PSQLError) -> String {
        guard let info = error.serverInfo else {
            return "\(error.code)" + (error.underlying.map { " (\($0))" } ?? "")
        }
        let message = info[.message] ?? "the server refused it"
        let state = info[.sqlState].map { " [SQLSTATE \($0)]" } ?? ""
        let detail = info[.detail].map { ": \($0)" } ?? ""
        let hint = info[.hint].map { ". \($0)" } ?? ""
        return message + detail + state + hint
    }
}
