import Foundation
import OpenCoreDataCore

extension RelationalMigrator {

    /// History rows come along; changes follow their objects' new entity numbers and keys.
    func copyHistory() throws {
        for table in ["ATRANSACTIONSTRING", "ATRANSACTION", "ACHANGE"] where try sessions.sourceHasTable(table) {
            let columns = Set(try sessions.targetColumns(of: table).map { $0.uppercased() })
            let ordered = try sessions.sourceColumns(of: table).filter { columns.contains($0.uppercased()) }
            var insert = try sessions.inserter(into: table, columns: ordered, orIgnore: false)
            let entityColumn = ordered.firstIndex { $0.uppercased() == "ZENTITY" }, keyColumn = ordered.firstIndex { $0.uppercased() == "ZENTITYPK" }
            try source.forEachRow("SELECT \(SQLFragment.identifiers(ordered)) FROM \(identifier: table)") { row in
                var values = ordered.indices.map { row.raw($0) }
                if table == "ACHANGE", let entityColumn, let keyColumn, case .integer(let number) = values[entityColumn] {
                    guard let entity = sourceLayout.entitiesByNumber[Int(number)], let destination = mapping.destination(of: entity) else { return }
                    values[entityColumn] = .integer(Int64(targetLayout.entityNumber(of: destination)))
                    if case .integer(let key) = values[keyColumn], let moved = keys[try sourceLayout.mapping(for: entity).table]?[key] {
                        values[keyColumn] = .integer(moved.key)
                    }
                }
                try insert.insert(values)
            }
            try insert.finish()
        }
        var counters: [(entity: Int64, maximum: Int64)] = []
        try source.forEachRow("SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT > 16000") { counters.append(($0.key(0), $0.key(1))) }
        for counter in counters {
            _ = try target.run("""
                UPDATE \(sessions.targetTable("Z_PRIMARYKEY")) SET Z_MAX = \(bind: .integer(counter.maximum)) \
                WHERE Z_ENT = \(bind: .integer(counter.entity))
                """)
        }
        try sessions.historyCopied()
    }
}
