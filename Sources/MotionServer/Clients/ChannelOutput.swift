import Glibc
import MotionCore
import MotionDaemon
import NIOCore
import NIOWebSocket
import MotionWire

/// A client's output on its channel, held to the slow-client rule (``SlowClientRule``). While
/// the socket is full, lines wait here, a newer value of a stream replacing the older one, so a
/// slow client never holds anything up and reads current values when it catches up. Each time
/// a line has to wait, the rule is asked whether to drop the client, so one with more waiting
/// than the rule allows is dropped the moment it goes over.
///
/// The same output serves both transports; only the ``LineFraming`` differs. On the Unix
/// socket, given the socket's descriptor (``SocketDescriptor``), a client that keeps up gets
/// each write straight from `send(2)`, as the floor in scripts/measure does: NIO's channel
/// pipeline and pending-writes bookkeeping cost as much again as the system call. Whatever the
/// socket does not take at once goes to NIO, which writes it when the client reads; until then
/// lines wait here, so the bytes stay in order.
///
/// The daemon's lines come as byte arrays (``LineBuffer``), shared by every client; they
/// become NIO's buffers only when NIO writes them: a line that waited, the rest of a write
/// the socket did not take, a WebSocket's messages.
///
/// It is used under the daemon's lock (``DaemonLock``), from the loop or from the thread that
/// runs a frame. `send(2)` is made from either; what is done with NIO's channel only on the
/// loop, and in order (``withChannel(_:)``).
final class ChannelOutput: ClientOutput {
    // What a frame's send reads (``sendFrame(_:ranges:)``: ``isKeepingUp``, then the
    // socket) comes first, so that it shares the object's first cache line or two: with a
    // hundred clients, a frame's sends push the outputs out of the cache, and each line read
    // is a miss.
    /// A duplicate of the channel's socket descriptor, written to directly; -1 for none.
    private var socket: Int32
    private(set) var isClosed = false
    /// Whether NIO is writing the rest of a direct write that the socket did not take.
    private var inFlight = false
    /// The channel's writability as of the last flush or writability change: asking the
    /// channel before every line costs atomic reads that show with thousands of clients, and
    /// writes between two flushes are one frame's lines, a bounded overshoot.
    private var socketTakesMore: Bool
    /// Since when lines have waited for the client, on the rule's clock.
    private var behindSince: Double?
    private(set) var pendingBytes = 0

    private let channel: Channel
    private let lock: DaemonLock
    /// What is to be done with the channel, made off the loop and waiting for it, in order.
    private var outbox: [(Channel) -> Void] = []
    private let framing: LineFraming
    /// What says when the client keeps up, and when it is to be dropped.
    private let rule: SlowClientRule
    /// Called when lines start to wait for the client: the rule now times it.
    var onBehind: () -> Void = {}
    /// Called when the client is dropped under the rule.
    var onDropped: () -> Void = {}
    private var pending: [(stream: StreamID?, line: ArraySlice<UInt8>)] = []
    private var pendingIndex: [StreamID: Int] = [:]
    /// The pong owed for the latest ping while the client is behind. RFC 6455 (5.5.3) lets a
    /// pong answer only the most recent ping, so a client that pings and never reads is owed
    /// one pong, counted in ``pendingBytes`` like lines, not a queue that grows.
    private var pendingPong: ByteBuffer?
    private(set) var coalesced = 0
    /// Whether it was closed because the client did not read (the slow-client rule).
    private(set) var wasDropped = false
    var transport: ClientTransport { framing == .webSocket ? .websocket : .unix }
    /// Whether writes go straight to the socket (for tests).
    var writesDirectly: Bool { socket >= 0 }

    init(channel: Channel, lock: DaemonLock, framing: LineFraming = .newlines, socket: Int32? = nil, rule: SlowClientRule = SlowClientRule()) {
        self.channel = channel
        self.lock = lock
        self.framing = framing
        self.rule = rule
        self.socketTakesMore = channel.isWritable
        precondition(socket == nil || framing == .newlines, "WebSocket frames are written by NIO")
        self.socket = socket ?? -1
    }

    deinit { stopWritingDirectly() }

    /// What the slow-client rule judges the client by. A closed output holds nothing.
    var backlog: ClientBacklog {
        ClientBacklog(since: behindSince, bytes: pendingBytes, socketFull: !socketTakesMore || inFlight)
    }

    var isKeepingUp: Bool { !isClosed && SlowClientRule.keepsUp(backlog) }

    /// The channel's writability changed: remember it, and write what waited once it is back.
    func writabilityChanged(_ writable: Bool) {
        socketTakesMore = writable
        if writable { drain() }
    }

