import Foundation

/// What a derived attribute computes, read from its derivation expression as Xcode writes it
/// (`pages.@count` arrives as `count:(pages)`). Core Data keeps derived values in the store; here
/// counts are kept by Core Data's own `Z_DA_…` triggers, the others are computed when an object
/// is saved (and copies of a to-one's attribute follow that attribute through a trigger).
package enum Derivation: Equatable, Sendable {
    /// `count:(relationship)`: the number of objects in a to-many.
    case count(relationship: String)
    /// `now()`: the time of the object's last save.
    case now
    /// `canonical:(attribute)`: a string attribute without case and diacritics, for searching.
    case canonical(attribute: String)
    /// `attribute` or `relationship.attribute` (through a to-one): a copy.
    case copy(keyPath: [String])

    /// The derivation an expression describes; `nil` for one we do not compute (its value is
    /// read as stored).
    package init?(_ expression: String) {
        let text = expression.trimmingCharacters(in: .whitespaces)
        if text == "now()" {
            self = .now
        } else if let name = Self.argument(of: "count:", in: text) {
            self = .count(relationship: name)
        } else if let name = Self.argument(of: "canonical:", in: text) {
            self = .canonical(attribute: name)
        } else {
            let keys = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard (1...2).contains(keys.count), keys.allSatisfy(Self.isIdentifier) else { return nil }
            self = .copy(keyPath: keys)
        }
    }

    /// `name` of `function(name)`, when it is an identifier.
    private static func argument(of function: String, in text: String) -> String? {
        guard text.hasPrefix(function + "("), text.hasSuffix(")") else { return nil }
        let name = String(text.dropFirst(function.count + 1).dropLast())
        return isIdentifier(name) ? name : nil
    }

    private static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first == "_" || CharacterSet.letters.contains(first) else { return false }
        return name.unicodeScalars.allSatisfy { $0 == "_" || CharacterSet.alphanumerics.contains($0) }
    }

    /// Whether this derivation can be computed for `attribute` of `entity`: the names resolve
    /// (a copy through a to-one relationship to an attribute of its destination) and the value
    /// fits the attribute's type.
    package func isComputable(for attribute: AttributeDescription, of entity: EntityDescription) -> Bool {
        switch self {
        case .count(let name):
            return entity.relationshipsByName[name]?.isToMany == true
        case .now:
            return attribute.attributeType == .date
        case .canonical(let name):
            return attribute.attributeType == .string && entity.attributesByName[name]?.attributeType == .string
        case .copy(let keys):
            if keys.count == 1 { return entity.attributesByName[keys[0]]?.attributeType == attribute.attributeType && keys[0] != attribute.name }
            guard let relationship = entity.relationshipsByName[keys[0]], !relationship.isToMany,
                  let destination = relationship.destinationEntity else { return false }
            return destination.attributesByName[keys[1]]?.attributeType == attribute.attributeType
        }
    }

    /// The canonical form of a string: without case and diacritics.
    package static func canonical(_ text: String) -> String {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
    }
}

extension AttributeDescription {
    /// The derivation of a derived attribute, when it is one we compute.
    package var derivation: Derivation? { derivationExpression.flatMap(Derivation.init) }
}
