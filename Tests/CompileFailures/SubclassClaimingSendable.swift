import OpenCoreData

// A subclass cannot opt back in: the base class's conformance is unavailable, so the claim is
// ignored (with a warning) and the object stays confined.
final class SharedNote: ManagedObject, @unchecked Sendable {} // warning: conformance of 'SharedNote' to protocol 'Sendable' is already unavailable

func send(_ note: SharedNote) {
    Task.detached { _ = note.objectID } // error: passing closure as a 'sending' parameter risks causing data races
}
