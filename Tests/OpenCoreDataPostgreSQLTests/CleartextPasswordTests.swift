import Foundation
#if canImport(Glibc)
import Glibc
#endif
import OpenCoreDataCore
@testable import OpenCoreDataPostgreSQL
import Testing
import TestSupport

/// A server (or a machine in the middle) that asks for the password in clear text on a connection
/// without TLS does not get it, unless the URL allows it: the connection is refused with 134080.
/// The server here speaks just enough of PostgreSQL's protocol to ask, and records what the client
/// sent after it asked.
@Suite(.dedicatedThread) struct CleartextPasswordTests {
    /// Accepts one connection; answers a TLS request with "no TLS" (as a machine in the middle
    /// stripping TLS would); reads the startup message; asks for the password in clear text; then
    /// keeps what the client sends until it closes (or two seconds pass).
    final class AskingServer: @unchecked Sendable {   // `received` and `askedForTLS` are guarded by `lock`
        let port: Int
        private let listener: Int32
        private let lock = NSCondition()
        private var received: [UInt8]?
        private var askedForTLS = false

        init() throws {
            let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard socket >= 0, bound == 0, Glibc.listen(socket, 1) == 0 else { throw CoreDataError(.coreData, "no listening socket: errno \(errno)") }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
            }
            listener = socket
            port = Int(UInt16(bigEndian: address.sin_port))
            Thread { [self] in serve() }.start()
        }

        /// What the client sent after the request for its password, and whether it asked for TLS
        /// first (waits for the conversation to end).
        func outcome() -> (afterRequest: [UInt8], askedForTLS: Bool) {
            lock.lock()
            defer { lock.unlock() }
            while received == nil { lock.wait() }
            return (received ?? [], askedForTLS)
        }

        private func serve() {
            let connection = accept(listener, nil, nil)
            close(listener)
            var tls = false, after: [UInt8] = []
            defer {
                if connection >= 0 { close(connection) }
                lock.lock()
                received = after
                askedForTLS = tls
                lock.broadcast()
                lock.unlock()
            }
            guard connection >= 0, var first = read(connection, count: 8), first.count == 8 else { return }
            // The TLS request: length 8, code 80877103.
            if Array(first[4...]) == [0x04, 0xD2, 0x16, 0x2F] {
                tls = true
                guard write(connection, [UInt8(ascii: "N")]), let next = read(connection, count: 8), next.count == 8 else { return }
                first = next
            }
            let length = first[0...3].reduce(0) { $0 << 8 | Int($1) }
            guard length >= 8, read(connection, count: length - 8) != nil else { return }
            // AuthenticationCleartextPassword.
            guard write(connection, [UInt8(ascii: "R"), 0, 0, 0, 8, 0, 0, 0, 3]) else { return }
            var pollDescriptor = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
            while poll(&pollDescriptor, 1, 2_000) > 0, let bytes = read(connection, upTo: 4096), !bytes.isEmpty { after += bytes }
        }

        private func read(_ socket: Int32, count: Int) -> [UInt8]? {
            var bytes: [UInt8] = []
            while bytes.count < count {
                guard let more = read(socket, upTo: count - bytes.count), !more.isEmpty else { return nil }
                bytes += more
            }
            return bytes
        }

        private func read(_ socket: Int32, upTo count: Int) -> [UInt8]? {
            var buffer = [UInt8](repeating: 0, count: count)
            let got = buffer.withUnsafeMutableBytes { Glibc.read(socket, $0.baseAddress, count) }
            return got < 0 ? nil : Array(buffer.prefix(got))
        }

        private func write(_ socket: Int32, _ bytes: [UInt8]) -> Bool {
            bytes.withUnsafeBytes { Glibc.write(socket, $0.baseAddress, bytes.count) } == bytes.count
        }
    }

    /// Connects to the asking server with `parameters`; returns the error and what the server got.
    private func connect(_ parameters: String) throws -> (error: CoreDataError?, sent: String, askedForTLS: Bool) {
        let server = try AskingServer()
        let url = try PostgreSQLStoreURL(try #require(URL(string: "postgres://app:hunter2secret@127.0.0.1:\(server.port)/notes?connect_timeout=5&\(parameters)")))
        var failure: CoreDataError?
        do {
            try PostgreSQLSession.connect(url).close()
        } catch {
            failure = error as? CoreDataError
        }
        let (after, askedForTLS) = server.outcome()
        return (failure, String(decoding: after, as: UTF8.self), askedForTLS)
    }

    @Test func aServerAskingWithoutTLSDoesNotGetThePassword() throws {
        let (error, sent, askedForTLS) = try connect("tls=disable")
        #expect(!askedForTLS)
        #expect(error?.code == .persistentStoreOpen)
        #expect(error?.message.contains("asked for the password in clear text") == true, "\(error?.message ?? "no error")")
        #expect(!sent.contains("hunter2secret"))
    }

    @Test func aMachineInTheMiddleThatRefusesTLSDoesNotGetThePassword() throws {
        // `prefer` (the default on this machine): the client asks for TLS, is told no, and goes on
        // without it — as libpq does — but does not answer a clear-text request.
        let (error, sent, askedForTLS) = try connect("tls=prefer")
        #expect(askedForTLS)
        #expect(error?.message.contains("asked for the password in clear text") == true, "\(error?.message ?? "no error")")
        #expect(!sent.contains("hunter2secret"))
    }

    @Test func requiredTLSRefusedIsNoConnection() throws {
        let (error, sent, askedForTLS) = try connect("tls=require")
        #expect(askedForTLS)
        #expect(error?.code == .persistentStoreOpen)
        #expect(!sent.contains("hunter2secret"))
    }

    @Test func allowedTheClientSendsIt() throws {
        // What the guard stops: the same exchange with the guard off hands the password over.
        let (_, sent, _) = try connect("tls=disable&cleartext_password=allow")
        #expect(sent.contains("hunter2secret"))
    }

    @Test func theParameterTakesAllowOrRefuse() throws {
        #expect(try PostgreSQLStoreURL(try #require(URL(string: "postgres://app@db.example.com/notes"))).allowsCleartextPassword == false)
        #expect(try PostgreSQLStoreURL(try #require(URL(string: "postgres://app@db.example.com/notes?cleartext_password=refuse"))).allowsCleartextPassword == false)
        #expect(throws: CoreDataError.self) { try PostgreSQLStoreURL(try #require(URL(string: "postgres://app@db.example.com/notes?cleartext_password=yes"))) }
    }
}
