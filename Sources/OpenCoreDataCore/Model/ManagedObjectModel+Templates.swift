import Foundation

/// A fetch request stored in a model (Xcode's "Fetch Requests"): an entity and a predicate that
/// may use `$variables`.
public struct FetchRequestTemplate: Sendable, Hashable {
    /// The entity fetched.
    public var entityName: String
    /// The predicate in predicate format; nil fetches every object.
    public var predicateFormat: String?

    /// Makes a template.
    public init(entityName: String, predicateFormat: String? = nil) {
        self.entityName = entityName
        self.predicateFormat = predicateFormat
    }
}

extension ManagedObjectModel {
    /// The stored fetch request named `name`, without variable substitution. Mirrors
    /// `fetchRequestTemplate(forName:)`.
    public func fetchRequestTemplate(forName name: String) -> FetchRequest<ManagedObject>? {
        fetchRequestFromTemplate(withName: name, substitutionVariables: [:])
    }

    /// The stored fetch request named `name`, with its `$variables` replaced by `variables`.
    /// Mirrors `fetchRequestFromTemplate(withName:substitutionVariables:)`.
    public func fetchRequestFromTemplate(withName name: String, substitutionVariables variables: [String: Any]) -> FetchRequest<ManagedObject>? {
        guard let template = fetchRequestTemplatesByName[name] else { return nil }
        let request = FetchRequest<ManagedObject>(entityName: template.entityName)
        if let format = template.predicateFormat {
            request.predicate = FetchPredicate(format: format, argumentArray: nil).withSubstitutionVariables(variables)
        }
        return request
    }
}
