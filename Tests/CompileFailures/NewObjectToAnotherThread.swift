import Dispatch
import OpenCoreData

func send(_ context: ManagedObjectContext) {
    let note = Note(context: context)
    DispatchQueue.global().async { note.title = "x" } // error: capture of 'note' with non-Sendable type 'Note' in a '@Sendable' closure
}
