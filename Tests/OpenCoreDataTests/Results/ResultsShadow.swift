import Foundation
import OpenCoreData
import Testing

/// A delegate that keeps its own copy of a controller's results by applying only what it is
/// told, as a table view applies a batch: removals (object deletions and move sources, then
/// section deletions) at the old index paths, then insertions (sections, then objects and move
/// destinations) at the new ones. After `controllerDidChangeContent` the copy must equal a fresh
/// fetch.
final class ResultsShadow: FetchedResultsControllerDelegate {
    struct Section: Equatable {
        var name: String
        var objects: [ObjectIdentifier]
    }

    enum Call: Equatable {
        case will, did
        case section(FetchedResultsChangeType, Int, String)
        case object(FetchedResultsChangeType, IndexPath?, IndexPath?)
    }

    var sections: [Section] = []
    var calls: [Call] = []
    private var removals: [IndexPath] = []
    private var insertions: [(IndexPath, ObjectIdentifier)] = []
    private var deletedSections: [Int] = []
    private var insertedSections: [(Int, String)] = []
    private var updated: [IndexPath] = []
    /// Problems found while applying (an index path outside the copy, a callback out of order).
    var problems: [String] = []
    private var inBatch = false

    /// Takes the controller's current results as the copy.
    func load(from controller: AnyFetchedResultsController) {
        sections = (controller.sections ?? []).map { info in
            Section(name: info.name, objects: (info.objects ?? []).map { ObjectIdentifier($0 as AnyObject) })
        }
    }

    /// Objects grouped the way a controller sections them, from a fresh fetch.
    static func sections(of objects: [ManagedObject], sectionName: (ManagedObject) -> String) -> [Section] {
        var result: [Section] = []
        for object in objects {
            let name = sectionName(object)
            if result.last?.name == name { result[result.count - 1].objects.append(ObjectIdentifier(object)) }
            else { result.append(Section(name: name, objects: [ObjectIdentifier(object)])) }
        }
        return result
    }

    func controllerWillChangeContent(_ controller: AnyFetchedResultsController) {
        if inBatch { problems.append("willChange inside a batch") }
        inBatch = true
        calls.append(.will)
    }

    func controller(_ controller: AnyFetchedResultsController, didChange sectionInfo: any FetchedResultsSectionInfo,
                    atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType) {
        if !inBatch { problems.append("section change outside a batch") }
        calls.append(.section(type, sectionIndex, sectionInfo.name))
        switch type {
        case .delete: deletedSections.append(sectionIndex)
        case .insert: insertedSections.append((sectionIndex, sectionInfo.name))
        default: problems.append("section change \(type)")
        }
    }

    func controller(_ controller: AnyFetchedResultsController, didChange anObject: Any, at indexPath: IndexPath?,
                    for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {
        if !inBatch { problems.append("object change outside a batch") }
        calls.append(.object(type, indexPath, newIndexPath))
        let id = ObjectIdentifier(anObject as AnyObject)
        switch type {
        case .insert:
            guard let newIndexPath, indexPath == nil else { return problems.append("insert with \(String(describing: indexPath)) → \(String(describing: newIndexPath))") }
            insertions.append((newIndexPath, id))
        case .delete:
            guard let indexPath, newIndexPath == nil else { return problems.append("delete with \(String(describing: indexPath)) → \(String(describing: newIndexPath))") }
            removals.append(indexPath)
            check(indexPath, is: id)
        case .move:
            guard let indexPath, let newIndexPath else { return problems.append("move without both index paths") }
            removals.append(indexPath)
            insertions.append((newIndexPath, id))
            check(indexPath, is: id)
        case .update:
            guard let indexPath else { return problems.append("update without an index path") }
            updated.append(indexPath)
            check(indexPath, is: id)
        }
    }

    private func check(_ indexPath: IndexPath, is id: ObjectIdentifier) {
        guard sections.indices.contains(indexPath.section), sections[indexPath.section].objects.indices.contains(indexPath.item),
              sections[indexPath.section].objects[indexPath.item] == id else {
            return problems.append("\(indexPath) does not hold the object reported there")
        }
    }

    func controllerDidChangeContent(_ controller: AnyFetchedResultsController) {
        if !inBatch { problems.append("didChange without willChange") }
        inBatch = false
        calls.append(.did)
        for path in removals.sorted(by: { ($0.section, $0.item) > ($1.section, $1.item) }) {
            guard sections.indices.contains(path.section), sections[path.section].objects.indices.contains(path.item) else {
                problems.append("removal at \(path) outside the copy"); continue
            }
            sections[path.section].objects.remove(at: path.item)
        }
        for index in deletedSections.sorted(by: >) {
            guard sections.indices.contains(index) else { problems.append("section deletion \(index) outside the copy"); continue }
            if !sections[index].objects.isEmpty { problems.append("deleted section \(index) still holds objects") }
            sections.remove(at: index)
        }
        for (index, name) in insertedSections.sorted(by: { $0.0 < $1.0 }) {
            guard index <= sections.count else { problems.append("section insertion \(index) outside the copy"); continue }
            sections.insert(Section(name: name, objects: []), at: index)
        }
        for (path, id) in insertions.sorted(by: { ($0.0.section, $0.0.item) < ($1.0.section, $1.0.item) }) {
            guard sections.indices.contains(path.section), path.item <= sections[path.section].objects.count else {
                problems.append("insertion at \(path) outside the copy"); continue
            }
            sections[path.section].objects.insert(id, at: path.item)
        }
        removals = []; insertions = []; deletedSections = []; insertedSections = []; updated = []
    }
}
