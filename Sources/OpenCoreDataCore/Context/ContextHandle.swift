/// The link from managed objects to their context: one per context, shared by its objects.
///
/// Objects hold the handle strongly and the handle points at the context without retaining it;
/// the context's `deinit` clears the pointer, so objects that outlive their context see `nil`.
// @unchecked Sendable: `context` is written by the context's init and deinit only; reads happen on
// the context's queue while the context is alive (a deinit cannot race with its own queue's work,
// which retains the context).
package final class ContextHandle: @unchecked Sendable {
    // Unchecked exclusivity: assigned whole by the context's init and deinit only.
    @exclusivity(unchecked) package unowned(unsafe) var context: ManagedObjectContext?
    /// Whether reads of the objects' properties are recorded for Observation (the context's
    /// `makesObjectsObservable`). Written on the context's queue, read there by its objects.
    @exclusivity(unchecked) package var makesObjectsObservable = false
    /// Above zero while an object's `awakeFromFetch` runs: writes are not changes then (as in
    /// Core Data, change processing is off). Queue-owned, like the objects.
    @exclusivity(unchecked) package var awakingFromFetch = 0

    package init() {}
}
