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
        let parser = XMLParser(data: data)
        parser.delegate = delegate
        return parser.parse() ? nil : parser.parserError.map { "\($0)" } ?? "unreadable"
    }
}
