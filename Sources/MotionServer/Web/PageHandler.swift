import NIOCore
import NIOHTTP1
import MotionWire
import MotionDaemon

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
    /// Whose metrics and health are served (read under the daemon's lock).
    private let connections: ClientConnections
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

    init(access: WebAccess, connections: ClientConnections) {
        self.access = access
        self.connections = connections
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
            page = Page(type: Daemon.metricsContentType, body: connections.locked { $0.metricsExposition() })
        case "/healthz":
            let health = connections.locked { $0.health() }
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
