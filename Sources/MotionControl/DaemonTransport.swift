import FoundationEssentials
import Glibc
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import TouchInput
import MotionWire

/// How motionctl's requests reach the daemon: protocol lines, one at a time, either way.
protocol DaemonTransport: AnyObject {
    /// Sends one protocol line (without its newline).
    func send(_ line: String) throws
    /// The next line from the daemon, waiting for it; nil when the connection ended.
    func receive() throws -> String?
    /// The same, waiting at most until `deadline` (``monotonicNow()``); throws ``TimedOut`` then.
    func receive(until deadline: Double) throws -> String?
}

/// Nothing came from the daemon by the deadline.
struct TimedOut: Error {}

/// Why a transport failed: the reason, for motionctl's message.
struct TransportFailure: Error, CustomStringConvertible {
    var description: String
}

/// The Unix socket: newline-terminated lines.
final class UnixSocketTransport: DaemonTransport {
    private let fd: Int32
    private var buffer: [UInt8] = []

    init(path: String) throws {
        // A path too long for sun_path is refused: cut short, it would name another socket.
        var (address, length): (sockaddr_un, socklen_t)
        do { (address, length) = try unixSocketAddress(path) } catch { throw TransportFailure(description: error.description) }
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TransportFailure(description: String(cString: strerror(errno))) }
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, length) }
        }
        guard status == 0 else {
            let reason = errno == ENOENT ? "no such socket" : errno == EACCES ? "permission denied (the socket's group may connect; see [daemon] socket_group)" : String(cString: strerror(errno))
            Glibc.close(fd)
            throw TransportFailure(description: reason)
        }
    }

    deinit { Glibc.close(fd) }

    func send(_ line: String) throws {
        var bytes = Array((line + "\n").utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            guard written > 0 else { throw TransportFailure(description: "cannot write to the daemon: \(String(cString: strerror(errno)))") }
            bytes = bytes.dropFirst(written)
        }
    }

    func receive() throws -> String? { try receive(until: .infinity) }

    func receive(until deadline: Double) throws -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            if deadline.isFinite {
                let wait = Swift.max(0, deadline - monotonicNow())
                var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let ready = poll(&descriptor, 1, Int32(Swift.min(wait * 1000, Double(Int32.max)).rounded(.up)))
                if ready < 0 && errno == EINTR { continue }
                if ready == 0 { throw TimedOut() }
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = Glibc.read(fd, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return nil }
            buffer += chunk[..<count]
        }
    }
}

/// The WebSocket endpoint (`ws://HOST:PORT/ws`): each line one text message. Driven by
/// swift-nio on a thread of its own; motionctl waits on what arrives.
final class WebSocketTransport: DaemonTransport {
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let channel: Channel
    private let inbox: Inbox

    /// Connects and completes the handshake within `timeout` seconds.
    init(url text: String, timeout: Int64 = 10) throws {
        guard let url = URL(string: text), let host = url.host, url.scheme == "ws" || url.scheme == "wss" else {
            throw TransportFailure(description: "'\(text)' is not a WebSocket URL like ws://127.0.0.1:8765/ws")
        }
        guard url.scheme == "ws" else {
            throw TransportFailure(description: "wss:// is not supported: motiond serves plain ws:// on loopback; put a TLS proxy in front for anything else")
        }
        let port = url.port ?? 80
        let path = url.path.isEmpty ? "/" : url.path
        // A Character, not a String: contains(String) would be full Foundation's (see isLocal).
        let hostHeader = host.contains(":" as Character) ? "[\(host)]:\(port)" : "\(host):\(port)"
        let inbox = Inbox()
        self.inbox = inbox
        let upgrader = NIOWebSocketClientUpgrader(maxFrameSize: 1 << 24, automaticErrorHandling: true) { channel, _ in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(NIOWebSocketFrameAggregator(
                    minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 1 << 16, maxAccumulatedFrameSize: 1 << 24))
                try channel.pipeline.syncOperations.addHandler(WebSocketReader(inbox: inbox))
            }
        }
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(.seconds(timeout))
            .channelInitializer { channel in
                let handshake = HandshakeHandler(host: hostHeader, path: path, inbox: inbox)
                // The upgrade completes on the channel's loop, where the handler lives.
                let bound = NIOLoopBound(handshake, eventLoop: channel.eventLoop)
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers(
                        leftOverBytesStrategy: .forwardBytes,
                        withClientUpgrade: (upgraders: [upgrader], completionHandler: { context in
                            context.pipeline.syncOperations.removeHandler(bound.value, promise: nil)
                        }))
                    try channel.pipeline.syncOperations.addHandler(handshake)
                }
            }
        do {
            channel = try bootstrap.connect(host: host.trimming { $0 == "[" || $0 == "]" }, port: port).wait()
        } catch {
            try? group.syncShutdownGracefully()
            let underlying = (error as? NIOConnectionError)?.connectionErrors.first?.error ?? error
            let reason = (underlying as? IOError).map { String(cString: strerror($0.errnoCode)).lowercased() } ?? "\(underlying)"
            throw TransportFailure(description: reason)
        }
        // The first message (the hello) or the handshake's refusal, within the timeout.
        guard inbox.waitForFirst(seconds: Double(timeout)) else {
            channel.close(promise: nil)
            try? group.syncShutdownGracefully()
            throw TransportFailure(description: "no WebSocket handshake within \(timeout) s")
        }
    }

    deinit {
        channel.close(promise: nil)
        try? group.syncShutdownGracefully()
    }

    func send(_ line: String) throws {
        var data = channel.allocator.buffer(capacity: line.utf8.count)
        data.writeString(line)
        // A client masks what it sends (RFC 6455, 5.3).
        let frame = WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: data)
        do { try channel.writeAndFlush(frame).wait() } catch {
            throw TransportFailure(description: "cannot write to the daemon: \(error)")
        }
    }

    func receive() throws -> String? {
        try inbox.next()
    }

    func receive(until deadline: Double) throws -> String? {
        try inbox.next(until: deadline)
    }
}

