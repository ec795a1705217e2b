import Glibc
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// The TCP listener for browser pages (`[websocket]`): plain HTTP for the live page and the
/// client module, and the protocol over WebSocket at `/ws` (docs/protocol.md, WebSocket).
enum WebServer {
    /// The path the WebSocket is at.
    static let webSocketPath = "/ws"
    /// The kernel's send buffer for one client (it doubles it for its bookkeeping).
    static let sendBuffer: SocketOptionValue = 64 << 10
    /// The largest request a WebSocket client may send, as on the socket.
    static let maximumMessage = LineFramer.maximumLength

    /// Binds `address`, or takes the listening `descriptor` systemd passed, and serves it on
    /// `loop`; from outside the loop, as binding waits.
    static func start(daemon: NIOLoopBound<Daemon>, outputs: NIOLoopBound<ClientOutputs>, access: NIOLoopBound<WebAccess>,
                      on loop: EventLoop, address: ListenAddress, descriptor: Int32? = nil) throws -> Channel {
        let bootstrap = ServerBootstrap(group: loop)
            .serverChannelOption(.backlog, value: SocketServer.backlog)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    // Out of descriptors, accepting pauses instead of spinning.
                    try channel.pipeline.syncOperations.addHandler(AcceptBackoffHandler(shouldForwardIOErrorCaught: false))
                }
            }
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            // What the kernel holds for one client, bounded as a Unix socket's is: a page that
            // stops reading is then seen behind after ~100 KiB (and gets coalesced values)
            // instead of after the megabytes loopback TCP would buffer, all of them stale.
            .childChannelOption(.socketOption(.so_sndbuf), value: WebServer.sendBuffer)
            .childChannelInitializer { channel in
                let pages = PageHandler(access: access.value)
                let upgrader = NIOWebSocketServerUpgrader(
                    maxFrameSize: maximumMessage, automaticErrorHandling: false,
                    shouldUpgrade: { channel, head in
                        // The handshake is accepted at /ws from an allowed page; otherwise the
                        // request goes on to the page handler, which says why not.
                        let allowed = head.uri == webSocketPath && access.value.allows(origin: head.headers.first(name: "Origin"))
                        return channel.eventLoop.makeSucceededFuture(allowed ? HTTPHeaders() : nil)
                    },
                    upgradePipelineHandler: { channel, _ in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(NIOWebSocketFrameAggregator(
                                minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 256, maxAccumulatedFrameSize: maximumMessage))
                            try channel.pipeline.syncOperations.addHandler(WebSocketClientHandler(daemon: daemon.value, outputs: outputs.value))
                        }
                    })
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                        withServerUpgrade: (upgraders: [upgrader], completionHandler: { context in
                            context.pipeline.syncOperations.removeHandler(pages, promise: nil)
                        }))
                    try channel.pipeline.syncOperations.addHandler(pages)
                }
            }
        if let descriptor { return try bootstrap.withBoundSocket(descriptor).wait() }
        do {
            return try bootstrap.bind(host: address.host, port: address.port).wait()
        } catch let error as IOError where error.errnoCode == EAFNOSUPPORT {
            // systemd's RestrictAddressFamilies: the unit lets motiond use TCP only through a
            // socket it passes.
            throw SocketError(description: "cannot listen on \(address) ([websocket] listen): this service may not open TCP sockets itself; enable the socket unit that passes one: systemctl enable --now motiond-web.socket (its ListenStream says where)")
        } catch {
            throw SocketError(description: "cannot listen on \(address) ([websocket] listen): \(error)")
        }
    }
}

/// Who may use the listener, as the configuration in force says: which pages may open the
/// WebSocket. Changed by a reload; read on the loop.
final class WebAccess {
    /// The origins allowed; "*" allows any, "null" pages from files and sandboxed frames.
    var origins: [String]

    init(origins: [String]) {
        self.origins = origins
    }

    /// Whether a handshake with this `Origin` header may go ahead. Without the header the
    /// client is not a browser page (browsers always send it), and nothing it could say
    /// would be proof of anything.
    func allows(origin: String?) -> Bool {
        guard let origin else { return true }
        return origins.contains("*") || origins.contains(origin)
    }
}

