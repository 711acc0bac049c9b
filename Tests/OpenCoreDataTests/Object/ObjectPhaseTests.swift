import Foundation
import OpenCoreData
import OpenCoreDataCore
import Testing
import TestSupport

/// An object's phase moves as the table in `ObjectPhase` says, through what users do, and a
/// move the table does not list is refused.
@Suite(.dedicatedThread) struct ObjectPhaseTests {
    @Test(arguments: StoreKind.allCases)
    func publicOperationsMoveThePhaseAsTheTableSays(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let note = Note(entity: try #require(context.entity(forClass: Note.self)), insertInto: nil)
            #expect(note.state.phase == .detached)
            context.insert(note)
            #expect(note.state.phase == .inserted)
            context.delete(note)
            #expect(note.state.phase == .insertedDeleted)
            context.insert(note)
            #expect(note.state.phase == .inserted)
            try context.save()
            #expect(note.state.phase == .loaded && !note.isUpdated)
            note.text1 = "changed"
            #expect(note.state.phase == .loaded && note.isUpdated)
            context.refresh(note, mergeChanges: false)
            #expect(note.state.phase == .fault)
            context.delete(note)
            #expect(note.state.phase == .deletedFault && note.isDeleted)
            context.rollback()
            #expect(note.state.phase == .fault && !note.isDeleted)
            _ = note.text1
            #expect(note.state.phase == .loaded)
            context.delete(note)
            #expect(note.state.phase == .deleted)
            try context.save()
            #expect(note.state.phase == .deleted && note.managedObjectContext == nil)
        }
    }

    @Test func aMoveTheTableDoesNotListIsRefused() async throws {
        #if DEBUG
        let result = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var state = ObjectState(defaults: [])
            state.insert()
            state.commit(version: 1)
            state.delete()
            state.delete()      // deleted twice: no such move
        }
        let message = String(decoding: result.standardErrorContent, as: UTF8.self)
        #expect(message.contains("An object in phase 'deleted' cannot be deleted"))
        #endif
    }
}
