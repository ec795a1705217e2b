import Foundation
import Glibc
import MotionCore
import NIOCore
import NIOPosix

/// Why the socket could not be opened.
public struct SocketError: Error, CustomStringConvertible {
    public var description: String
}

/// The listening socket: bound here (replacing a stale file from a crash, refusing to
/// replace a live motiond's) or inherited from systemd (`LISTEN_FDS`).
enum SocketServer {
    /// Starts listening; `descriptor` is a socket systemd passed, if any.
    /// Binds from outside the loop: binding waits.
    static func start(daemon boundDaemon: NIOLoopBound<Daemon>, outputs boundOutputs: NIOLoopBound<ClientOutputs>, on loop: EventLoop,
                      path: String, group: String?, descriptor: Int32?) throws -> Channel {
        let bootstrap = ServerBootstrap(group: loop)
            .serverChannelOption(.backlog, value: 128)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFramer()))
                    try channel.pipeline.syncOperations.addHandler(ClientHandler(daemon: boundDaemon.value, outputs: boundOutputs.value))
                }
            }
        if let descriptor {
            return try bootstrap.withBoundSocket(descriptor).wait()
        }
        try removeStaleSocket(path)
        let channel = try bootstrap.bind(unixDomainSocketPath: path).wait()
        guard chmod(path, 0o660) == 0 else { throw SocketError(description: "cannot set the mode of \(path): \(String(cString: strerror(errno)))") }
        if let group {
            guard let entry = getgrnam(group) else { throw SocketError(description: "no group is called '\(group)' ([daemon] socket_group)") }
            guard chown(path, uid_t.max, entry.pointee.gr_gid) == 0 else {
                throw SocketError(description: "cannot give \(path) to group \(group): \(String(cString: strerror(errno)))")
            }
        }
        return channel
    }

    /// Removes a socket file nobody listens on; refuses when someone does.
    static func removeStaleSocket(_ path: String) throws {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }
        guard status.st_mode & S_IFMT == S_IFSOCK else {
            throw SocketError(description: "\(path) exists and is not a socket; remove it or choose another path")
        }
        let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { Glibc.close(probe) }
        var (address, length) = unixSocketAddress(path)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(probe, $0, length) }
        }
        if connected == 0 {
            throw SocketError(description: "another motiond is already listening on \(path); stop it first, or give this one another --socket")
        }
        unlink(path)
    }
}

/// Tells systemd how the service is doing (`sd_notify`), when it runs under systemd.
struct SystemdNotifier {
    private let path: String?

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        path = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whether there is a systemd to tell.
    var isActive: Bool { path != nil }

    /// Sends `READY=1`, `STATUS=…`, `WATCHDOG=1`, `STOPPING=1` or `RELOADING=1`.
    func notify(_ message: String) {
        guard let path else { return }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { Glibc.close(fd) }
        var (address, length) = unixSocketAddress(path)
        _ = message.withCString { text in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, text, strlen(text), 0, $0, length) }
            }
        }
    }
}
