import Foundation
import OpenCoreDataCore
import OpenCoreDataSQL

extension Migrator {

    /// History rows come along; changes follow their objects' new entity numbers and keys.
    func copyHistory() throws {
        for table in ["ATRANSACTIONSTRING", "ATRANSACTION", "ACHANGE"] where try source.tableExists(table) {
            let columns = Set(try target.columns(of: table))
            let ordered = try source.columns(of: table).filter { columns.contains($0) }
            let select = try source.prepare("SELECT \(SQLFragment.identifiers(ordered)) FROM \(identifier: table)" as SQLFragment)
            defer { select.finalize() }
            let insert = try target.prepare(RelationalLayout.insertRowStatement(table, columns: ordered).rendered(for: .sqlite).sql)
            defer { insert.finalize() }
            let entityColumn = ordered.firstIndex(of: "ZENTITY"), keyColumn = ordered.firstIndex(of: "ZENTITYPK")
            rowLoop: while try select.step() {
                var values = ordered.indices.map { Self.raw(select, Int32($0)) }
                if table == "ACHANGE", let entityColumn, let keyColumn, case .integer(let number) = values[entityColumn] {
                    guard let entity = sourceLayout.entitiesByNumber[Int(number)], let destination = mapping.destination(of: entity) else { continue rowLoop }
                    values[entityColumn] = .integer(Int64(targetLayout.entityNumber(of: destination)))
                    if case .integer(let key) = values[keyColumn], let moved = keys[try sourceLayout.mapping(for: entity).table]?[key] {
                        values[keyColumn] = .integer(moved.key)
                    }
                }
                try insert.bind(values)
                try insert.run()
            }
        }
        let copy = try target.prepare("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ?")
        defer { copy.finalize() }
        let counters = try source.prepare("SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT > 16000")
        defer { counters.finalize() }
        while try counters.step() {
            try copy.bind([.integer(counters.int64(at: 1)), .integer(counters.int64(at: 0))])
            try copy.run()
        }
    }
}
