import Glibc
import MotionConfiguration
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import MotionDaemon

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
    static func start(connections: NIOLoopBound<ClientConnections>, access: NIOLoopBound<WebAccess>,
                      on loop: EventLoop, address: ListenAddress, descriptor: Int32? = nil) throws(StartupFailure) -> Channel {
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
                    try configure(channel, connections: connections.value, access: access.value)
                }
            }
        if let descriptor {
            do { return try bootstrap.withBoundSocket(descriptor).wait() } catch { throw .passedSocketUnusable(.web, error) }
        }
        do {
            return try bootstrap.bind(host: address.host, port: address.port).wait()
        } catch let error as IOError where error.errnoCode == EAFNOSUPPORT {
            // systemd's RestrictAddressFamilies: the unit lets motiond use TCP only through a
            // socket it passes.
            throw .webListenerForbidden(address)
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            throw .webAddressInUse(address, error)
        } catch {
            throw .webListenerNotBound(address, error)
        }
    }
}

extension WebServer {
    /// Makes `channel`, a new connection, an HTTP connection that may become a WebSocket: the
    /// same pipeline for the listener, the tests and the fuzz target.
    static func configure(_ channel: Channel, connections: ClientConnections, access: WebAccess) throws {
        // The closures below are Sendable by NIO's signature, but all run on this loop.
        let loop = channel.eventLoop
        let pages = NIOLoopBound(PageHandler(access: access, connections: connections), eventLoop: loop)
        let access = NIOLoopBound(access, eventLoop: loop)
        let connections = NIOLoopBound(connections, eventLoop: loop)
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
                    try channel.pipeline.syncOperations.addHandler(WebSocketClientHandler(connections: connections.value))
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
    try WebServer.configure(channel, connections: ClientConnections(daemon: daemon, lock: DaemonLock(), loop: channel.eventLoop),
                            access: WebAccess(origins: origins, hosts: hosts))
}