    func sendNow(_ lines: ArraySlice<UInt8>) {
        guard !isClosed else { return }
        guard isKeepingUp, framing == .newlines else {
            send(lines, coalescing: nil)
            return flush()
        }
        if socket >= 0 { return writeDirectly(lines) }
        let buffer = channel.allocator.buffer(bytes: lines)
        withChannel { $0.writeAndFlush(buffer, promise: nil) }
        socketTakesMore = channel.isWritable
    }

    /// A frame's lines, if the client keeps up: on the socket straight from `send(2)`, else as
    /// ``sendNow(_:ranges:)`` sends them.
    func sendFrame(_ lines: ArraySlice<UInt8>, ranges: [Range<Int>]) -> Bool {
        guard isKeepingUp else { return false }
        if socket >= 0 {
            writeDirectly(lines)
        } else {
            sendNow(lines, ranges: ranges)
        }
        return true
    }

    /// A frame's lines: on the socket as they are, on a WebSocket one message a line, cut at
    /// the ranges the publisher noted as it wrote them.
    func sendNow(_ lines: ArraySlice<UInt8>, ranges: [Range<Int>]) {
        guard framing == .webSocket else { return sendNow(lines) }
        guard !isClosed else { return }
        for range in ranges {
            send(lines[range], coalescing: nil)
        }
        flush()
    }

    func send(_ line: ArraySlice<UInt8>, coalescing stream: StreamID?) {
        guard !isClosed else { return }
        if isKeepingUp {
            if socket >= 0 { writeDirectly(line) } else { write(line) }
            return
        }
        noteBehind()
        if let stream, let index = pendingIndex[stream] {
            pendingBytes += line.count - pending[index].line.count
            pending[index].line = line
            coalesced += 1
        } else {
            if let stream { pendingIndex[stream] = pending.count }
            pending.append((stream, line))
            pendingBytes += line.count
        }
        applyRule()
    }

