import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// The XML files Xcode writes (`.xcdatamodel/contents`, `.xcmappingmodel/xcmapping.xml`), parsed
/// with Foundation's `XMLParser` after the checks it does not make itself.
enum XMLInput {
    /// Parses `data` with `delegate`: nil when it parsed, else why the parser stopped.
    ///
    /// Xcode writes these files in UTF-8. Bytes that are not UTF-8 are refused before parsing:
    /// FoundationXML on Linux traps on an element or attribute name that is not valid UTF-8 (found
    /// by the fuzzer, see docs/Reliability.md), and a model file is input like any other.
    static func parse(_ data: Data, with delegate: any XMLParserDelegate, file: URL, what: String) throws(CoreDataError) -> String? {
        guard String(validating: data, as: UTF8.self) != nil else {
            throw CoreDataError(.coreData, "The \(what) at \(file.path) is not UTF-8 text, as Xcode writes it; the file is damaged.")
        }
        // Xcode writes no processing instruction but the XML declaration (with its version);
        // FoundationXML traps on one without data (`<?name?>`, and `<?xml?>`, which libxml2 reads
        // as an instruction rather than a declaration: both found by the fuzzer).
        let bytes = [UInt8](data)
        var index = bytes.startIndex
        while let open = bytes[index...].firstIndex(of: UInt8(ascii: "<")) {
            index = open + 1
            guard index < bytes.count, bytes[index] == UInt8(ascii: "?") else { continue }
            let name = bytes[(index + 1)...].prefix {
                $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "\n") && $0 != UInt8(ascii: "\t")
            }
            let rest = bytes[(index + 1 + name.count)...]
            let declaration = rest.prefix { $0 != UInt8(ascii: "?") }
            let isDeclaration = Array(name) == Array("xml".utf8)
                && rest.first.map { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\r") } == true
                && String(decoding: declaration, as: UTF8.self).contains("version")
            guard isDeclaration, open == bytes.startIndex || bytes[..<open].allSatisfy({ $0 == 0xEF || $0 == 0xBB || $0 == 0xBF }) else {
                throw CoreDataError(.coreData, """
                    The \(what) at \(file.path) holds a processing instruction \
                    (<?\(String(decoding: name, as: UTF8.self))…?>) that Xcode does not write; the file is \
                    damaged or was not written by Xcode.
                    """)
            }
        }
        let parser = XMLParser(data: data)
        parser.delegate = delegate
        return parser.parse() ? nil : parser.parserError.map { "\($0)" } ?? "unreadable"
    }
}
