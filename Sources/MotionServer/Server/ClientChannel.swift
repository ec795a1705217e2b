import Glibc
import MotionCore
import NIOCore
import NIOWebSocket
import TouchInput

/// What the framer passes on: a line, or word that a line was too long.
enum FramedLine {
    case line(ByteBuffer)
    case tooLong
}

/// Splits a client's bytes into lines. A line longer than 64 KiB is reported once, and from
/// then on everything the client sends is discarded: its connection is being closed.
final class LineFramer: ByteToMessageDecoder {
    typealias InboundOut = FramedLine
    static let maximumLength = 64 * 1024
    private var discarding = false

    func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        if discarding {
            buffer.moveReaderIndex(to: buffer.writerIndex)
            return .needMoreData
        }
        if let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")), newline - buffer.readerIndex <= Self.maximumLength {
            let line = buffer.readSlice(length: newline - buffer.readerIndex)!
            buffer.moveReaderIndex(forwardBy: 1)
            context.fireChannelRead(wrapInboundOut(.line(line)))
            return .continue
        }
        if buffer.readableBytes > Self.maximumLength {
            discarding = true
            buffer.moveReaderIndex(to: buffer.writerIndex)
            context.fireChannelRead(wrapInboundOut(.tooLong))
        }
        return .needMoreData
    }

    func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        return .needMoreData  // a last line without its newline is dropped
    }
}

/// `struct ucred`, which Glibc's Swift module does not export: pid, uid, gid.
struct PeerCredentialsLayout {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}

/// One client connection: framing in, the daemon's session, and the output.
///
/// The peer's credentials are read before the connection becomes active (see
/// ``SocketServer``), so the session exists before the first line arrives and nothing has
/// to wait for it.
final class ClientHandler: ChannelInboundHandler {
    typealias InboundIn = FramedLine

    private let daemon: Daemon
    private let credentials: PeerCredentials?
    private var session: ClientSession?
    private var output: ChannelOutput?
    private let outputs: ClientOutputs
    /// The socket's duplicate descriptor, for the output to write to directly.
    private var socket: Int32?

    init(daemon: Daemon, outputs: ClientOutputs, credentials: PeerCredentials?, socket: Int32? = nil) {
        self.daemon = daemon
        self.outputs = outputs
        self.credentials = credentials
        self.socket = socket
    }

    deinit { if let socket { Glibc.close(socket) } }

    /// The peer of `channel` (`SO_PEERCRED`), or nil when the socket cannot say.
    static func credentials(of channel: Channel) -> EventLoopFuture<PeerCredentials?> {
        guard let provider = channel as? SocketOptionProvider else { return channel.eventLoop.makeSucceededFuture(nil) }
        let future: EventLoopFuture<PeerCredentialsLayout> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        return future.map { PeerCredentials(pid: $0.pid, uid: $0.uid, gid: $0.gid) }.recover { _ in nil }
    }

    func channelActive(context: ChannelHandlerContext) {
        let output = ChannelOutput(channel: context.channel, socket: socket)
        socket = nil  // the output's now
        self.output = output
        outputs.add(output)
        session = daemon.connect(output, credentials: credentials)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .line(let line) = unwrapInboundIn(data) else { return refuseLongLine(context) }
        guard let session else { return }  // only after channelInactive
        // The bytes as they came, so that a line that is not UTF-8 is refused, not repaired.
        daemon.receive(utf8: line.readableBytesView, from: session)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        output?.writabilityChanged(context.channel.isWritable)
        context.fireChannelWritabilityChanged()
    }

    /// The error, then `bye`, then the end of output: the client reads both before it sees
    /// the connection end. Closing outright while its line was still arriving would reset the
    /// connection and lose them. If the client does not close within a second, motiond does.
    private func refuseLongLine(_ context: ChannelHandlerContext) {
        let message = "a line is longer than 64 KiB; the connection is closed"
        var buffer = context.channel.allocator.buffer(capacity: 256)
        buffer.writeString(JSONValue.object([("id", .null), ("ok", false), ("error", .object([("code", "line_too_long"), ("message", .string(message))]))]).encoded + "\n")
        buffer.writeString(JSONValue.object([("event", "bye"), ("reason", .string(message))]).encoded + "\n")
        output?.finish(saying: buffer)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let session { daemon.disconnect(session) }
        if let output {
            output.markClosed()
            outputs.remove(output)
        }
        session = nil
        context.fireChannelInactive()
    }
}

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

