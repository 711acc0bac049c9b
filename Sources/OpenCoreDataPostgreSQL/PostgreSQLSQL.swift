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

    /// `name` as PostgreSQL keeps it unquoted: ASCII letters in lower case; names longer than its
    /// 63 bytes cut to 46 and ending in a hash of the whole, so that two long names never become one.
    package static func identifier(_ name: String) -> String {
        let lowered = String(name.map { $0.isASCII ? Character($0.lowercased()) : $0 })
        guard lowered.utf8.count > 63 else { return lowered }
        var cut = ""
        for character in lowered {
            guard cut.utf8.count + character.utf8.count <= 46 else { break }
            cut.append(character)
        }
        return cut + "_" + digest(name)
    }

    /// A hexadecimal FNV-1a hash of `text` (16 digits at most), for names.
    package static func digest(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return String(hash, radix: 16)
    }
}