    /// Answers a WebSocket ping with `payload`, bounded like lines: while the client is
    /// behind, the pong waits (replacing any older one) and the slow-client rule applies.
    func sendPong(_ payload: ByteBuffer) {
        precondition(framing == .webSocket, "only a WebSocket has pings")
        guard !isClosed else { return }
        if isKeepingUp {
            withChannel { $0.writeAndFlush(WebSocketFrame(fin: true, opcode: .pong, data: payload), promise: nil) }
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
        applyRule()
    }

    /// Lines wait for the client: from now on the slow-client rule times it.
    private func noteBehind() {
        guard behindSince == nil else { return }
        behindSince = rule.clock()
        onBehind()
    }

    /// A line waits: the client is dropped if the rule says so.
    private func applyRule() {
        if case .toBeDropped(let reason) = rule.verdict(on: backlog) { drop(because: reason) }
    }

    /// Drops the client under the slow-client rule: what waited is thrown away, and the
    /// client reads `bye` with `reason` (a WebSocket also gets a close frame, 1008).
    func drop(because reason: String) {
        guard !isClosed else { return }
        close(saying: Array(ProtocolLine.bye(reason).utf8)[...], because: .tooSlow)
        onDropped()
    }

    /// Output ends: nothing more is written (what waited is thrown away), and the duplicate
    /// descriptor is closed.
    private func stopOutput() {
        isClosed = true
        pending = []
        pendingIndex = [:]
        pendingPong = nil
        pendingBytes = 0
        behindSince = nil
        stopWritingDirectly()
    }

    func flush() {
        guard !isClosed else { return }
        if socket < 0 { withChannel { $0.flush() } }
        socketTakesMore = channel.isWritable
    }

    /// Writes what waited, now that the client reads again.
    func drain() {
        guard !pending.isEmpty || pendingPong != nil, !isClosed, !inFlight else { return }
        let waited = pending
        pending = []
        pendingIndex = [:]
        pendingBytes = 0
        behindSince = nil
        if let pong = pendingPong {
            pendingPong = nil
            withChannel { $0.write(WebSocketFrame(fin: true, opcode: .pong, data: pong), promise: nil) }
        }
        if socket >= 0 {
            var lines: [UInt8] = []
            lines.reserveCapacity(waited.reduce(0) { $0 + $1.line.count })
            for entry in waited { lines.append(contentsOf: entry.line) }
            return writeDirectly(lines[...])
        }
        for entry in waited { write(entry.line) }
        withChannel { $0.flush() }
    }

    /// Writes `bytes` with one `send(2)`; what the socket does not take, NIO writes when the
    /// client reads, and everything after waits in `pending` until it has.
    private func writeDirectly(_ bytes: ArraySlice<UInt8>) {
        let written = bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL)) }
        if written == bytes.count { return }
        if written < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
            // The client went: NIO's write fails too and closes the channel.
            stopWritingDirectly()
            let buffer = channel.allocator.buffer(bytes: bytes)
            return withChannel { $0.writeAndFlush(buffer, promise: nil) }
        }
        let rest = channel.allocator.buffer(bytes: bytes.dropFirst(max(written, 0)))
        inFlight = true
        let (output, lock) = (UncheckedSendable(self), self.lock)
        withChannel { channel in
            let promise = channel.eventLoop.makePromise(of: Void.self)
            promise.futureResult.whenComplete { result in
                lock.withLock { output.value.restWritten(result) }
            }
            channel.writeAndFlush(rest, promise: promise)
        }
    }

    /// NIO wrote the rest of a direct write, or failed to: what waited meanwhile goes next.
    private func restWritten(_ result: Result<Void, any Error>) {
        inFlight = false
        socketTakesMore = channel.isWritable
        if case .success = result { drain() }
    }

    /// Does `action` with the channel on its loop. Off the loop (a frame run on the input
    /// thread) the action waits in the outbox, and the loop does it under the daemon's lock,
    /// once the thread has let go of it (``DaemonLock/forLoop(_:_:)``: one task for every
    /// output); on the loop, what waited is done first. So whatever this output writes
    /// reaches the channel in the order it was written, a reply after the frame's lines
    /// before it.
    private func withChannel(_ action: @escaping (Channel) -> Void) {
        if channel.eventLoop.inEventLoop {
            if !outbox.isEmpty { runOutbox() }
            return action(channel)
        }
        outbox.append(action)
        guard outbox.count == 1 else { return }
        lock.forLoop(channel.eventLoop) { [self] in runOutbox() }
    }

    /// Does what waits, the oldest first. One at a time: an action may lead NIO to call back
    /// into this output (a writability change, a close), whose own actions then join the end.
    private func runOutbox() {
        while !outbox.isEmpty {
            outbox.removeFirst()(channel)
        }
    }

    /// Closes the duplicate descriptor: the connection ends when NIO closes its own.
    private func stopWritingDirectly() {
        if socket >= 0 { Glibc.close(socket) }
        socket = -1
    }

    func close(saying line: ArraySlice<UInt8>?) {
        close(saying: line, because: .stopping)
    }

    /// Says goodbye with `line` and closes; a WebSocket also gets a close frame saying why.
    func close(saying line: ArraySlice<UInt8>?, because reason: ClosingReason) {
        guard !isClosed else { return }
        stopOutput()
        wasDropped = reason == .tooSlow
        if let line { write(line) }
        if framing == .webSocket {
            var data = channel.allocator.buffer(capacity: 2 + reason.webSocketReason.utf8.count)
            data.write(webSocketErrorCode: reason.webSocketCode)
            data.writeString(reason.webSocketReason)
            withChannel { $0.write(WebSocketFrame(fin: true, opcode: .connectionClose, data: data), promise: nil) }
        }
        withChannel { channel in
            channel.flush()
            channel.close(promise: nil)
        }
    }

    /// Ends a WebSocket as its handler decided (the client's close echoed, or a frame it broke
    /// the rules with): the close frame with `body` after whatever this output was given
    /// before, and nothing after it; then the connection closes.
    func closeWebSocket(with body: ByteBuffer) {
        precondition(framing == .webSocket, "only a WebSocket has close frames")
        guard !isClosed else { return }
        stopOutput()
        withChannel { channel in
            channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .connectionClose, data: body)).whenComplete { _ in
                channel.close(promise: nil)
            }
        }
    }

    /// Stops all output: the connection ended.
    func markClosed() {
        stopOutput()
    }

    /// Writes what was sent as the transport frames it: as it is on a socket (a frame's
    /// lines come as one buffer), a text message without its newline on a WebSocket (a
    /// line: a frame's come one by one, ``sendNow(_:ranges:)``).
    private func write(_ lines: ArraySlice<UInt8>) {
        switch framing {
        case .newlines:
            let buffer = channel.allocator.buffer(bytes: lines)
            withChannel { $0.write(buffer, promise: nil) }
        case .webSocket:
            guard let last = lines.last else { return }
            let text = channel.allocator.buffer(bytes: last == UInt8(ascii: "\n") ? lines.dropLast() : lines)
            withChannel { $0.write(WebSocketFrame(fin: true, opcode: .text, data: text), promise: nil) }
        }
    }

    /// Writes `line`, ends the output (the client reads it, then the end), and closes the
    /// connection a second later if the client has not.
    func finish(saying line: ByteBuffer) {
        guard !isClosed else { return }
        stopOutput()
        withChannel { channel in
            channel.writeAndFlush(line).flatMap { channel.close(mode: .output) }.whenComplete { _ in
                channel.eventLoop.scheduleTask(in: .seconds(1)) { channel.close(promise: nil) }
            }
        }
    }
}
