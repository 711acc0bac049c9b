import OpenCoreData

struct Envelope: Sendable {
    var note: ManagedObjectID
}

func send(_ note: Note, to background: ManagedObjectContext) {
    let id = note.objectID
    Task.detached {
        await background.perform {
            (try? background.existingObject(with: id) as? Note)?.title = "x"
        }
    }
}

func insertElsewhere(_ context: ManagedObjectContext) {
    context.perform {
        let note = Note(context: context)
        note.title = "x"
    }
}

func receive(_ context: ManagedObjectContext) async throws -> ManagedObjectID? {
    try await context.perform {
        try context.fetch(FetchRequest<Note>(entityName: "Note")).first?.objectID
    }
}

func send(_ note: Note, to indexer: Indexer) async {
    await indexer.index(note.objectID)
}

func seal(_ note: Note) -> Envelope {
    Envelope(note: note.objectID)
}