/// What arrived on the WebSocket, handed from NIO's thread to motionctl's.
private final class Inbox: @unchecked Sendable {
    /// Guards the state below; its value says whether there is something to take (a message,
    /// or the end), which is what a reader waits for.
    private let condition = ConditionLock(value: false)
    private var messages: [String] = []
    private var ended = false
    private var failure: TransportFailure?

    func put(_ message: String) {
        condition.lock()
        messages.append(message)
        condition.unlock(withValue: true)
    }

    func end(_ failure: TransportFailure? = nil) {
        condition.lock()
        if self.failure == nil { self.failure = failure }
        ended = true
        condition.unlock(withValue: true)
    }

    /// Whether something (a message, the end, a failure) came within `seconds`.
    func waitForFirst(seconds: Double) -> Bool {
        guard lockWhenReady(until: monotonicNow() + seconds) else { return false }
        condition.unlock(withValue: true)
        return true
    }

    /// The next message, waiting for it (until `deadline`, ``monotonicNow()``, then
    /// ``TimedOut``); nil at the end; the failure if there was one.
    func next(until deadline: Double = .infinity) throws -> String? {
        guard lockWhenReady(until: deadline) else { throw TimedOut() }
        defer { condition.unlock(withValue: !messages.isEmpty || ended) }
        if !messages.isEmpty { return messages.removeFirst() }
        if let failure { throw failure }
        return nil
    }

    /// Takes the lock once there is something to take; false, unlocked, at `deadline`. Waits
    /// a day at a time, as ConditionLock counts its timeout in Int64 nanoseconds.
    private func lockWhenReady(until deadline: Double) -> Bool {
        guard deadline.isFinite else {
            condition.lock(whenValue: true)
            return true
        }
        let day = 86_400.0
        while true {
            let remaining = deadline - monotonicNow()
            if condition.lock(whenValue: true, timeoutSeconds: Swift.min(Swift.max(0, remaining), day)) { return true }
            if remaining <= day { return false }
        }
    }
}

/// Sends the handshake request; if the server answers with anything but the upgrade, says why.
private final class HandshakeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private let host: String
    private let path: String
    private let inbox: Inbox
    private var status: HTTPResponseStatus?
    private var body = ""

    init(host: String, path: String, inbox: Inbox) {
        self.host = host
        self.path = path
        self.inbox = inbox
    }

    func channelActive(context: ChannelHandlerContext) {
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: ["Host": host, "Content-Length": "0"])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): status = head.status
        case .body(let buffer): if body.utf8.count < 1024 { body += String(buffer: buffer) }
        case .end:
            let reason = body.trimmingWhitespaceAndNewlines()
            inbox.end(TransportFailure(description: "the server refused the WebSocket: HTTP \(status?.code ?? 0)\(reason.isEmpty ? "" : ": \(reason)")"))
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        inbox.end(TransportFailure(description: "the WebSocket handshake failed: \(error)"))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        inbox.end()
        context.fireChannelInactive()
    }
}

/// Text messages into the inbox; pings answered; a close frame ends it.
private final class WebSocketReader: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let inbox: Inbox

    init(inbox: Inbox) {
        self.inbox = inbox
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text:
            inbox.put(String(buffer: frame.unmaskedData))
        case .ping:
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData)),
                                  promise: nil)
        case .connectionClose:
            var data = frame.unmaskedData
            let code = data.readWebSocketErrorCode()
            let reason = data.readString(length: data.readableBytes) ?? ""
            var reply = context.channel.allocator.buffer(capacity: 2)
            reply.write(webSocketErrorCode: code ?? .normalClosure)
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: reply)))
                .assumeIsolated().whenComplete { _ in context.close(promise: nil) }
            if case .goingAway? = code { inbox.end() } else if code != nil && code != .normalClosure {
                inbox.end(TransportFailure(description: "the daemon closed the WebSocket: \(reason)"))
            } else {
                inbox.end()
            }
        default:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        inbox.end()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        inbox.end(TransportFailure(description: "the WebSocket failed: \(error)"))
        context.close(promise: nil)
    }
}
