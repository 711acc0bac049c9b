import Foundation

/// Query generations: a context pinned to a generation reads the store as it was when the
/// generation first read it — fetches, counts, faults and relationships — whatever other
/// contexts and processes save meanwhile, until the generation advances: at its own save, when
/// it merges changes (``mergeChanges(fromContextDidSave:)``,
/// ``mergeChanges(fromRemoteContextSave:into:)``, automatic and history merges), at ``reset()``,
/// or when set again. Batch requests do not advance it. Saving is never pinned: optimistic
/// locking and uniqueness checks see the newest rows. Child contexts read through their
/// parent's generation and cannot be pinned themselves.
///
/// SQLite stores pin with a read transaction on a connection of their own (in WAL mode, the
/// default; other journal modes and the in-memory store read unpinned, as in Core Data); the
/// WAL cannot be checkpointed past the oldest pinned generation until it ends, which it does
/// when no context or token refers to it.
extension ManagedObjectContext {
    /// The generation the context is pinned to, or `nil` when it reads the newest data (the
    /// default, and always for child contexts). Mirrors `queryGenerationToken`.
    public var queryGenerationToken: QueryGenerationToken? {
        checkQueue("queryGenerationToken")
        return pinnedGeneration.map { QueryGenerationToken(generation: $0) }
    }

    /// Pins the context to a generation: ``QueryGenerationToken/current`` for the newest (taken
    /// at the next read), another context's ``queryGenerationToken`` to read what that context
    /// reads, `nil` to unpin. Throws for a child context (it reads through its parent). Mirrors
    /// `setQueryGenerationFrom(_:)`.
    public func setQueryGenerationFrom(_ token: QueryGenerationToken?) throws {
        checkQueue("setQueryGenerationFrom(_:)")
        guard let token else {
            pinnedGeneration = nil
            return
        }
        guard parent == nil else {
            throw CoreDataError(.coreData, """
                The context '\(debugName)' is a child context: it reads through its parent's query generation \
                and cannot be pinned itself. Pin the parent instead.
                """)
        }
        pinnedGeneration = token.generation ?? QueryGeneration()
    }

    /// Moves a pinned context to the newest generation (a save, a merge, a reset).
    package func advanceQueryGeneration() {
        if pinnedGeneration != nil { pinnedGeneration = QueryGeneration() }
    }

    /// Runs a read from the store in the context's generation.
    package func reading<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        guard let generation = pinnedGeneration else { return try body() }
        let result = QueryGenerationScope.$current.withValue(generation) { () -> Result<T, E> in
            do throws(E) { return .success(try body()) } catch { return .failure(error) }
        }
        return try result.get()
    }
}
