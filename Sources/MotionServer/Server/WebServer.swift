import Glibc
import Logging
import MotionConfiguration
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
    static let maximumMessage = WebSocketMessageReader.maximumMessage
    /// How long a request may take to arrive whole, counted from the connection's start or the
    /// end of the previous response; so also how long an idle keep-alive connection is kept.
    static let requestTimeout: TimeAmount = .seconds(10)

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
                channel.eventLoop.makeCompletedFuture {
                    try configure(channel, daemon: daemon.value, outputs: outputs.value, access: access.value)
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

extension WebServer {
    /// Makes `channel`, a new connection, an HTTP connection that may become a WebSocket: the
    /// same pipeline for the listener, the tests and the fuzz target.
    static func configure(_ channel: Channel, daemon: Daemon, outputs: ClientOutputs, access: WebAccess) throws {
        // The closures below are Sendable by NIO's signature, but all run on this loop.
        let loop = channel.eventLoop
        let pages = NIOLoopBound(PageHandler(access: access, daemon: daemon), eventLoop: loop)
        let access = NIOLoopBound(access, eventLoop: loop)
        let client = NIOLoopBound((daemon, outputs), eventLoop: loop)
        let upgrader = NIOWebSocketServerUpgrader(
            maxFrameSize: maximumMessage, automaticErrorHandling: false,
            shouldUpgrade: { channel, head in
                // The handshake is accepted at /ws from an allowed page on an allowed host;
                // otherwise the request goes on to the page handler, which says why not.
                let allowed = access.value.target(of: head, local: channel.localAddress) == .path(webSocketPath)
                    && access.value.allows(origin: head.headers.first(name: "Origin"))
                return channel.eventLoop.makeSucceededFuture(allowed ? HTTPHeaders() : nil)
            },
            upgradePipelineHandler: { channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    let (daemon, outputs) = client.value
                    try channel.pipeline.syncOperations.addHandler(WebSocketClientHandler(daemon: daemon, outputs: outputs))
                }
            })
        try channel.pipeline.syncOperations.configureHTTPServerPipeline(
            withServerUpgrade: (upgraders: [upgrader], completionHandler: { context in
                context.pipeline.syncOperations.removeHandler(pages.value, promise: nil)
            }))
        try channel.pipeline.syncOperations.addHandler(pages.value)
    }
}

/// A connection to the listener for tests and fuzzing, without a socket: `channel` (an
/// `EmbeddedChannel`, say) is set up as the listener sets up a connection it accepted, serving
/// `daemon`'s protocol to pages from `origins` on `hosts` (besides the listener's own).
public func serveWebConnection(_ channel: Channel, daemon: Daemon, origins: [String], hosts: [String] = []) throws {
    try WebServer.configure(channel, daemon: daemon, outputs: ClientOutputs(), access: WebAccess(origins: origins, hosts: hosts))
}

/// Who may use the listener, as the configuration in force says: which pages may open the
/// WebSocket, and by which host names. Changed by a reload; read on the loop.
final class WebAccess {
    /// The origins allowed; "*" allows any, "null" pages from files and sandboxed frames.
    var origins: [String]
    /// Host names answered besides the listener's own address and `localhost`
    /// (`[websocket] allowed_hosts`), lowercased.
    var hosts: [String]

    init(origins: [String], hosts: [String] = []) {
        self.origins = origins
        self.hosts = hosts.map { $0.lowercased() }
    }

    /// The path `head` asks for, once its target and `Host` header are found to name this
    /// listener, which the client reached at `local`; else why it is not answered. The rules
    /// are RFC 9112's (3.2, 3.2.2), written down in docs/protocol.md (The listener's manners).
    func target(of head: HTTPRequestHead, local: SocketAddress?) -> RequestTarget {
        // Whatever the target's form, the message itself must be clear about its host: at
        // most one Host, a valid one, and one at all from HTTP/1.1.
        let fields = head.headers["Host"]
        guard fields.count <= 1 else {
            return .unclear("a request names its host once: this one has \(fields.count) Host headers")
        }
        var named: HostHeader?, text = fields.first ?? "(none)", path = Substring(head.uri)
        if let host = fields.first {
            guard let header = HostHeader(fieldValue: host) else {
                return .unclear("the Host header '\(host.prefix(100))' is not a host with an optional port")
            }
            named = header
        } else if (head.version.major, head.version.minor) >= (1, 1) {
            return .unclear("an HTTP/1.1 request names its host in a Host header")
        }
        // The absolute form (`GET http://127.0.0.1:8765/metrics`) names the host itself, and
        // the Host header is then ignored.
        if let absolute = AbsoluteTarget(head.uri) {
            text = "\(absolute.scheme)://\(absolute.authority)"
            guard absolute.scheme == "http" else { return .elsewhere(text) }
            guard let authority = HostHeader(String(absolute.authority)) else {
                return .unclear("the request's target '\(head.uri.prefix(100))' names no host with an optional port")
            }
            (named, path) = (authority, absolute.path)
        }
        guard let named, allows(named, local: local) else { return .elsewhere(text) }
        return .path(String(path.prefix { $0 != "?" }))
    }

