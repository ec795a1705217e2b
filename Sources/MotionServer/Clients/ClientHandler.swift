import Glibc
import MotionCore
import NIOCore
import NIOWebSocket
import MotionWire
import MotionDaemon

/// `struct ucred`, which Glibc's Swift module does not export: pid, uid, gid.
struct PeerCredentialsLayout {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}

/// One client connection on the Unix socket: lines framed by newlines in, the daemon's session
/// and the output (opened and closed through ``ClientConnections``, as a WebSocket's are).
///
/// The peer's credentials are read before the connection becomes active (see
/// ``SocketServer``), so the session exists before the first line arrives and nothing has
/// to wait for it.
final class ClientHandler: ChannelInboundHandler {
    typealias InboundIn = FramedLine

    private let connections: ClientConnections
    private let credentials: PeerCredentials?
    /// The client, from the connection's start to its end.
    private var client: ConnectedClient?
    /// The socket's duplicate descriptor, for the output to write to directly.
    private var socket: Int32?

    init(connections: ClientConnections, credentials: PeerCredentials?, socket: Int32? = nil) {
        self.connections = connections
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
        client = connections.open(context.channel, framing: .newlines, socket: socket, credentials: credentials)
        socket = nil  // the output's now
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .line(let line) = unwrapInboundIn(data) else { return refuseLongLine(context) }
        guard let client else { return }  // only after channelInactive
        // The bytes as they came, so that a line that is not UTF-8 is refused, not repaired.
        connections.locked { $0.receive(utf8: line.readableBytesView, from: client.session) }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        connections.locked { _ in client?.output.writabilityChanged(context.channel.isWritable) }
        context.fireChannelWritabilityChanged()
    }

    /// The error, then `bye`, then the end of output: the client reads both before it sees
    /// the connection end. Closing outright while its line was still arriving would reset the
    /// connection and lose them. If the client does not close within a second, motiond does.
    private func refuseLongLine(_ context: ChannelHandlerContext) {
        let message = "a line is longer than 64 KiB; the connection is closed"
        var buffer = context.channel.allocator.buffer(capacity: 256)
        buffer.writeString(ProtocolLine.text(ProtocolLine.reply(id: nil, .failure(ProtocolError(.lineTooLong, message)))))
        buffer.writeString(ProtocolLine.bye(message))
        connections.locked { _ in client?.output.finish(saying: buffer) }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }

    /// The connection ended, whoever ended it: the client is closed as every client is.
    func channelInactive(context: ChannelHandlerContext) {
        if let client { connections.closed(client) }
        client = nil
        context.fireChannelInactive()
    }
}
