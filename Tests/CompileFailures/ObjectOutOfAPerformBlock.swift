import OpenCoreData

func receive(_ context: ManagedObjectContext) async throws -> Note? {
    try await context.perform { // error: conformance of 'ManagedObject' to 'Sendable' is unavailable: Managed objects belong to one context's queue
        try context.fetch(FetchRequest<Note>(entityName: "Note")).first
    }
}
