import Glibc
import MotionCore
import NIOCore
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
final class ClientHandler: ChannelInboundHandler {
    typealias InboundIn = FramedLine

    private let daemon: Daemon
    private var session: ClientSession?
    private var output: ChannelOutput?
    private let outputs: ClientOutputs
    /// Lines that came before the peer's credentials were known.
    private var early: [ByteBuffer] = []

    init(daemon: Daemon, outputs: ClientOutputs) {
        self.daemon = daemon
        self.outputs = outputs
    }

    func channelActive(context: ChannelHandlerContext) {
        let output = ChannelOutput(channel: context.channel)
        self.output = output
        outputs.add(output)
        if let provider = context.channel as? SocketOptionProvider {
            let future: EventLoopFuture<PeerCredentialsLayout> = provider.unsafeGetSocketOption(
                level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
            future.assumeIsolated().whenComplete { result in
                let peer = try? result.get()
                self.start(output, peer.map { PeerCredentials(pid: $0.pid, uid: $0.uid, gid: $0.gid) })
            }
        } else {
            start(output, nil)
        }
        context.fireChannelActive()
    }

    private func start(_ output: ChannelOutput, _ credentials: PeerCredentials?) {
        let session = daemon.connect(output, credentials: credentials)
        self.session = session
        for line in early { daemon.receive(utf8: line.readableBytesView, from: session) }
        early = []
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .line(let line) = unwrapInboundIn(data) else { return refuseLongLine(context) }
        guard let session else {
            early.append(line)
            return
        }
        // The bytes as they came, so that a line that is not UTF-8 is refused, not repaired.
        daemon.receive(utf8: line.readableBytesView, from: session)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { output?.drain() }
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
        if let output { outputs.remove(output) }
        session = nil
        context.fireChannelInactive()
    }
}

/// A client's output on its channel. While the socket is full, lines wait here, a newer
/// value of a stream replacing the older one, so a slow client never holds anything up and
/// reads current values when it catches up.
final class ChannelOutput: ClientOutput {
    private let channel: Channel
    /// Called when the client falls behind.
    var onBlocked: () -> Void = {}
    private var pending: [(stream: String?, line: ByteBuffer)] = []
    private var pendingIndex: [String: Int] = [:]
    private(set) var pendingBytes = 0
    private(set) var coalesced = 0
    /// Since when the client has been behind.
    private(set) var blockedSince: Double?
    private(set) var isClosed = false

    init(channel: Channel) { self.channel = channel }

    func send(_ line: ByteBuffer, coalescing stream: String?) {
        guard !isClosed else { return }
        if pending.isEmpty && channel.isWritable {
            channel.write(line, promise: nil)
            return
        }
        if blockedSince == nil {
            blockedSince = monotonicNow()
            onBlocked()
        }
        if let stream, let index = pendingIndex[stream] {
            pendingBytes += line.readableBytes - pending[index].line.readableBytes
            pending[index].line = line
            coalesced += 1
        } else {
            if let stream { pendingIndex[stream] = pending.count }
            pending.append((stream, line))
            pendingBytes += line.readableBytes
        }
    }

    func flush() {
        guard !isClosed else { return }
        channel.flush()
    }

    /// Writes what waited, now that the client reads again.
    func drain() {
        guard !pending.isEmpty, !isClosed else { return }
        for entry in pending { channel.write(entry.line, promise: nil) }
        pending = []
        pendingIndex = [:]
        pendingBytes = 0
        blockedSince = nil
        channel.flush()
    }

    func close(saying line: ByteBuffer?) {
        guard !isClosed else { return }
        isClosed = true
        if let line { channel.writeAndFlush(line, promise: nil) }
        channel.close(promise: nil)
    }

    /// Writes `line`, ends the output (the client reads it, then the end), and closes the
    /// connection a second later if the client has not.
    func finish(saying line: ByteBuffer) {
        guard !isClosed else { return }
        isClosed = true
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

    /// Whether any client is behind.
    var anyBlocked: Bool { outputs.values.contains { $0.blockedSince != nil } }

    func add(_ output: ChannelOutput) {
        output.onBlocked = { [weak self] in self?.onBlocked() }
        outputs[ObjectIdentifier(output)] = output
    }
    func remove(_ output: ChannelOutput) { outputs[ObjectIdentifier(output)] = nil }

    /// Disconnects clients behind for longer than `seconds` or with more than `bytes` waiting.
    func dropLaggards(olderThan seconds: Double, orLargerThan bytes: Int, allocator: ByteBufferAllocator) -> Int {
        let now = monotonicNow()
        var dropped = 0
        for output in outputs.values {
            guard let since = output.blockedSince, now - since > seconds || output.pendingBytes > bytes else { continue }
            let reason = "too slow: this client did not read for \(Int(now - since)) s"
            output.close(saying: allocator.buffer(string: JSONValue.object([("event", "bye"), ("reason", .string(reason))]).encoded + "\n"))
            remove(output)
            dropped += 1
        }
        return dropped
    }
}
