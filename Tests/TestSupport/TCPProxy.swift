import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A loopback TCP proxy in front of a server, for what production networks do to a client: it
/// forwards every connection until told to hold its bytes (a partition: nothing arrives, nothing
/// is closed) or to cut every connection (a server restart, a killed backend).
///
/// Each proxied connection has two threads, one per direction, blocked in `read`; the listening
/// socket has one. The properties under `lock` are all they share (held pumps wait on it);
/// a connection's descriptors are closed once, by the last of its two pumps.
/// `@unchecked Sendable`: every stored property is a constant or guarded by `lock`.
package final class TCPProxy: @unchecked Sendable {
    /// The loopback port clients connect to.
    package let port: Int
    private let upstreamPort: Int
    private let listener: Int32
    private let lock = NSCondition()
    /// Whether bytes are held (a partition), the open connections' descriptors (closed, and
    /// removed, by the last of their two pumps), and whether the proxy was stopped. Owned by `lock`.
    private var holding = false
    private var connections: [(client: Int32, server: Int32)] = []
    private var stopped = false
    /// What the next client message containing `marker` does to its connection, and what has
    /// happened to connections so far, by client descriptor. Owned by `lock`.
    private var armed: (marker: [UInt8], fate: Fate)?
    private var fates: [Int32: Fate] = [:]
    /// Whether the proxy answers a new connection's request for TLS with "no" itself, as a
    /// machine in the middle stripping TLS would; the connections whose first message it has
    /// seen, those it refused TLS, and how many bytes their clients sent after that. Owned by `lock`.
    private var strippingTLS = false
    private var inspected: Set<Int32> = []
    private var refusedTLS: Set<Int32> = []
    private var bytesAfterRefusal = 0
    private var refusals = 0
    /// PostgreSQL's SSLRequest: length 8, code 80877103.
    private static let sslRequest: [UInt8] = [0, 0, 0, 8, 0x04, 0xD2, 0x16, 0x2F]

    /// What happens to one connection once a client message with the armed marker passed.
    private enum Fate {
        /// The message reaches the server; nothing the server sends reaches the client again.
        case answersLost
        /// Neither the message nor anything after it goes through, in either direction, and the
        /// server's end stays open when the client leaves: to the server the client fell silent.
        case blackHoled
        /// The server's end was closed and the client not told: it learns when it next sends.
        case serverGoneUnnoticed
    }

    /// Listens on a free loopback port and forwards to `upstreamPort` on 127.0.0.1.
    package init(upstreamPort: Int) throws {
        self.upstreamPort = upstreamPort
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw ProxyError("socket: errno \(errno)") }
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, Glibc.listen(socket, 64) == 0 else {
            close(socket)
            throw ProxyError("bind/listen: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        listener = socket
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// From now on answers each new connection's request for TLS with "no TLS" itself (the
    /// server never sees the request): a machine in the middle that strips TLS. What the client
    /// sends afterwards goes to the server in clear, and is counted.
    package func stripTLS() {
        lock.withLock { strippingTLS = true }
    }

    /// How many requests for TLS the proxy refused.
    package var tlsRequestsRefused: Int { lock.withLock { refusals } }

    /// How many bytes clients sent after the proxy refused them TLS (a client that demands TLS
    /// sends none: it closes the connection).
    package var bytesSentAfterRefusedTLS: Int { lock.withLock { bytesAfterRefusal } }

    /// Holds every byte in both directions from now on, connections left open: to both ends the
    /// other one has gone silent.
    package func partition() {
        lock.withLock { holding = true }
    }

    /// Delivers the bytes held since `partition()` and forwards again.
    package func heal() {
        lock.withLock {
            holding = false
            lock.broadcast()
        }
    }

    /// The next client message containing `marker` (its bytes within one read, as a short
    /// protocol message arrives) reaches the server, and its connection's answers are dropped
    /// from then on: a COMMIT that commits and whose acknowledgement is lost.
    package func loseAnswers(afterSending marker: String) {
        lock.withLock { armed = (Array(marker.utf8), .answersLost) }
    }

    /// The next client message containing `marker` never reaches the server, nor does anything
    /// after it on that connection in either direction, and the server's end is left open: a
    /// COMMIT lost in a partition while the server still holds the transaction.
    package func blackHole(atSending marker: String) {
        lock.withLock { armed = (Array(marker.utf8), .blackHoled) }
    }

    /// Whether a marker given to `loseAnswers(afterSending:)` or `blackHole(atSending:)` has yet
    /// to pass (false once its message met its fate).
    package var isArmed: Bool { lock.withLock { armed != nil } }

    /// Closes every open connection at both ends, as a server restart does; new ones are
    /// forwarded.
    package func cutAll() {
        // Under the lock: a pump closes its descriptors under it too, so none is reused meanwhile.
        lock.withLock {
            for pair in connections {
                shutdown(pair.client, Int32(SHUT_RDWR))
                shutdown(pair.server, Int32(SHUT_RDWR))
            }
        }
    }

    /// Closes the server's end of every open connection without telling the clients, as a
    /// server that went away without a word (a crash and restart behind a router): a client
    /// finds out when it next sends, which closes its connection. New connections are forwarded.
    package func endServersUnnoticed() {
        lock.withLock {
            for pair in connections {
                fates[pair.client] = .serverGoneUnnoticed
                shutdown(pair.server, Int32(SHUT_RDWR))
            }
        }
    }

    /// Stops listening and cuts every connection.
    package func stop() {
        lock.withLock {
            stopped = true
            holding = false
            lock.broadcast()
        }
        shutdown(listener, Int32(SHUT_RDWR))
        cutAll()
    }

    deinit { close(listener) }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            guard let server = connectUpstream() else {
                close(client)
                continue
            }
            let accepted = lock.withLock {
                guard !stopped else { return false }
                connections.append((client, server))
                return true
            }
            guard accepted else {
                close(client)
                close(server)
                return
            }
            // Each direction owns its reading end; the last of the two to finish closes both.
            let finished = Finished()
            Thread.detachNewThread { [self] in pump(from: client, to: server, client: client, finished: finished) }
            Thread.detachNewThread { [self] in pump(from: server, to: client, client: client, finished: finished) }
        }
    }

    private func connectUpstream() -> Int32? {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return nil }
        var address = Self.loopback(port: upstreamPort)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(socket)
            return nil
        }
        return socket
    }

    private func pump(from source: Int32, to destination: Int32, client: Int32, finished: Finished) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let fromClient = source == client
        loop: while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            // Held while partitioned: delivered, in order, when the partition heals.
            let (fate, refuseTLS) = lock.withLock { () -> (Fate?, Bool) in
                while holding && !stopped { lock.wait() }
                if fromClient, fates[client] == nil, let (marker, fate) = armed, buffer[..<count].contains(marker) {
                    armed = nil
                    fates[client] = fate
                }
                var refuseTLS = false
                if fromClient && strippingTLS && !inspected.contains(client) {
                    inspected.insert(client)
                    refuseTLS = Array(buffer[..<count]) == Self.sslRequest
                    if refuseTLS {
                        refusedTLS.insert(client)
                        refusals += 1
                    }
                } else if fromClient && refusedTLS.contains(client) {
                    bytesAfterRefusal += count
                }
                return (fates[client], refuseTLS)
            }
            if refuseTLS {
                // "N": no TLS here. The request itself is not passed on.
                guard [UInt8(ascii: "N")].withUnsafeBytes({ send(source, $0.baseAddress, 1, Int32(MSG_NOSIGNAL)) }) == 1 else { break loop }
                continue
            }
            switch fate {
            case .blackHoled?: continue
            case .answersLost? where !fromClient: continue
            case .serverGoneUnnoticed? where fromClient: break loop
            default: break
            }
            var sent = 0
            while sent < count {
                let written = buffer.withUnsafeBytes { send(destination, $0.baseAddress! + sent, count - sent, Int32(MSG_NOSIGNAL)) }
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { break loop }
                sent += written
            }
        }
        // One side is gone: the other learns it, as through a real connection — unless the
        // connection is black-holed and the client left: then the server's end stays open, as
        // a partition leaves it, until the proxy stops (which shuts every connection down).
        let fate = lock.withLock { fates[client] }
        if fromClient && fate == .blackHoled {
            lock.withLock { while !stopped { lock.wait() } }
        }
        // A server gone unnoticed leaves the client's end to the client's own pump.
        if fromClient || fate != .serverGoneUnnoticed {
            shutdown(destination, Int32(SHUT_RDWR))
            shutdown(source, Int32(SHUT_RDWR))
        }
        if finished.second() {
            lock.withLock {
                connections.removeAll { $0.client == client }
                fates[client] = nil
                inspected.remove(client)
                refusedTLS.remove(client)
                close(source)
                close(destination)
            }
        }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    /// Counts the two pumps of a connection out.
    private final class Finished: @unchecked Sendable {
        // `@unchecked Sendable`: `count` is only touched under `lock`.
        private let lock = NSLock()
        private var count = 0
        func second() -> Bool { lock.withLock { count += 1; return count == 2 } }
    }

    package struct ProxyError: Error, CustomStringConvertible {
        package let description: String
        init(_ description: String) { self.description = description }
    }
}