/// Serves `GET /` (the live page) and `GET /motiond.js` (the client module), and refuses a
/// WebSocket handshake that was not accepted, saying why.
final class PageHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// A file served, compiled into motiond.
    struct Page {
        var type: String
        var body: [UInt8]
    }

    static let pages: [String: Page] = [
        "/": Page(type: "text/html; charset=utf-8", body: PackageResources.index_html),
        "/motiond.js": Page(type: "text/javascript; charset=utf-8", body: PackageResources.motiond_js),
    ]

    private let access: WebAccess
    /// The request being read: only its head matters (a body is read and dropped).
    private var head: HTTPRequestHead?

    init(access: WebAccess) {
        self.access = access
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break
        case .end:
            guard let head else { return }
            self.head = nil
            respond(to: head, context: context)
        }
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? head.uri
        if path == WebServer.webSocketPath {
            let origin = head.headers.first(name: "Origin")
            guard access.allows(origin: origin) else {
                return send(.forbidden, "the origin \(origin ?? "") may not connect: it is not in [websocket] allowed_origins\n", to: head, context: context)
            }
            return send(.badRequest, "\(WebServer.webSocketPath) speaks WebSocket only: connect with a WebSocket client (version 13)\n", to: head, context: context)
        }
        guard let page = Self.pages[path] else {
            return send(.notFound, "no page is at \(path); motiond serves / (the live page), /motiond.js and \(WebServer.webSocketPath)\n", to: head, context: context)
        }
        guard head.method == .GET || head.method == .HEAD else {
            return send(.methodNotAllowed, "only GET and HEAD are served here\n", to: head, context: context, extra: [("Allow", "GET, HEAD")])
        }
        var headers = Self.commonHeaders(type: page.type, length: page.body.count, head: head)
        // A page from a file or another port may import the module; it holds no secret.
        if path == "/motiond.js" { headers.add(name: "Access-Control-Allow-Origin", value: "*") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .ok, headers: headers))), promise: nil)
        if head.method == .GET {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: page.body)))), promise: nil)
        }
        finish(head, context: context)
    }

    private func send(_ status: HTTPResponseStatus, _ text: String, to head: HTTPRequestHead, context: ChannelHandlerContext,
                      extra: [(String, String)] = []) {
        var headers = Self.commonHeaders(type: "text/plain; charset=utf-8", length: text.utf8.count, head: head)
        for (name, value) in extra { headers.add(name: name, value: value) }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
        if head.method != .HEAD { context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: text)))), promise: nil) }
        finish(head, context: context)
    }

    private func finish(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        let keepAlive = head.isKeepAlive
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { [context] _ in
            if !keepAlive { context.close(promise: nil) }
        }
    }

    private static func commonHeaders(type: String, length: Int, head: HTTPRequestHead) -> HTTPHeaders {
        var headers = HTTPHeaders([
            ("Content-Type", type), ("Content-Length", String(length)),
            ("X-Content-Type-Options", "nosniff"), ("Cache-Control", "no-cache"),
        ])
        if !head.isKeepAlive { headers.add(name: "Connection", value: "close") }
        return headers
    }
}

/// One WebSocket client: text messages are protocol requests, the daemon's lines go out as
/// text messages (``ChannelOutput`` with ``LineFraming/webSocket``).
final class WebSocketClientHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let daemon: Daemon
    private let outputs: ClientOutputs
    private var session: ClientSession?
    private var output: ChannelOutput?

    init(daemon: Daemon, outputs: ClientOutputs) {
        self.daemon = daemon
        self.outputs = outputs
    }

    /// Added once the handshake is done, on a connection already active: the session starts
    /// here, read-only (over TCP nobody's credentials are known; `auth` gives control).
    func handlerAdded(context: ChannelHandlerContext) {
        let output = ChannelOutput(channel: context.channel, framing: .webSocket)
        self.output = output
        outputs.add(output)
        session = daemon.connect(output, credentials: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text:
            guard let session else { return }
            daemon.receive(utf8: frame.unmaskedData.readableBytesView, from: session)
        case .binary:
            guard let session else { return }
            daemon.refuse(ProtocolError("bad_json", "requests are JSON in text messages, not binary ones"), to: session)
        case .ping:
            var pong = frame.unmaskedData
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: pong.readSlice(length: pong.readableBytes)!)),
                                  promise: nil)
        case .connectionClose:
            // The client's code, echoed as RFC 6455 asks; then the connection ends.
            var data = frame.unmaskedData
            let code = data.readWebSocketErrorCode() ?? .normalClosure
            var reply = context.channel.allocator.buffer(capacity: 2)
            reply.write(webSocketErrorCode: code)
            output?.markClosed()
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: reply))).whenComplete { [context] _ in
                context.close(promise: nil)
            }
        default:
            break
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        output?.writabilityChanged(context.channel.isWritable)
        context.fireChannelWritabilityChanged()
    }

    /// A message over 64 KiB (whole or in fragments), or a broken frame: the connection is
    /// closed with a close frame saying why.
    func errorCaught(context: ChannelHandlerContext, error: Error) {
        guard output?.isClosed == false, !(error is IOError) else { return context.close(promise: nil) }
        output?.markClosed()
        let (code, reason): (WebSocketErrorCode, String)
        switch error {
        case NIOWebSocketError.invalidFrameLength, NIOWebSocketFrameAggregator.Error.accumulatedFrameSizeIsTooLarge,
             NIOWebSocketFrameAggregator.Error.tooManyFragments:
            (code, reason) = (.messageTooLarge, "a message is longer than 64 KiB")
        default:
            (code, reason) = (.protocolError, "not a valid WebSocket frame")
        }
        var data = context.channel.allocator.buffer(capacity: 2 + reason.utf8.count)
        data.write(webSocketErrorCode: code)
        data.writeString(reason)
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: data))).whenComplete { [context] _ in
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let session { daemon.disconnect(session) }
        if let output { outputs.remove(output) }
        session = nil
        context.fireChannelInactive()
    }
}
