import FoundationEssentials
import Glibc
import Logging
import MotionCore
import NIOCore
import NIOPosix
import TouchInput
import MotionWire
import MotionDaemon

/// The listening socket: bound here (replacing a stale file from a crash, refusing to
/// replace a live motiond's) or inherited from systemd (`LISTEN_FDS`).
enum SocketServer {
    /// How many connections may wait to be accepted.
    static let backlog: Int32 = 128

    /// Starts listening; `descriptor` is a socket systemd passed, if any.
    /// Binds from outside the loop: binding waits. A socket that fails after it is bound (its
    /// mode, its group) is closed and removed again.
    static func start(connections boundConnections: NIOLoopBound<ClientConnections>, on loop: EventLoop,
                      path: String, group: String?, descriptor: Int32?) throws(StartupFailure) -> Channel {
        let listener: Int32
        if let descriptor { listener = descriptor } else { listener = try listen(on: path) }
        let bootstrap = ServerBootstrap(group: loop)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(DescriptorReserve(listener: listener))
                    // Should the reserve not help, accepting pauses instead of spinning on EMFILE.
                    try channel.pipeline.syncOperations.addHandler(AcceptBackoffHandler(shouldForwardIOErrorCaught: false))
                }
            }
            .childChannelInitializer { channel in
                // The peer's credentials first: the session exists before any line arrives.
                ClientHandler.credentials(of: channel).and(SocketDescriptor.duplicate(of: channel)).flatMapThrowing { credentials, socket in
                    let handler = ClientHandler(connections: boundConnections.value, credentials: credentials, socket: socket)
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFramer()))
                    try channel.pipeline.syncOperations.addHandler(handler)
                }
            }
        let channel: Channel
        do { channel = try bootstrap.withBoundSocket(listener).wait() } catch {
            guard descriptor == nil else { throw .passedSocketUnusable(.control, error) }
            unlink(path)
            throw .socketNotServed(path: path, error)
        }
        guard descriptor == nil else { return channel }
        do throws(StartupFailure) {
            try share(path, with: group)
        } catch {
            channel.close(promise: nil)
            unlink(path)
            throw error
        }
        return channel
    }

    /// Lets motiond's group, or `group`, connect to the socket at `path`: mode 0660.
    private static func share(_ path: String, with group: String?) throws(StartupFailure) {
        guard chmod(path, 0o660) == 0 else { throw .socketModeNotSet(path: path, errno: errno) }
        guard let group else { return }
        guard let entry = getgrnam(group) else { throw .noSuchGroup(group) }
        guard chown(path, uid_t.max, entry.pointee.gr_gid) == 0 else { throw .socketGroupNotSet(path: path, group: group, errno: errno) }
    }

    /// A socket listening on `path`, a stale file from a crash replaced.
    static func listen(on path: String) throws(StartupFailure) -> Int32 {
        let (address, length): (sockaddr_un, socklen_t)
        do { (address, length) = try unixSocketAddress(path) } catch { throw .socketPathTooLong(error) }
        try removeStaleSocket(path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw .socketNotCreated(errno: errno) }
        var bound = address
        let status = withUnsafePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard status == 0, Glibc.listen(fd, backlog) == 0 else {
            let failed = errno
            Glibc.close(fd)
            throw .cannotListen(path: path, errno: failed)
        }
        return fd
    }

    /// Removes a socket file nobody listens on; refuses when someone does.
    static func removeStaleSocket(_ path: String) throws(StartupFailure) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }
        guard status.st_mode & S_IFMT == S_IFSOCK else { throw .notASocket(path: path) }
        var (address, length): (sockaddr_un, socklen_t)
        do { (address, length) = try unixSocketAddress(path) } catch { throw .socketPathTooLong(error) }
        let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { Glibc.close(probe) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(probe, $0, length) }
        }
        if connected == 0 { throw .socketInUse(path: path) }
        unlink(path)
    }
}

/// One descriptor kept in reserve, so that a daemon out of descriptors (EMFILE, ENFILE)
/// still answers: it frees the reserve, accepts each waiting connection, tells it why with a
/// `bye` and closes it, then takes the reserve back. Clients that are connected keep being
/// served; new ones are refused clearly instead of hanging in the backlog, and are accepted
/// again as soon as descriptors are free. Without this, NIO's accept fails, the listening
/// socket stays readable, and the loop spins on it.
final class DescriptorReserve: ChannelInboundHandler {
    typealias InboundIn = Channel
    typealias InboundOut = Channel

    private let listener: Int32
    private var reserve: Int32 = -1
    private let logger = Logger(label: "motiond")
    /// Connections refused, logged at most every 10 s.
    private var refusals = LogRateLimit()
    static let bye = ProtocolLine.bye("motiond has no descriptor left for another client; try again later")

    init(listener: Int32) {
        self.listener = listener
        takeReserve()
    }

    deinit { if reserve >= 0 { Glibc.close(reserve) } }

    private func takeReserve() {
        if reserve < 0 { reserve = open("/dev/null", O_RDONLY | O_CLOEXEC) }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        guard let error = error as? IOError, error.errnoCode == EMFILE || error.errnoCode == ENFILE else {
            return context.fireErrorCaught(error)
        }
        takeReserve()
        guard reserve >= 0 else { return context.fireErrorCaught(error) }  // the backoff handler waits instead
        Glibc.close(reserve)
        reserve = -1
        // At most a backlog's worth: a flood of connections cannot keep the loop here.
        var refused = 0
        for _ in 0..<SocketServer.backlog {
            let client = accept(listener, nil, nil)
            if client < 0 { break }
            _ = Self.bye.withCString { send(client, $0, strlen($0), Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
            Glibc.close(client)
            refused += 1
        }
        takeReserve()
        if let refused = refusals.record(refused, at: monotonicNow()) {
            logger.warning("out of file descriptors: refused \(refused) connection(s); raise LimitNOFILE or find who holds connections open")
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if reserve >= 0 { Glibc.close(reserve) }
        reserve = -1
        context.fireChannelInactive()
    }
}
