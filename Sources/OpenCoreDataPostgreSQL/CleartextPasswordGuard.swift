import NIOCore
import OpenCoreDataCore

/// Watches a connection's first messages from the server, ahead of postgres-nio, and closes the
/// connection when the server asks for the password in clear text (`AuthenticationCleartextPassword`)
/// on a connection that is not encrypted: postgres-nio would send it, and whoever reads the path —
/// or a machine in the middle that answered "no TLS" to the client's TLS request, then asked for
/// the password — would have it. Once TLS starts or authentication succeeds it only passes bytes
/// on.
///
/// Reads the protocol as the server sends it: when the client asked for TLS, one byte first (`S`:
/// TLS follows, `N`: it does not); then messages of a type byte, a 32-bit big-endian length that
/// counts itself, and a body — an authentication request (`R`) starting with its 32-bit code
/// (0 done, 3 clear-text password, 5 MD5, 10–12 SASL). Owned by the channel's event loop.
final class CleartextPasswordGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private enum State {
        /// The one-byte answer to the client's TLS request.
        case tlsAnswer
        /// A message's type and length, as far as they have come.
        case header([UInt8])
        /// A message's body: `remaining` bytes, of which an authentication request's code is kept.
        case body(isAuthentication: Bool, remaining: Int, code: [UInt8])
        /// Nothing more to watch.
        case done
    }

    private var state: State
    /// Set (for the connecting thread) when the guard closed the connection.
    let refused: Locked<Bool>

    /// A guard for a connection on which the client asks for TLS first (`requestsTLS`) or not.
    init(requestsTLS: Bool, refused: Locked<Bool>) {
        state = requestsTLS ? .tlsAnswer : .header([])
        self.refused = refused
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        for byte in unwrapInboundIn(data).readableBytesView {
            if case .done = state { break }
            if take(byte) {
                refused.withLock { $0 = true }
                context.close(promise: nil)
                return
            }
        }
        context.fireChannelRead(data)
        if case .done = state { context.pipeline.syncOperations.removeHandler(context: context, promise: nil) }
    }

    /// Takes the next byte from the server; returns whether the server asked for the password in
    /// clear text.
    private func take(_ byte: UInt8) -> Bool {
        switch state {
        case .tlsAnswer:
            state = byte == UInt8(ascii: "N") ? .header([]) : .done   // `S`: encrypted from here on
        case .header(var bytes):
            bytes.append(byte)
            guard bytes.count == 5 else {
                state = .header(bytes)
                return false
            }
            let length = bytes[1...4].reduce(0) { $0 << 8 | Int($1) }
            state = length > 4 ? .body(isAuthentication: bytes[0] == UInt8(ascii: "R"), remaining: length - 4, code: []) : .header([])
        case .body(let isAuthentication, var remaining, var code):
            remaining -= 1
            if isAuthentication && code.count < 4 {
                code.append(byte)
                if code.count == 4 {
                    switch code.reduce(0, { $0 << 8 | Int($1) }) {
                    case 3: return true
                    case 0:
                        state = .done
                        return false
                    default: break
                    }
                }
            }
            state = remaining > 0 ? .body(isAuthentication: isAuthentication, remaining: remaining, code: code) : .header([])
        case .done:
            break
        }
        return false
    }
}
