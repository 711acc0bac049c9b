import Foundation
import OpenCoreDataCore

// Linux Foundation has `NSPredicate` (without a format parser) and `NSSortDescriptor` (whose
// `init(key:ascending:)` is unavailable). These aliases live in the umbrella module, which also
// re-exports Foundation: for code that imports `OpenCoreData`, a declaration of the imported
// module shadows the Foundation one it re-exports, in expressions and in type positions. A file
// that imports Foundation itself as well gets "ambiguous for type lookup" in type positions
// (see DEVIATIONS.md); `import OpenCoreData` alone is enough.

/// Core Data's `NSPredicate`, with the format parser Linux Foundation lacks: ``/OpenCoreDataCore/FetchPredicate``.
public typealias NSPredicate = FetchPredicate
/// Core Data's `NSSortDescriptor`, with `init(key:ascending:)`: ``/OpenCoreDataCore/FetchSortDescriptor``.
public typealias NSSortDescriptor = FetchSortDescriptor
/// Core Data's `NSExpression` (Linux Foundation's is unavailable): ``/OpenCoreDataCore/FetchExpression``.
public typealias NSExpression = FetchExpression

#if !canImport(Darwin)
/// Linux Foundation has no `UndoManager`; a context's undo manager is a ``/OpenCoreDataCore/ContextUndoManager``.
public typealias UndoManager = ContextUndoManager
#endif

/// Core Data's name for ``PersistentContainer``.
public typealias NSPersistentContainer = PersistentContainer

/// Core Data's `NSCompoundPredicate`: ``/OpenCoreDataCore/CompoundPredicate``.
public typealias NSCompoundPredicate = CompoundPredicate
