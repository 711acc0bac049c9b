extension Int {
    /// `self + other`, or `Int.max` where the sum would overflow: a fetch window of
    /// `fetchLimit = Int.max` with an offset is "everything after the offset", not a trap.
    package func addingSaturated(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }
}
