import Foundation

/// A fetched property: a read-only, transient property whose value is the result of a fetch,
/// evaluated when it is read. Mirrors `NSFetchedPropertyDescription`.
///
/// The predicate may use `$FETCH_SOURCE` (the object whose property is read, with a key path:
/// `$FETCH_SOURCE.alias`) and `$FETCHED_PROPERTY` (this description: `$FETCHED_PROPERTY.userInfo.search`).
///
/// ```swift
/// let feedbacks = FetchedPropertyDescription(name: "feedbacks", entityName: "Feedback",
///                                            predicate: "authorAlias == $FETCH_SOURCE.alias")
/// ```
// @unchecked Sendable: as for PropertyDescription, mutated only before the model freezes.
public final class FetchedPropertyDescription: PropertyDescription, @unchecked Sendable {
    /// The entity fetched.
    public var entityName: String { didSet { checkMutable() } }
    /// The predicate, in predicate format; nil fetches every object of the entity.
    public var predicateFormat: String? { didSet { checkMutable() } }
    /// How the results are sorted: key and direction.
    public var sortKeys: [(key: String, ascending: Bool)] = [] { didSet { checkMutable() } }

    /// Makes a fetched property.
    public init(name: String, entityName: String, predicate: String? = nil, sortKeys: [(key: String, ascending: Bool)] = []) {
        self.entityName = entityName
        self.predicateFormat = predicate
        self.sortKeys = sortKeys
        super.init(name: name)
        isTransient = true
        isReadOnly = true
        isOptional = true
    }
}

/// How many fetched properties are being evaluated on this thread, one inside another: a
/// `$FETCH_SOURCE` key path may read a fetched property, whose predicate may read this one again.
private enum FetchedPropertyNesting {
    @TaskLocal static var depth = 0
    /// Deeper than this is a fetched property that needs itself to be fetched (a model from a
    /// file is input too: found by the archive fuzzer, the recursion overflowed the stack).
    static let limit = 16
}

extension ManagedObject {
    /// The value of a fetched property: its fetch, run in the object's context, with
    /// `$FETCH_SOURCE` and `$FETCHED_PROPERTY` key paths replaced by their values.
    func fetchedValue(of property: FetchedPropertyDescription) throws(CoreDataError) -> [ManagedObject] {
        let depth = FetchedPropertyNesting.depth
        guard depth < FetchedPropertyNesting.limit else {
            throw CoreDataError(.coreData, """
                The fetched property '\(property.name)' of \(entity.name) needs itself to be fetched: its \
                predicate's $FETCH_SOURCE key path reads fetched properties \(FetchedPropertyNesting.limit) \
                levels deep, in a cycle. Change the predicate so that it reads attributes or relationships.
                """, key: property.name)
        }
        do {
            return try FetchedPropertyNesting.$depth.withValue(depth + 1) { try fetchedValueOnce(of: property) }
        } catch let error as CoreDataError {
            throw error
        } catch {
            throw CoreDataError(.coreData, "The fetched property '\(property.name)' could not be read: \(error)", key: property.name)
        }
    }

    private func fetchedValueOnce(of property: FetchedPropertyDescription) throws(CoreDataError) -> [ManagedObject] {
        guard let context = managedObjectContext else {
            throw CoreDataError(.coreData, """
                The fetched property '\(property.name)' of \(entity.name) is read through the object's \
                context; this object has none.
                """, key: property.name)
        }
        let request = FetchRequest<ManagedObject>(entityName: property.entityName)
        if var format = property.predicateFormat {
            // `$FETCH_SOURCE.a.b` and `$FETCHED_PROPERTY.userInfo.key` become plain variables
            // bound to their values (the predicate language has no key paths on variables).
            var variables: [String: Any] = [:]
            for root in ["FETCH_SOURCE", "FETCHED_PROPERTY"] {
                while let range = format.range(of: "\\$\(root)(\\.[A-Za-z_][A-Za-z0-9_]*)*", options: .regularExpression) {
                    let path = format[range].split(separator: ".").dropFirst().map(String.init)
                    let name = "__\(root)_\(variables.count)"
                    variables[name] = try value(at: path, root: root, property: property) ?? NSNull()
                    format.replaceSubrange(range, with: "$" + name)
                }
            }
            let predicate = FetchPredicate(format: format, argumentArray: nil)
            try predicate.validate()
            request.predicate = predicate.withSubstitutionVariables(variables)
        }
        request.sortDescriptors = property.sortKeys.map { FetchSortDescriptor(key: $0.key, ascending: $0.ascending) }
        do {
            return try context.fetch(request)
        } catch let error as CoreDataError {
            throw error
        } catch {
            throw CoreDataError(.coreData, "The fetch of the fetched property '\(property.name)' failed: \(error)", key: property.name)
        }
    }

    private func value(at path: [String], root: String, property: FetchedPropertyDescription) throws(CoreDataError) -> Any? {
        if root == "FETCHED_PROPERTY" {
            guard path.count == 2, path[0] == "userInfo" else {
                throw CoreDataError(.coreData, """
                    The fetched property '\(property.name)' uses \
                    $FETCHED_PROPERTY.\(path.joined(separator: ".")); only $FETCHED_PROPERTY.userInfo.<key> is \
                    supported.
                    """, key: property.name)
            }
            return property.userInfo[path[1]]
        }
        var current: Any? = self
        for key in path {
            guard let object = current as? ManagedObject else { return nil }
            current = try object.validatedValue(forKey: key)
        }
        return current
    }
}
