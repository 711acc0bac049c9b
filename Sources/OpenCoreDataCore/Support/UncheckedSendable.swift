/// Carries a value across a queue hop that the compiler cannot see is safe.
///
/// Used only for values the caller handed over with `sending` (so no other reference to their
/// region remains) and that are used on exactly one queue afterwards.
package struct UncheckedSendable<Value>: @unchecked Sendable {
    package var value: Value
    package init(_ value: Value) { self.value = value }
}
