import Foundation

extension ManagedObjectModel {
    /// Entities read from a model file name their class as a string (`representedClassName`), as
    /// Xcode writes it: `Quake`, `.Quake` (the app's module) or `Earthquakes.Quake`. Core Data finds
    /// the class by name at run time; here the Swift runtime does, for a module-qualified name or
    /// a plain one in the main executable's module. An entity whose class is not found keeps
    /// `ManagedObject`; set ``EntityDescription/managedObjectClass`` before the model is used to
    /// name the class yourself. Runs when a model file is loaded and again when the model is frozen.
    func resolveClassNames() {
        for entity in entities where entity.managedObjectClass == ManagedObject.self {
            if let type = Self.managedObjectClass(named: entity.managedObjectClassName) { entity.managedObjectClass = type }
        }
    }

    /// A sub-entity's objects are instances of its superentity's class or of a subclass of it:
    /// a fetch of the superentity returns them typed as that class. A sub-entity without a class
    /// of its own (`NSManagedObject` in a model file whose class the process lacks) takes its
    /// superentity's; one whose class is not a subclass of it is refused (134060).
    func inheritClasses() throws(CoreDataError) {
        func depth(_ entity: EntityDescription) -> Int {
            var count = 0
            var current = entity.superentity
            while let next = current { count += 1; current = next.superentity }
            return count
        }
        for entity in entities.sorted(by: { depth($0) < depth($1) }) {
            guard let superentity = entity.superentity, superentity.managedObjectClass != ManagedObject.self else { continue }
            if entity.managedObjectClass == ManagedObject.self {
                entity.managedObjectClass = superentity.managedObjectClass
            } else if !Self.isClass(entity.managedObjectClass, aSubclassOf: superentity.managedObjectClass) {
                throw CoreDataError(.coreData, """
                    The entity \(entity.name) has the class \(entity.managedObjectClass), which is not a \
                    subclass of \(superentity.managedObjectClass), the class of its superentity \
                    \(superentity.name): a fetch of \(superentity.name) returns its objects as \
                    \(superentity.managedObjectClass). Make \(entity.managedObjectClass) inherit from \
                    \(superentity.managedObjectClass).
                    """)
            }
        }
    }

    private static func isClass(_ type: AnyClass, aSubclassOf ancestor: AnyClass) -> Bool {
        var current: AnyClass? = type
        while let candidate = current {
            if candidate == ancestor { return true }
            current = _getSuperclass(candidate)
        }
        return false
    }

    /// The `ManagedObject` subclass a class name names, if the process has it. Only names made of
    /// Swift identifiers separated by dots are looked up (the name comes from a file: nothing
    /// else reaches the runtime's type lookup).
    static func managedObjectClass(named name: String) -> ManagedObject.Type? {
        guard name != "NSManagedObject", name.utf8.count <= 512 else { return nil }
        let trimmed = name.hasPrefix(".") ? String(name.dropFirst()) : name
        let parts = trimmed.split(separator: ".", omittingEmptySubsequences: false)
        guard !parts.isEmpty, parts.allSatisfy(isIdentifier) else { return nil }
        let candidates = parts.count > 1 ? [trimmed] : mainModuleName.map { ["\($0).\(trimmed)"] } ?? []
        for candidate in candidates {
            if let type = _typeByName(candidate) as? ManagedObject.Type { return type }
        }
        return nil
    }

    /// The module of the main executable, as SwiftPM names it after the executable.
    private static let mainModuleName: String? = {
        guard let name = Bundle.main.executableURL?.deletingPathExtension().lastPathComponent, !name.isEmpty else { return nil }
        let module = String(name.map { $0.isLetter || $0.isNumber || $0 == "_" ? $0 : "_" })
        return isIdentifier(Substring(module)) ? module : nil
    }()

    /// Whether `part` is a Swift identifier (no keyword check).
    package static func isIdentifier(_ part: Substring) -> Bool {
        guard let first = part.unicodeScalars.first, first.properties.isXIDStart || first == "_" else { return false }
        return part.unicodeScalars.allSatisfy { $0.properties.isXIDContinue }
    }
}

/// The models coordinators use, newest first, held weakly: `ManagedObject.entity()` finds a
/// class's entity in them, as Core Data looks in the models it has loaded.
package enum ModelsInUse {
    private struct WeakModel {
        weak var model: ManagedObjectModel?
    }
    private static let models = Locked<[WeakModel]>([])

    /// Called by every coordinator.
    package static func add(_ model: ManagedObjectModel) {
        models.withLock { list in
            list.removeAll { $0.model == nil || $0.model === model }
            list.append(WeakModel(model: model))
        }
    }

    /// The entity of `type` in the newest model in use that has one.
    package static func entity(for type: ManagedObject.Type) -> EntityDescription? {
        let live = models.withLock { list in
            list.removeAll { $0.model == nil }
            return list.compactMap(\.model)
        }
        for model in live.reversed() {
            if let entity = model.entity(for: type) { return entity }
        }
        return nil
    }
}
