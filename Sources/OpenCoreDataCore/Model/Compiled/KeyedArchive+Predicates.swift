import Foundation

/// Archived `NSPredicate` and `NSExpression` objects rendered as predicate-format text, the way
/// `predicateFormat` prints them (`count:(pages)`, `length >= 3`). Core Data hashes derived
/// attributes over this text, and validation predicates are read back from it.
extension KeyedArchive {
    private static let operators: [Int64: String] = [
        0: "<", 1: "<=", 2: ">", 3: ">=", 4: "==", 5: "!=", 6: "MATCHES", 7: "LIKE",
        8: "BEGINSWITH", 9: "ENDSWITH", 10: "IN", 99: "CONTAINS", 100: "BETWEEN",
    ]

    /// The predicate-format text of an archived predicate, or nil when the field is nil.
    package func predicateText(_ field: PropertyListValue?) -> String? {
        predicateText(field, depth: 0)
    }

    /// The predicate-format text of an archived expression.
    package func expressionText(_ field: PropertyListValue?) -> String {
        expressionText(field, depth: 0)
    }

    // Depth-limited (a damaged archive may contain itself) and charged to the archive's work
    // budget (one that shares sub-expressions would otherwise expand without end).
    private static let maximumDepth = 64

    private func predicateText(_ field: PropertyListValue?, depth: Int) -> String? {
        guard depth < Self.maximumDepth, charge(1) else { return "<too deep>" }
        guard let predicate = object(field) else { return nil }
        let predicateText = { (field: PropertyListValue?) in self.predicateText(field, depth: depth + 1) }
        let expressionText = { (field: PropertyListValue?) in self.expressionText(field, depth: depth + 1) }
        switch predicate.className {
        case "NSTruePredicate": return "TRUEPREDICATE"
        case "NSFalsePredicate": return "FALSEPREDICATE"
        case "NSCompoundPredicate":
            let parts = members(predicate["NSSubpredicates"]).compactMap { predicateText(.uid($0)) }
            switch predicate["NSCompoundPredicateType"]?.integer {
            case 0: return "NOT " + (parts.first.map { "(\($0))" } ?? "")
            case 2: return parts.map { "(\($0))" }.joined(separator: " OR ")
            default: return parts.map { "(\($0))" }.joined(separator: " AND ")
            }
        case "NSComparisonPredicate":
            let comparison = object(predicate["NSPredicateOperator"])
            var symbol = comparison?["NSOperatorType"]?.integer.flatMap { Self.operators[$0] } ?? "=="
            if comparison?["NSNegate"]?.bool == true { symbol = "!=" }
            let options = comparison?["NSOptions"]?.integer ?? comparison?["NSFlags"]?.integer ?? 0
            if options & 3 != 0 { symbol += "[" + (options & 1 != 0 ? "c" : "") + (options & 2 != 0 ? "d" : "") + "]" }
            let modifier = switch comparison?["NSModifier"]?.integer { case 1: "ALL "; case 2: "ANY "; default: "" }
            return modifier + expressionText(predicate["NSLeftExpression"]) + " \(symbol) " + expressionText(predicate["NSRightExpression"])
        default:
            return "<\(predicate.className)>"
        }
    }

    private func expressionText(_ field: PropertyListValue?, depth: Int) -> String {
        guard depth < Self.maximumDepth, charge(1) else { return "<too deep>" }
        guard let expression = object(field) else { return value(field).map(Self.constantText) ?? "nil" }
        let expressionText = { (field: PropertyListValue?) in self.expressionText(field, depth: depth + 1) }
        let type = expression["NSExpressionType"]?.integer
        switch (expression.className, type) {
        case ("NSSelfExpression", _), (_, 1):
            return "SELF"
        case ("NSConstantValueExpression", _), (_, 0):
            if let constant = expression["NSConstantValue"] {
                return object(constant).map { "<\($0.className)>" } ?? value(constant).map(Self.constantText) ?? "nil"
            }
            return string(expression["NSConstantValueClassName"]) ?? "nil"
        case ("NSVariableExpression", _), (_, 2):
            return "$" + (string(expression["NSVariable"]) ?? "")
        case ("NSKeyPathSpecifierExpression", _), (_, 10):
            return string(expression["NSKeyPath"]) ?? ""
        case ("NSKeyPathExpression", _), (_, 3):
            let path = members(expression["NSArguments"]).map { expressionText(.uid($0)) }.joined(separator: ".")
            if let operand = object(expression["NSOperand"]), operand.className != "NSSelfExpression", operand["NSExpressionType"]?.integer != 1 {
                return expressionText(expression["NSOperand"]) + "." + path
            }
            return path
        case ("NSFunctionExpression", _), (_, 4):
            let selector = string(expression["NSSelectorName"]) ?? ""
            let arguments = members(expression["NSArguments"]).map { expressionText(.uid($0)) }
            let operand = expression["NSOperand"].map { expressionText($0) } ?? ""
            if operand == "_NSPredicateUtilities" || operand.isEmpty {
                return selector + "(" + arguments.joined(separator: ", ") + ")"
            }
            if selector == "valueForKey:" { return operand + "." + arguments.joined(separator: ".") }
            return "FUNCTION(\(operand), \"\(selector)\"" + arguments.map { ", " + $0 }.joined() + ")"
        case ("NSFetchRequestExpression", _), (_, 50):
            // An entity mapping's source expression (`NSFRExpression`, `NSMOCExpression`, `NSCountOnlyFlag`).
            return "FETCH(" + expressionText(expression["NSFRExpression"]) + ", " + expressionText(expression["NSMOCExpression"]) + ", "
                + (expression["NSCountOnlyFlag"]?.bool == true ? "YES" : "NO") + ")"
        case ("NSAggregateExpression", _), (_, 14):
            return "{" + members(expression["NSCollection"]).map { expressionText(.uid($0)) }.joined(separator: ", ") + "}"
        default:
            return "<\(expression.className)>"
        }
    }

    private static func constantText(_ value: PropertyListValue) -> String {
        switch value {
        case .string(let text): "\"" + text.replacingOccurrences(of: "\"", with: "\\\"") + "\""
        case .bool(let flag): flag ? "YES" : "NO"
        case .integer(let number): String(number)
        case .real(let number): number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
        case .date(let seconds): "CAST(\(seconds), \"NSDate\")"
        case .null: "nil"
        default: "<value>"
        }
    }
}
