// Compiled with every case in Tests/CompileFailures.
import OpenCoreData

@Managed final class Note: ManagedObject {
    var title: String?
}

actor Indexer {
    func index(_ note: Note) {}
    func index(_ id: ManagedObjectID) {}
}
