import Foundation

/// A value computed for each object: a key path, a constant, the object itself, or a function
/// over other expressions. Core Data code spells it `NSExpression`, and uses it in an
/// ``ExpressionDescription`` of a dictionary fetch:
///
/// ```swift
/// let total = NSExpressionDescription()
/// total.name = "total"
/// total.expression = NSExpression(forFunction: "sum:", arguments: [NSExpression(forKeyPath: "amount")])
/// total.expressionResultType = .doubleAttributeType
/// ```
///
/// A dictionary fetch computes a key path, or `count:`, `sum:`, `min:`, `max:` or `average:`
/// of one key path (in SQL where the store can); other expressions are refused by the fetch
/// with an error naming them. Mirrors `NSExpression`.
public final class FetchExpression: CustomStringConvertible {
    /// What kind of expression this is. Mirrors `NSExpression.ExpressionType` (same raw values).
    public enum ExpressionType: UInt, Sendable {
        case constantValue = 0
        case evaluatedObject = 1
        case keyPath = 3
        case function = 4
    }

    /// The kind of expression.
    public let expressionType: ExpressionType
    /// The key path of a ``ExpressionType/keyPath`` expression ("" otherwise).
    public let keyPath: String
    /// The function of a ``ExpressionType/function`` expression, as Core Data names it
    /// (`"sum:"`; "" otherwise).
    public let function: String
    /// The arguments of a function expression.
    public let arguments: [FetchExpression]?
    /// The value of a constant expression.
    public let constantValue: Any?

    private init(type: ExpressionType, keyPath: String = "", function: String = "", arguments: [FetchExpression]? = nil, constant: Any? = nil) {
        expressionType = type
        self.keyPath = keyPath
        self.function = function
        self.arguments = arguments
        constantValue = constant
    }

    /// The value at `keyPath` of each object. Mirrors `NSExpression(forKeyPath:)`.
    public convenience init(forKeyPath keyPath: String) {
        self.init(type: .keyPath, keyPath: keyPath)
    }

    /// `function` over `arguments` (expressions). Mirrors `NSExpression(forFunction:arguments:)`.
    public convenience init(forFunction function: String, arguments: [Any]) {
        self.init(type: .function, function: function, arguments: arguments.map { $0 as? FetchExpression ?? FetchExpression(forConstantValue: $0) })
    }

    /// A constant. Mirrors `NSExpression(forConstantValue:)`.
    public convenience init(forConstantValue value: Any?) {
        self.init(type: .constantValue, constant: value)
    }

    /// The object being evaluated (`SELF`). Mirrors `NSExpression.expressionForEvaluatedObject()`.
    public static func expressionForEvaluatedObject() -> FetchExpression {
        FetchExpression(type: .evaluatedObject)
    }

    public var description: String {
        switch expressionType {
        case .constantValue: String(describing: constantValue ?? "nil")
        case .evaluatedObject: "SELF"
        case .keyPath: keyPath
        case .function: "\(function.hasSuffix(":") ? String(function.dropLast()) : function)(\((arguments ?? []).map(\.description).joined(separator: ", ")))"
        }
    }
}