/// A client's output on its channel. While the socket is full, lines wait here, a newer
/// value of a stream replacing the older one, so a slow client never holds anything up and
/// reads current values when it catches up. What waits is bounded: a client with more than
/// ``pendingLimit`` bytes waiting is disconnected the moment it goes over.
///
/// The same output serves both transports; only the ``LineFraming`` differs. On the Unix
/// socket, given the socket's descriptor (``SocketDescriptor``), a client that keeps up gets
/// each write straight from `send(2)`, as the floor in scripts/measure does: NIO's channel
/// pipeline and pending-writes bookkeeping cost as much again as the system call. Whatever the
/// socket does not take at once goes to NIO, which writes it when the client reads; until then
/// lines wait here, so the bytes stay in order.
final class ChannelOutput: ClientOutput {
    /// The most a client may have waiting (docs/protocol.md, Slow clients).
    static let defaultPendingLimit = 4 << 20
    private let channel: Channel
    private let framing: LineFraming
    private let pendingLimit: Int
    /// Called when the client falls behind.
    var onBlocked: () -> Void = {}
    /// Called when the client is disconnected for having too much waiting.
    var onOverflow: () -> Void = {}
    private var pending: [(stream: StreamID?, line: ByteBuffer)] = []
    private var pendingIndex: [StreamID: Int] = [:]
    /// The pong owed for the latest ping while the client is behind. RFC 6455 (5.5.3) lets a
    /// pong answer only the most recent ping, so a client that pings and never reads is owed
    /// one pong, counted in ``pendingBytes`` like lines, not a queue that grows.
    private var pendingPong: ByteBuffer?
    private(set) var pendingBytes = 0
    private(set) var coalesced = 0
    /// Since when the client has been behind.
    private(set) var blockedSince: Double?
    private(set) var isClosed = false
    /// A duplicate of the channel's socket descriptor, written to directly; -1 for none.
    private var socket: Int32
    /// Whether NIO is writing the rest of a direct write that the socket did not take.
    private var inFlight = false
    /// Whether writes go straight to the socket (for tests).
    var writesDirectly: Bool { socket >= 0 }

    init(channel: Channel, framing: LineFraming = .newlines, socket: Int32? = nil, pendingLimit: Int = ChannelOutput.defaultPendingLimit) {
        self.channel = channel
        self.framing = framing
        self.pendingLimit = pendingLimit
        self.socketTakesMore = channel.isWritable
        precondition(socket == nil || framing == .newlines, "WebSocket frames are written by NIO")
        self.socket = socket ?? -1
    }

    deinit { stopWritingDirectly() }

    /// The channel's writability as of the last flush or writability change: asking the
    /// channel before every line costs atomic reads that show with thousands of clients, and
    /// writes between two flushes are one frame's lines, a bounded overshoot.
    private var socketTakesMore: Bool

    var isKeepingUp: Bool { !isClosed && pending.isEmpty && pendingPong == nil && socketTakesMore && !inFlight }

    /// The channel's writability changed: remember it, and write what waited once it is back.
    func writabilityChanged(_ writable: Bool) {
        socketTakesMore = writable
        if writable { drain() }
    }

    func sendNow(_ lines: ByteBuffer) {
        guard !isClosed else { return }
        guard isKeepingUp, framing == .newlines else {
            send(lines, coalescing: nil)
            return flush()
        }
        if socket >= 0 { return writeDirectly(lines) }
        channel.writeAndFlush(lines, promise: nil)
        socketTakesMore = channel.isWritable
    }

