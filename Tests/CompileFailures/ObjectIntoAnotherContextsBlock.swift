import OpenCoreData

func send(_ note: Note, to other: ManagedObjectContext) {
    other.perform { note.title = "x" } // error: capture of 'note' with non-Sendable type 'Note' in a '@Sendable' closure
}