    /// Whether `named` is this listener, which the client reached at `local`: by its address
    /// and port, by `localhost`, or by a name in ``hosts``, with the listener's port or none.
    /// A page on another name reached this address through DNS rebinding, and is not
    /// answered (RFC 9110's 421).
    private func allows(_ named: HostHeader, local: SocketAddress?) -> Bool {
        guard let local, let port = local.port else { return false }
        // A missing port is taken as meaning this one (a program's request, not a browser's,
        // which always names a port other than 80); a wrong one is refused.
        guard named.port == nil || named.port == port else { return false }
        if named.name == "localhost" || hosts.contains(named.name) { return true }
        guard let ip = local.ipAddress else { return false }
        return HostHeader.sameAddress(named.name, ip)
    }

    /// Whether a handshake with this `Origin` header may go ahead. Without the header the
    /// client is not a browser page (browsers always send it), and nothing it could say
    /// would be proof of anything.
    func allows(origin: String?) -> Bool {
        guard let origin else { return true }
        return origins.contains("*") || origins.contains(origin)
    }
}

/// What the listener makes of a request's target and `Host` header.
enum RequestTarget: Equatable {
    /// A path this listener is asked for, without the query.
    case path(String)
    /// The request is not clear about which host it is for (400), and why.
    case unclear(String)
    /// The request is for another host (421): the one it names, or "(none)".
    case elsewhere(String)
}

/// A request target in the absolute form, `scheme://authority/path?query` (RFC 9112 3.2.2):
/// what a proxy sends, and any client may.
struct AbsoluteTarget {
    /// Lowercased.
    var scheme: String
    var authority: Substring
    /// From the `/` after the authority, with the query; "/" when there is none.
    var path: Substring

    /// Nil for a target in the origin form (`/path`) or anything not led by a scheme.
    init?(_ target: String) {
        // A scheme holds no ":", so the first one ends it (a plain search: Foundation's
        // range(of:) would bring Foundation proper into the binary).
        guard let colon = target.firstIndex(of: ":"), target[colon...].hasPrefix("://") else { return nil }
        let scheme = target[..<colon]
        // RFC 3986 3.1: a letter, then letters, digits, "+", "-" and ".".
        guard let first = scheme.first, first.isASCII, first.isLetter,
              scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }) else { return nil }
        let rest = target[target.index(colon, offsetBy: 3)...]
        let end = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        self.scheme = scheme.lowercased()
        authority = rest[..<end]
        path = rest[end...].hasPrefix("/") ? rest[end...] : "/" + rest[end...]
    }
}

