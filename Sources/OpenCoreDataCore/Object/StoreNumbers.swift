/// Small numbers for store identifiers, so that an object ID holds four bytes for its store
/// instead of a `String` (sixteen bytes, and a reference count touched on every copy).
///
/// Process-wide and append-only: a store's UUID gets a number the first time an ID names it
/// and keeps it (a process meets few stores; each costs one entry). Number 0 means "no store"
/// (temporary IDs). Stores look their number up once and keep it; `identifier(for:)` serves URIs,
/// descriptions and the public `storeIdentifier`.
package enum StoreNumbers {
    // Owned by the lock: the identifiers by number (index + 1) and the numbers by identifier.
    private static let table = Locked<(identifiers: [String], numbers: [String: UInt32])>(([], [:]))

    /// The number of `identifier`, given on first use.
    package static func number(for identifier: String) -> UInt32 {
        table.withLock { table in
            if let number = table.numbers[identifier] { return number }
            table.identifiers.append(identifier)
            let number = UInt32(table.identifiers.count)
            table.numbers[identifier] = number
            return number
        }
    }

    /// The identifier numbered `number` (nil for 0).
    package static func identifier(for number: UInt32) -> String? {
        guard number > 0 else { return nil }
        return table.withLock { table in Int(number) <= table.identifiers.count ? table.identifiers[Int(number) - 1] : nil }
    }
}

/// A store's UUID and its number (`StoreNumbers`), read together from any thread; replaced when
/// the store reads its UUID from the file or adopts another one. Owned by its lock.
package final class StoreIdentity: Sendable {
    private let value: Locked<(identifier: String, number: UInt32)>

    package init(_ identifier: String) {
        value = Locked((identifier, StoreNumbers.number(for: identifier)))
    }

    package var identifier: String { value.withLock { $0.identifier } }
    package var number: UInt32 { value.withLock { $0.number } }

    package func set(_ identifier: String) {
        let number = StoreNumbers.number(for: identifier)
        value.withLock { $0 = (identifier, number) }
    }
}
