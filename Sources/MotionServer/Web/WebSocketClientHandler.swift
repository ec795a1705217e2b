import NIOCore
import NIOWebSocket
import MotionWire
import MotionDaemon

/// One WebSocket client: text messages are protocol requests, the daemon's lines go out as
/// text messages (``ChannelOutput`` with ``LineFraming/webSocket``). Frames are read by the
/// rules of RFC 6455 (``WebSocketMessageReader``); a client that breaks one is closed with
/// the code and reason. The client is opened and closed through ``ClientConnections``, as a
/// Unix socket's is.
final class WebSocketClientHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let connections: ClientConnections
    /// The client, from the handshake to the connection's end.
    private var client: ConnectedClient?
    private var reader = WebSocketMessageReader()

    init(connections: ClientConnections) {
        self.connections = connections
    }

    /// Added once the handshake is done, on a connection already active: the session starts
    /// here, read-only (over TCP nobody's credentials are known; `auth` gives control).
    func handlerAdded(context: ChannelHandlerContext) {
        client = connections.open(context.channel, framing: .webSocket, credentials: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        connections.locked { daemon in read(frame, into: daemon, context: context) }
    }

    /// A frame, under the daemon's lock.
    private func read(_ frame: WebSocketFrame, into daemon: Daemon, context: ChannelHandlerContext) {
        guard let client, !client.output.isClosed else { return }
        switch reader.read(frame) {
        case .text(let message):
            daemon.receive(utf8: message.readableBytesView, from: client.session)
        case .binary:
            daemon.refuse(ProtocolError(.badJSON, "requests are JSON in text messages, not binary ones"), to: client.session)
        case .ping(let payload):
            client.output.sendPong(payload)
        case .close(let code):
            // The client's code echoed (none for none, RFC 6455 5.5.1); then the connection ends.
            var reply = context.channel.allocator.buffer(capacity: 2)
            if let code { reply.write(webSocketErrorCode: code) }
            close(context, with: reply)
        case .nothing:
            break
        case .fail(let code, let reason):
            fail(context, code, reason)
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        connections.locked { _ in client?.output.writabilityChanged(context.channel.isWritable) }
        context.fireChannelWritabilityChanged()
    }

    /// A frame NIO could not read (longer than 64 KiB, a control frame fragmented or over
    /// 125 bytes): the connection is closed with a close frame saying why.
    func errorCaught(context: ChannelHandlerContext, error: Error) {
        connections.locked { _ in refuse(error, context: context) }
    }

    private func refuse(_ error: Error, context: ChannelHandlerContext) {
        guard client?.output.isClosed == false, !(error is IOError) else { return context.close(promise: nil) }
        switch error {
        case NIOWebSocketError.invalidFrameLength: fail(context, .messageTooLarge, "a message is longer than 64 KiB")
        case NIOWebSocketError.fragmentedControlFrame: fail(context, .protocolError, "a control frame may not be fragmented")
        case NIOWebSocketError.multiByteControlFrameLength: fail(context, .protocolError, "a control frame is at most 125 bytes")
        default: fail(context, .protocolError, "not a valid WebSocket frame")
        }
    }

    /// Fails the connection (RFC 6455 7.1.7): a close frame with `code` and `reason`, then the end.
    private func fail(_ context: ChannelHandlerContext, _ code: WebSocketErrorCode, _ reason: String) {
        var data = context.channel.allocator.buffer(capacity: 2 + reason.utf8.count)
        data.write(webSocketErrorCode: code)
        data.writeString(reason)
        close(context, with: data)
    }

    /// Sends a close frame with `body` (no more output after it) and closes the connection:
    /// through the output, so that a frame's lines it was given first go first.
    private func close(_ context: ChannelHandlerContext, with body: ByteBuffer) {
        guard let client else { return context.close(promise: nil) }
        client.output.closeWebSocket(with: body)
    }

    /// The connection ended, whoever ended it: the client is closed as every client is.
    func channelInactive(context: ChannelHandlerContext) {
        if let client { connections.closed(client) }
        client = nil
        context.fireChannelInactive()
    }
}