/// Serves `GET /` (the live page), `GET /motiond.js` (the client module), and for a fleet's
/// monitoring `GET /metrics` (Prometheus's text format) and `GET /healthz` (200 or 503, and
/// why, as JSON; docs/operations.md); and refuses a WebSocket handshake that was not
/// accepted, saying why. It also keeps the connection's
/// manners: a request must arrive whole within ``WebServer/requestTimeout`` (and a client
/// must read its responses within it), a request for another host is answered 421, and a
/// request that cannot be read ends the connection.
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
        // The same page in its calibration mode, for `motionctl calibrate`.
        "/calibrate": Page(type: "text/html; charset=utf-8", body: PackageResources.index_html),
    ]

    /// What a fleet's monitoring reads (docs/operations.md).
    static let monitoringPaths: Set<String> = ["/metrics", "/healthz"]

    private let access: WebAccess
    /// Whose metrics and health are served.
    private let daemon: Daemon
    /// The request being read: only its head matters (a body is read and dropped).
    private var head: HTTPRequestHead?
    /// A whole request not yet answered because the client is not reading what it was sent.
    /// Pipelined requests wait behind it in NIO's pipelining handler, and nothing more is
    /// read, so a client that pipelines requests and never reads costs one response, not one
    /// for each 40-byte request (a page is 8 KiB, the module 15 KiB).
    private var unanswered: HTTPRequestHead?
    /// Closes the connection when the awaited request has not arrived whole in time.
    private var deadline: Scheduled<Void>?
    /// Whether the last response said `Connection: close`: requests pipelined after it are
    /// not answered.
    private var closing = false
    /// Whether a response is being written: a request that comes meanwhile waits its turn.
    private var responding = false

    init(access: WebAccess, daemon: Daemon) {
        self.access = access
        self.daemon = daemon
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { awaitRequest(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        awaitRequest(context)
        context.fireChannelActive()
    }

    /// Removed once the connection is a WebSocket, which has no request deadline.
    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    /// The next request must be complete within the timeout, or the connection closes: a
    /// client that sends a head slowly, or none, holds a connection only that long.
    private func awaitRequest(_ context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: WebServer.requestTimeout) { [context] in
            context.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break
        case .end:
            guard let head else { return }
            self.head = nil
            deadline?.cancel()
            deadline = nil
            if responding {
                // A pipelined request, handed on while the previous response was being
                // finished: answered on the loop's next turn, so that a thousand pipelined
                // requests do not nest a thousand responses on the stack.
                return context.eventLoop.assumeIsolated().execute { [self] in answer(head, context: context) }
            }
            answer(head, context: context)
        }
    }

    /// Answers a whole request now, or when the client reads again.
    private func answer(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        guard !closing, context.channel.isActive else { return }
        guard context.channel.isWritable else {
            // Answered when the client reads again; closed if it does not in time.
            unanswered = head
            context.channel.setOption(ChannelOptions.autoRead, value: false).whenFailure { _ in }
            return awaitRequest(context)
        }
        responding = true
        defer { responding = false }
        respond(to: head, context: context)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, let head = unanswered {
            unanswered = nil
            deadline?.cancel()
            deadline = nil
            context.channel.setOption(ChannelOptions.autoRead, value: true).whenFailure { _ in }
            answer(head, context: context)
        }
        context.fireChannelWritabilityChanged()
    }

    /// A request NIO could not read (a head over its size limit, bad syntax): NIO's error
    /// handler has answered 400 with `Connection: close`, so the connection ends. Output is
    /// shut first and the socket closed a second later, so that the client, perhaps still
    /// sending, reads the 400 instead of a reset.
    /// Other errors need nothing: a refused WebSocket upgrade is reported this way before
    /// the request is answered as an ordinary one, and an I/O error closes the channel itself.
    func errorCaught(context: ChannelHandlerContext, error: Error) {
        guard error is HTTPParserError else { return }
        closing = true
        deadline?.cancel()
        deadline = nil
        let channel = context.channel
        channel.close(mode: .output).whenComplete { _ in
            channel.eventLoop.scheduleTask(in: .seconds(1)) { channel.close(promise: nil) }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        let path: String
        switch access.target(of: head, local: context.channel.localAddress) {
        case .path(let asked):
            path = asked
        case .unclear(let why):
            return send(.badRequest, "\(why)\n", to: head, context: context)
        case .elsewhere(let host):
            return send(.misdirectedRequest, "motiond does not serve the host \(host.prefix(100)): name it by its address, localhost, or a name in [websocket] allowed_hosts\n",
                        to: head, context: context)
        }
        if path == WebServer.webSocketPath {
            let origin = head.headers.first(name: "Origin")
            guard access.allows(origin: origin) else {
                return send(.forbidden, "the origin \(origin ?? "") may not connect: it is not in [websocket] allowed_origins\n", to: head, context: context)
            }
            return send(.badRequest, "\(WebServer.webSocketPath) speaks WebSocket only: connect with a WebSocket client (version 13)\n", to: head, context: context)
        }
        let monitoring = Self.monitoringPaths.contains(path)
        guard monitoring || Self.pages[path] != nil else {
            return send(.notFound, "no page is at \(path.prefix(200)); motiond serves / (the live page), /calibrate (its calibration mode), /motiond.js, /metrics, /healthz and \(WebServer.webSocketPath)\n", to: head, context: context)
        }
        guard head.method == .GET || head.method == .HEAD else {
            return send(.methodNotAllowed, "only GET and HEAD are served here\n", to: head, context: context, extra: [("Allow", "GET, HEAD")])
        }
        // The monitoring answers are made when asked; the pages are compiled in.
        var status = HTTPResponseStatus.ok
        let page: Page
        switch path {
        case "/metrics":
            page = Page(type: Daemon.metricsContentType, body: daemon.metricsExposition())
        case "/healthz":
            let health = daemon.health()
            if !health.isHealthy { status = .serviceUnavailable }
            page = Page(type: "application/json", body: Array(ProtocolLine.text(health.json).utf8))
        default:
            page = Self.pages[path]!
        }
        var headers = Self.commonHeaders(type: page.type, length: page.body.count, keepAlive: head.isKeepAlive)
        // A page from a file or another port may import the module; it holds no secret.
        if path == "/motiond.js" { headers.add(name: "Access-Control-Allow-Origin", value: "*") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
        if head.method == .GET {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: page.body)))), promise: nil)
        }
        finish(keepAlive: head.isKeepAlive, context: context)
    }

    /// Answers with `status` and `text`. After a 400 the connection ends: what the client
    /// sends next cannot be trusted to be where a request begins.
    private func send(_ status: HTTPResponseStatus, _ text: String, to head: HTTPRequestHead, context: ChannelHandlerContext,
                      extra: [(String, String)] = []) {
        let keepAlive = head.isKeepAlive && status != .badRequest
        var headers = Self.commonHeaders(type: "text/plain; charset=utf-8", length: text.utf8.count, keepAlive: keepAlive)
        for (name, value) in extra { headers.add(name: name, value: value) }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
        if head.method != .HEAD { context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: text)))), promise: nil) }
        finish(keepAlive: keepAlive, context: context)
    }

    /// Ends the response; then the connection closes, or waits for the next request.
    private func finish(keepAlive: Bool, context: ChannelHandlerContext) {
        closing = !keepAlive
        if keepAlive { awaitRequest(context) }
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
            if !keepAlive { context.close(promise: nil) }
        }
    }

    private static func commonHeaders(type: String, length: Int, keepAlive: Bool) -> HTTPHeaders {
        var headers = HTTPHeaders([
            ("Content-Type", type), ("Content-Length", String(length)),
            ("X-Content-Type-Options", "nosniff"), ("Cache-Control", "no-cache"),
        ])
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        return headers
    }
}