    func send(_ line: ByteBuffer, coalescing stream: StreamID?) {
        guard !isClosed else { return }
        if isKeepingUp {
            if socket >= 0 { writeDirectly(line) } else { write(line) }
            return
        }
        noteBehind()
        if let stream, let index = pendingIndex[stream] {
            pendingBytes += line.readableBytes - pending[index].line.readableBytes
            pending[index].line = line
            coalesced += 1
        } else {
            if let stream { pendingIndex[stream] = pending.count }
            pending.append((stream, line))
            pendingBytes += line.readableBytes
        }
        if pendingBytes > pendingLimit { overflow() }
    }

    /// Answers a WebSocket ping with `payload`, bounded like lines: while the client is
    /// behind, the pong waits (replacing any older one) and the slow-client rule applies.
    func sendPong(_ payload: ByteBuffer) {
        precondition(framing == .webSocket, "only a WebSocket has pings")
        guard !isClosed else { return }
        if isKeepingUp {
            channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .pong, data: payload), promise: nil)
            socketTakesMore = channel.isWritable
            return
        }
        noteBehind()
        if let older = pendingPong {
            pendingBytes -= older.readableBytes
            coalesced += 1
        }
        pendingPong = payload
        pendingBytes += payload.readableBytes
        if pendingBytes > pendingLimit { overflow() }
    }

    /// The client is behind: from now on the slow-client rule counts.
    private func noteBehind() {
        guard blockedSince == nil else { return }
        blockedSince = monotonicNow()
        onBlocked()
    }

    /// Drops what waited and the client, saying why.
    private func overflow() {
        pending = []
        pendingIndex = [:]
        pendingPong = nil
        pendingBytes = 0
        let reason = "too slow: more than \(pendingLimit >> 20) MiB waited for this client"
        close(saying: channel.allocator.buffer(string: JSONValue.object([("event", "bye"), ("reason", .string(reason))]).encoded + "\n"), because: .tooSlow)
        onOverflow()
    }

    func flush() {
        guard !isClosed else { return }
        if socket < 0 { channel.flush() }
        socketTakesMore = channel.isWritable
    }

    /// Writes what waited, now that the client reads again.
    func drain() {
        guard !pending.isEmpty || pendingPong != nil, !isClosed, !inFlight else { return }
        let waited = pending
        pending = []
        pendingIndex = [:]
        pendingBytes = 0
        blockedSince = nil
        if let pong = pendingPong {
            pendingPong = nil
            channel.write(WebSocketFrame(fin: true, opcode: .pong, data: pong), promise: nil)
        }
        if socket >= 0 {
            var lines = channel.allocator.buffer(capacity: waited.reduce(0) { $0 + $1.line.readableBytes })
            for entry in waited { lines.writeImmutableBuffer(entry.line) }
            return writeDirectly(lines)
        }
        for entry in waited { write(entry.line) }
        channel.flush()
    }

    /// Writes `bytes` with one `send(2)`; what the socket does not take, NIO writes when the
    /// client reads, and everything after waits in `pending` until it has.
    private func writeDirectly(_ bytes: ByteBuffer) {
        let written = bytes.withUnsafeReadableBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL)) }
        if written == bytes.readableBytes { return }
        if written < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
            // The client went: NIO's write fails too and closes the channel.
            stopWritingDirectly()
            return channel.writeAndFlush(bytes, promise: nil)
        }
        var rest = bytes
        rest.moveReaderIndex(forwardBy: max(written, 0))
        inFlight = true
        let promise = channel.eventLoop.makePromise(of: Void.self)
        promise.futureResult.assumeIsolated().whenComplete { [self] result in
            inFlight = false
            socketTakesMore = channel.isWritable
            if case .success = result { drain() }
        }
        channel.writeAndFlush(rest, promise: promise)
    }

    /// Closes the duplicate descriptor: the connection ends when NIO closes its own.
    private func stopWritingDirectly() {
        if socket >= 0 { Glibc.close(socket) }
        socket = -1
    }

    func close(saying line: ByteBuffer?) {
        close(saying: line, because: .stopping)
    }

    /// Says goodbye with `line` and closes; a WebSocket also gets a close frame saying why.
    func close(saying line: ByteBuffer?, because reason: ClosingReason) {
        guard !isClosed else { return }
        isClosed = true
        stopWritingDirectly()
        if let line { write(line) }
        if framing == .webSocket {
            var data = channel.allocator.buffer(capacity: 2 + reason.webSocketReason.utf8.count)
            data.write(webSocketErrorCode: reason.webSocketCode)
            data.writeString(reason.webSocketReason)
            channel.write(WebSocketFrame(fin: true, opcode: .connectionClose, data: data), promise: nil)
        }
        channel.flush()
        channel.close(promise: nil)
    }

    /// Stops all output: the connection is being closed by its own handler.
    func markClosed() {
        isClosed = true
        stopWritingDirectly()
    }

    /// Writes one or more protocol lines (a frame's lines come as one buffer) as the
    /// transport frames them: as they are on a socket, one text frame each on a WebSocket.
    private func write(_ lines: ByteBuffer) {
        switch framing {
        case .newlines:
            channel.write(lines, promise: nil)
        case .webSocket:
            var rest = lines
            while let newline = rest.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
                let text = rest.readSlice(length: newline - rest.readerIndex)!
                rest.moveReaderIndex(forwardBy: 1)
                channel.write(WebSocketFrame(fin: true, opcode: .text, data: text), promise: nil)
            }
        }
    }

    /// Writes `line`, ends the output (the client reads it, then the end), and closes the
    /// connection a second later if the client has not.
    func finish(saying line: ByteBuffer) {
        guard !isClosed else { return }
        isClosed = true
        stopWritingDirectly()
        let channel = self.channel
        channel.writeAndFlush(line).flatMap { channel.close(mode: .output) }.whenComplete { _ in
            channel.eventLoop.scheduleTask(in: .seconds(1)) { channel.close(promise: nil) }
        }
    }
}

