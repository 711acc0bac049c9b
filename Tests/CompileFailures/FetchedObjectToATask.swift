import OpenCoreData

func send(_ context: ManagedObjectContext) throws {
    let notes = try context.fetch(FetchRequest<Note>(entityName: "Note"))
    Task { notes[0].title = "x" } // error: risks causing data races
    _ = notes.count
}
