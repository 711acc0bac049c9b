/// Primary keys grouped by their rows' own entity, groups in the order their first key came: what
/// ``BatchDeleteRows/rows(_:of:)`` returns, built the same way by every store.
package struct KeysByEntity {
    package private(set) var groups: [(entity: EntityDescription, keys: [Int64])] = []
    private var groupIndex: [ObjectIdentifier: Int] = [:]

    package init() {}

    /// Adds a row's key to its entity's group (made when it is the entity's first).
    package mutating func append(_ key: Int64, of entity: EntityDescription) {
        if let at = groupIndex[ObjectIdentifier(entity)] {
            groups[at].keys.append(key)
        } else {
            groupIndex[ObjectIdentifier(entity)] = groups.count
            groups.append((entity, [key]))
        }
    }
}