/// Every open client output, to find the ones too far behind.
final class ClientOutputs {
    private var outputs: [ObjectIdentifier: ChannelOutput] = [:]
    /// Called when any client falls behind.
    var onBlocked: () -> Void = {}
    /// Clients disconnected for too much output since the last ``dropLaggards``.
    private var overflowed = 0

    /// Whether any client is behind.
    var anyBlocked: Bool { outputs.values.contains { $0.blockedSince != nil } }

    /// How long after `now` the client behind the longest will have been behind for
    /// `seconds`, when it is to be dropped (0 if it already has); nil when none is behind.
    /// Checking then, rather than at a fixed period, drops each client on time: a check on
    /// a period started by another client could leave it behind for nearly twice as long.
    func nextLaggardDeadline(after now: Double, olderThan seconds: Double) -> Double? {
        outputs.values.compactMap(\.blockedSince).min().map { Swift.max(0, $0 + seconds - now) }
    }

    func add(_ output: ChannelOutput) {
        output.onBlocked = { [weak self] in self?.onBlocked() }
        output.onOverflow = { [weak self, unowned output] in
            self?.overflowed += 1
            self?.remove(output)
        }
        outputs[ObjectIdentifier(output)] = output
    }
    func remove(_ output: ChannelOutput) { outputs[ObjectIdentifier(output)] = nil }

    /// Disconnects clients behind for longer than `seconds` or with more than `bytes` waiting;
    /// how many were, counting those dropped for too much output since the last call.
    func dropLaggards(olderThan seconds: Double, orLargerThan bytes: Int, allocator: ByteBufferAllocator) -> Int {
        let now = monotonicNow()
        var dropped = overflowed
        overflowed = 0
        for output in outputs.values {
            guard let since = output.blockedSince, now - since > seconds || output.pendingBytes > bytes else { continue }
            let reason = "too slow: this client did not read for \(Int(now - since)) s"
            output.close(saying: allocator.buffer(string: JSONValue.object([("event", "bye"), ("reason", .string(reason))]).encoded + "\n"), because: .tooSlow)
            remove(output)
            dropped += 1
        }
        return dropped
    }
}
