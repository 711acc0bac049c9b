import Foundation
import OpenCoreDataCore
import OpenCoreDataSQL

/// Who a write transaction is, as the server knows it: its transaction number (`txid_current()`,
/// never reused) and the backend process that ran it. Read by the transaction's first statement.
struct WriteTransactionIdentity: Sendable {
    let transaction: Int64
    let backend: Int64
}

extension PostgreSQLStore {
    /// Finds out what became of a transaction whose COMMIT got no answer: returns when it
    /// committed, throws when it did not (nothing was written: an ordinary save error, and the
    /// context can save again) and throws 134900 when the server cannot tell or cannot be
    /// reached within the URL's `connect_timeout`.
    ///
    /// The server answers `txid_status`: committed, aborted, or in progress — the COMMIT may still
    /// be on its way (a partition delays it; the server has not seen the connection go). Such a
    /// transaction is ended from here, by ending its backend (`pg_terminate_backend`, allowed
    /// for a role's own sessions), which rolls it back unless the COMMIT got there first; the
    /// status asked again is then final. A backend number can be reused only after its process
    /// ended, by which time the transaction is no longer in progress, so the signal reaches the
    /// right process.
    func resolveLostCommit(_ identity: WriteTransactionIdentity, lost: CoreDataError) throws {
        let deadline = Date().addingTimeInterval(TimeInterval(url.connectTimeout))
        var pause = 0.05
        var lastProblem = lost.message
        repeat {
            let status: ManagedValue?
            do {
                status = try pool.withSession { session in
                    let transaction = ManagedValue.integer(identity.transaction)
                    return try session.execute("""
                        SELECT txid_status(\(bind: transaction)::bigint), CASE WHEN txid_status(\(bind: transaction)::bigint) = 'in progress' \
                        THEN pg_terminate_backend(\(bind: .integer(identity.backend))::integer) END
                        """ as SQLFragment).rows.first?.first
                }
            } catch {
                // Unreachable, a connection lost again, a refusal: asked again until the deadline.
                lastProblem = (error as? CoreDataError)?.message ?? "\(error)"
                Thread.sleep(forTimeInterval: pause)
                pause = min(pause * 2, 1)
                continue
            }
            switch status {
            case .string("committed")?:
                return
            case .string("aborted")?:
                throw CoreDataError(.persistentStoreSave, """
                    The connection to \(url.description) was lost while a save was committing, and the server \
                    rolled the transaction (number \(identity.transaction)) back: nothing was written. Save \
                    again.
                    """)
            case .string("in progress")?:
                // Its session was just ended; the status settles once the backend has gone.
                lastProblem = "the transaction was still open on the server"
                Thread.sleep(forTimeInterval: 0.05)
            default:
                // NULL: the server no longer knows (its commit log was truncated since).
                throw Self.commitOutcomeUnknown(identity, url: url, because: "the server no longer knows the transaction")
            }
        } while Date() < deadline
        throw Self.commitOutcomeUnknown(identity, url: url, because: lastProblem)
    }

    private static func commitOutcomeUnknown(_ identity: WriteTransactionIdentity, url: PostgreSQLStoreURL, because reason: String) -> CoreDataError {
        CoreDataError(.persistentStoreCommitOutcomeUnknown,
                      """
                          A save's COMMIT was sent to \(url.description) but no answer came back, and whether \
                          it committed could not be found out (\(reason)). The context keeps its changes. \
                          Saving them again cannot write them twice: if the lost commit wrote them, their rows \
                          moved on and the retry fails with a conflict (133020) or a uniqueness error instead \
                          — refresh the objects and look before applying a change again. The server can tell \
                          once it is reachable: SELECT txid_status(\(identity.transaction)).
                          """)
    }
}