/// One WebSocket client: text messages are protocol requests, the daemon's lines go out as
/// text messages (``ChannelOutput`` with ``LineFraming/webSocket``). Frames are read by the
/// rules of RFC 6455 (``WebSocketMessageReader``); a client that breaks one is closed with
/// the code and reason.
final class WebSocketClientHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let daemon: Daemon
    private let outputs: ClientOutputs
    private var session: ClientSession?
    private var output: ChannelOutput?
    private var reader = WebSocketMessageReader()

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
        guard let session, let output, !output.isClosed else { return }
        switch reader.read(unwrapInboundIn(data)) {
        case .text(let message):
            daemon.receive(utf8: message.readableBytesView, from: session)
        case .binary:
            daemon.refuse(ProtocolError(.badJSON, "requests are JSON in text messages, not binary ones"), to: session)
        case .ping(let payload):
            output.sendPong(payload)
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
        output?.writabilityChanged(context.channel.isWritable)
        context.fireChannelWritabilityChanged()
    }

    /// A frame NIO could not read (longer than 64 KiB, a control frame fragmented or over
    /// 125 bytes): the connection is closed with a close frame saying why.
    func errorCaught(context: ChannelHandlerContext, error: Error) {
        guard output?.isClosed == false, !(error is IOError) else { return context.close(promise: nil) }
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

    /// Sends a close frame with `body` (no more output after it) and closes the connection.
    private func close(_ context: ChannelHandlerContext, with body: ByteBuffer) {
        output?.markClosed()
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: body))).assumeIsolated().whenComplete { _ in
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
