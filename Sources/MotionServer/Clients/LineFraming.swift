import NIOWebSocket

/// How protocol lines travel on a client's channel.
enum LineFraming {
    /// Each line ends with a newline, on a byte stream (the Unix socket).
    case newlines
    /// Each line is one WebSocket text frame, without its newline.
    case webSocket
}

/// Why motiond closes a client's connection: the `bye` says it in full; a WebSocket's close
/// frame also carries a code and a short reason (at most 123 bytes).
enum ClosingReason {
    /// The daemon is stopping.
    case stopping
    /// The client did not read what it was sent.
    case tooSlow

    var webSocketCode: WebSocketErrorCode {
        switch self {
        case .stopping: return .goingAway
        case .tooSlow: return .policyViolation
        }
    }

    var webSocketReason: String {
        switch self {
        case .stopping: return "motiond is stopping"
        case .tooSlow: return "too slow: the client did not read"
        }
    }
}
