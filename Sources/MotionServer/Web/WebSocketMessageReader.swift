import NIOCore
import NIOWebSocket
import MotionWire

/// What a client's frame means once RFC 6455's rules for a server have been applied to it.
enum WebSocketInput: Equatable {
    /// A whole text message (its fragments joined, unmasked).
    case text(ByteBuffer)
    /// A whole binary message.
    case binary(ByteBuffer)
    /// A ping, with the payload its pong must echo.
    case ping(ByteBuffer)
    /// The client closes: the code to echo (nil when it gave none, which is echoed as none).
    case close(WebSocketErrorCode?)
    /// Nothing to act on yet: a fragment of a message still arriving, or a pong.
    case nothing
    /// The client broke a rule: the connection fails with this code and reason (RFC 6455 7.1.7).
    case fail(WebSocketErrorCode, String)
}

/// Reads a client's frames as RFC 6455 asks a server to (sections 5.1–5.5 and 7.4), and joins
/// fragments into messages. NIO's decoder already refuses control frames that are fragmented
/// or longer than 125 bytes, and frames longer than the message limit; what it leaves to the
/// application is checked here. A value type, so the rules are tested frame by frame and
/// fuzzed without a connection.
///
/// Every rule broken fails the connection; nothing is repaired or ignored, because a client
/// that breaks one is not a browser and nothing it sends after can be trusted to mean what it
/// seems to.
struct WebSocketMessageReader {
    /// The largest message, whole or in fragments (the same limit as a line on the socket).
    static let maximumMessage = LineFramer.maximumLength
    /// The most fragments one message may come in. A browser sends a message in one frame;
    /// the limit bounds the work a client can make per byte of message with empty fragments.
    static let maximumFragments = 1024

    /// The message being assembled from fragments, and how many have come.
    private var partial: (opcode: WebSocketOpcode, data: ByteBuffer, fragments: Int)?

    /// What `frame` means, given the frames before it.
    mutating func read(_ frame: WebSocketFrame) -> WebSocketInput {
        // 5.1: a client masks every frame; a server fails the connection on an unmasked one.
        guard frame.maskKey != nil else { return .fail(.protocolError, "a client's frame must be masked") }
        // 5.2: no extension is negotiated, so the reserved bits are all zero.
        guard !frame.rsv1, !frame.rsv2, !frame.rsv3 else { return .fail(.protocolError, "reserved bits set without an extension") }
        switch frame.opcode {
        case .text, .binary:
            guard partial == nil else { return .fail(.protocolError, "a new message began before the last one ended") }
            if frame.fin { return message(frame.opcode, frame.unmaskedData) }
            partial = (frame.opcode, frame.unmaskedData, 1)
            return .nothing
        case .continuation:
            guard var message = partial else { return .fail(.protocolError, "a continuation frame with no message to continue") }
            partial = nil
            message.fragments += 1
            guard message.fragments <= Self.maximumFragments else {
                return .fail(.policyViolation, "a message in more than \(Self.maximumFragments) fragments")
            }
            var data = frame.unmaskedData
            guard message.data.readableBytes + data.readableBytes <= Self.maximumMessage else {
                return .fail(.messageTooLarge, "a message is longer than 64 KiB")
            }
            message.data.writeBuffer(&data)
            if frame.fin { return self.message(message.opcode, message.data) }
            partial = message
            return .nothing
        case .ping:
            return .ping(frame.unmaskedData)
        case .pong:
            return .nothing  // unsolicited pongs are allowed (5.5.3); motiond sends no pings
        case .connectionClose:
            return Self.close(frame.unmaskedData)
        default:
            // 5.2: opcodes 0x3–0x7 and 0xB–0xF are reserved.
            return .fail(.protocolError, "reserved opcode \(UInt8(webSocketOpcode: frame.opcode))")
        }
    }

    private func message(_ opcode: WebSocketOpcode, _ data: ByteBuffer) -> WebSocketInput {
        opcode == .text ? .text(data) : .binary(data)
    }

    /// A close frame's body (5.5.1): empty, or a code of two bytes and a UTF-8 reason; the
    /// code one an endpoint may send (7.4).
    private static func close(_ body: ByteBuffer) -> WebSocketInput {
        var body = body
        if body.readableBytes == 0 { return .close(nil) }
        guard let number = body.readInteger(as: UInt16.self) else { return .fail(.protocolError, "a close frame's code is two bytes") }
        guard isSendable(closeCode: Int(number)) else { return .fail(.protocolError, "close code \(number) may not be sent") }
        guard String(validating: body.readableBytesView, as: UTF8.self) != nil else {
            return .fail(.dataInconsistentWithMessage, "a close frame's reason must be UTF-8")
        }
        return .close(WebSocketErrorCode(codeNumber: Int(number)))
    }

    /// Whether an endpoint may put `code` in a close frame (RFC 6455 7.4.1 and 7.4.2, and the
    /// IANA registry's 1012–1014): not 1004–1006 or 1015, which are reserved or only reported
    /// locally, nor anything unassigned below 3000 or above 4999.
    static func isSendable(closeCode code: Int) -> Bool {
        switch code {
        case 1000...1003, 1007...1014, 3000...4999: return true
        default: return false
        }
    }
}
