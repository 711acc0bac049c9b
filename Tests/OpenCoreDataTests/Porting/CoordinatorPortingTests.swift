import Foundation
import OpenCoreData
import Testing
import TestSupport

/// The coordinator's `perform` family and store lookup by URL, as Core Data code calls them.
@Suite(.dedicatedThread) struct CoordinatorPortingTests {
    @Test func aStoreIsFoundByItsURL() throws {
        let stack = try TestStack(.sqlite)
        let coordinator = stack.container.persistentStoreCoordinator
        let store = try #require(coordinator.persistentStores.first)
        // The same file named another way (a `.` step) is the same store.
        let spelledDifferently = stack.storeURL.deletingLastPathComponent().appendingPathComponent(".").appendingPathComponent(stack.storeURL.lastPathComponent)
        #expect(coordinator.persistentStore(for: spelledDifferently) === store)
        #expect(coordinator.persistentStore(for: stack.directory.file("Other.sqlite")) == nil)
    }

    @Test func performRunsBlocksInOrderAndPerformAndWaitNests() throws {
        let stack = try TestStack(.inMemory)
        let coordinator = stack.container.persistentStoreCoordinator
        let order = Recorder<Int>()
        let done = DispatchSemaphore(value: 0)
        for number in 0..<20 { coordinator.perform { order.append(number) } }
        coordinator.perform { done.signal() }
        done.wait()
        #expect(order.values == Array(0..<20))
        let stores = coordinator.performAndWait {
            coordinator.performAndWait { coordinator.persistentStores.count }    // reentrant
        }
        #expect(stores == 1)
    }
}
