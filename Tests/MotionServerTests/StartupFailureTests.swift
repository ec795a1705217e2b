import Foundation
import Glibc
import Logging
import MotionCore
import NIOCore
import NIOEmbedded
import NIOPosix
import DaemonTestSupport
import Testing
@testable import TouchInput
@testable import MotionConfiguration
@testable import MotionServer
import MotionWire
@testable import MotionDaemon

/// Each cause of a failed start is reported as itself: the case motiond's start-up throws for
/// it, with the words it says (the same words as before the causes were typed, but for the
/// raw errors that named nothing) and exit status 1.
@Suite("Start-up failures", .timeLimit(.minutes(1)))
struct StartupFailureTests {
    /// What `body` failed with, if it did.
    private func failure(_ body: () throws(StartupFailure) -> Void) -> StartupFailure? {
        do {
            try body()
            return nil
        } catch {
            return error
        }
    }

    private static func scratch() throws -> URL {
        let directory = URL(fileURLWithPath: "/tmp").appendingPathComponent("motiond-startup-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// A loop with a daemon's parts on it, as the service hands them to the listeners.
    private final class Loop {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var loop: EventLoop { group.next() }
        let connections: NIOLoopBound<ClientConnections>

        init() throws {
            let loop = group.next()
            connections = try loop.submit {
                let (daemon, _) = try makeDaemon()
                return NIOLoopBound(ClientConnections(daemon: daemon, lock: DaemonLock(), loop: loop), eventLoop: loop)
            }.wait()
        }

        func webAccess() throws -> NIOLoopBound<WebAccess> {
            let loop = self.loop
            return try loop.submit { NIOLoopBound(WebAccess(origins: []), eventLoop: loop) }.wait()
        }

        deinit { try? group.syncShutdownGracefully() }
    }

    // MARK: The Unix socket

    @Test("a file that is not a socket, a live motiond's socket, a path too long, a missing directory: each its own cause")
    func unixSocket() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }

        let file = directory.appendingPathComponent("file").path
        try "not a socket".write(toFile: file, atomically: true, encoding: .utf8)
        let notASocket = failure { () throws(StartupFailure) in _ = try SocketServer.listen(on: file) }
        guard case .notASocket(file)? = notASocket else { Issue.record("\(String(describing: notASocket))"); return }
        #expect(notASocket?.description == "\(file) exists and is not a socket; remove it or choose another path")

        let live = directory.appendingPathComponent("live.sock").path
        let listener = try SocketServer.listen(on: live)
        defer { close(listener) }
        let inUse = failure { () throws(StartupFailure) in try SocketServer.removeStaleSocket(live) }
        guard case .socketInUse(live)? = inUse else { Issue.record("\(String(describing: inUse))"); return }
        #expect(inUse?.description == "another motiond is already listening on \(live); stop it first, or give this one another --socket")

        let long = "/tmp/" + String(repeating: "x", count: 200) + ".sock"
        let tooLong = failure { () throws(StartupFailure) in _ = try SocketServer.listen(on: long) }
        guard case .socketPathTooLong(let error)? = tooLong else { Issue.record("\(String(describing: tooLong))"); return }
        #expect(error.path == long && tooLong?.description.hasPrefix("the socket path \(long) is 210 bytes; a Unix socket path has at most 107") == true)

        let missing = directory.appendingPathComponent("nowhere/motiond.sock").path
        let cannotListen = failure { () throws(StartupFailure) in _ = try SocketServer.listen(on: missing) }
        guard case .cannotListen(missing, ENOENT)? = cannotListen else { Issue.record("\(String(describing: cannotListen))"); return }
        #expect(cannotListen?.description == "cannot listen on \(missing): No such file or directory")
    }

    @Test("a socket_group that names no group: the socket motiond bound is closed and removed again")
    func noSuchGroup() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let loop = try Loop()
        let path = directory.appendingPathComponent("motiond.sock").path
        let refused = failure { () throws(StartupFailure) in
            _ = try SocketServer.start(connections: loop.connections, on: loop.loop, path: path, group: "no-such-group-of-motiond's", descriptor: nil)
        }
        guard case .noSuchGroup("no-such-group-of-motiond's")? = refused else { Issue.record("\(String(describing: refused))"); return }
        #expect(refused?.description == "no group is called 'no-such-group-of-motiond's' ([daemon] socket_group)")
        #expect(!FileManager.default.fileExists(atPath: path), "the socket was left behind")
    }

    // MARK: systemd

    @Test("a descriptor systemd passed that is no listening socket, for the Unix socket or the browsers'")
    func passedSockets() throws {
        let loop = try Loop()
        var pipe: [Int32] = [0, 0]
        try #require(Glibc.pipe(&pipe) == 0)
        defer { close(pipe[1]) }
        let control = failure { () throws(StartupFailure) in
            _ = try SocketServer.start(connections: loop.connections, on: loop.loop, path: "/nonexistent/motiond.sock", group: nil, descriptor: pipe[0])
        }
        guard case .passedSocketUnusable(.control, _)? = control else { Issue.record("\(String(describing: control))"); return }
        #expect(control?.description.hasPrefix("cannot listen on the socket systemd passed (motiond.socket): ") == true, "\(String(describing: control))")

        var other: [Int32] = [0, 0]
        try #require(Glibc.pipe(&other) == 0)
        defer { close(other[1]) }
        let access = try loop.webAccess()
        let web = failure { () throws(StartupFailure) in
            _ = try WebServer.start(connections: loop.connections, access: access, on: loop.loop,
                                    address: ListenAddress(host: "127.0.0.1", port: 0), descriptor: other[0])
        }
        guard case .passedSocketUnusable(.web, _)? = web else { Issue.record("\(String(describing: web))"); return }
        #expect(web?.description.hasPrefix("cannot listen on the socket systemd passed for the browsers (motiond-web.socket): ") == true, "\(String(describing: web))")
    }

    // MARK: The browsers' listener

    @Test("the web listener's address in use, not on this machine, or reachable by other machines without allow_remote")
    func webListener() throws {
        let loop = try Loop()
        let access = try loop.webAccess()
        // A listener of the test's own on a loopback port.
        let held = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(held >= 0)
        defer { close(held) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(held, $0, length) == 0 && listen(held, 1) == 0 && getsockname(held, $0, &length) == 0 }
        }
        try #require(bound)
        let taken = ListenAddress(host: "127.0.0.1", port: Int(UInt16(bigEndian: address.sin_port)))
        let inUse = failure { () throws(StartupFailure) in
            _ = try WebServer.start(connections: loop.connections, access: access, on: loop.loop, address: taken)
        }
        guard case .webAddressInUse(taken, _)? = inUse else { Issue.record("\(String(describing: inUse))"); return }
        #expect(inUse?.description.hasPrefix("cannot listen on \(taken) ([websocket] listen): ") == true && inUse?.description.contains("Address already in use") == true,
                "\(String(describing: inUse))")

        // TEST-NET-1 (RFC 5737) is on no machine.
        let elsewhere = ListenAddress(host: "192.0.2.1", port: 8765)
        let notBound = failure { () throws(StartupFailure) in
            _ = try WebServer.start(connections: loop.connections, access: access, on: loop.loop, address: elsewhere)
        }
        guard case .webListenerNotBound(elsewhere, _)? = notBound else { Issue.record("\(String(describing: notBound))"); return }
        #expect(notBound?.description.hasPrefix("cannot listen on 192.0.2.1:8765 ([websocket] listen): ") == true)

        var options = DaemonOptions()
        options.websocket = ListenAddress(host: "0.0.0.0", port: 8765)
        let remote = failure { () throws(StartupFailure) in _ = try WebListener.settings(Configuration(), options) }
        guard case .remoteWebListener(options.websocket!)? = remote else { Issue.record("\(String(describing: remote))"); return }
        #expect(remote?.description == "--websocket 0.0.0.0:8765: other machines could reach it, and the protocol is not encrypted; use 127.0.0.1 or [::1], or allow_remote = true in [websocket]")
    }

    // MARK: The configuration and the replay

    @Test("a configuration refused on its line")
    func configurationRefused() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("motiond.toml").path
        try "[screen]\nwidth = \"wide\"\n".write(toFile: file, atomically: true, encoding: .utf8)
        var options = DaemonOptions()
        options.configFile = file
        let refused = failure { () throws(StartupFailure) in _ = try DaemonService.loadConfiguration(options, logger: Logger(label: "test")) }
        guard case .configurationRefused(let error)? = refused else { Issue.record("\(String(describing: refused))"); return }
        #expect(error.file == file && error.line == 2)
        #expect(refused?.description.hasPrefix("\(file):2: width must be a number") == true, "\(String(describing: refused))")
    }

    @Test("a recording that cannot be read, is broken, has no device, is not selected, is no touchscreen, or a speed that is no speed")
    func replays() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (daemon, _) = try makeDaemon()
        let loop = EmbeddedEventLoop()
        func replay(_ path: String, _ configuration: Configuration = Configuration(), speed: Double = 1) -> StartupFailure? {
            failure { () throws(StartupFailure) in _ = try ReplayDriver(path: path, device: nil, configuration: configuration, speed: speed, loops: false, daemon: daemon, lock: DaemonLock(), eventLoop: loop, logger: Logger(label: "test")) }
        }
        func write(_ name: String, _ text: String) throws -> String {
            let path = directory.appendingPathComponent(name).path
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }

        let missing = directory.appendingPathComponent("missing.evemu").path
        let unreadable = replay(missing)
        guard case .recordingUnreadable(missing, "No such file or directory")? = unreadable else { Issue.record("\(String(describing: unreadable))"); return }
        #expect(unreadable?.description == "cannot read \(missing): No such file or directory")

        let garbage = try write("garbage.evemu", "garbage\n")
        let refused = replay(garbage)
        guard case .recordingRefused(garbage, let error)? = refused else { Issue.record("\(String(describing: refused))"); return }
        #expect(error.line == 1 && refused?.description == "\(garbage):1: \(error.message)")

        let eventsOnly = try write("events.evemu", "E: 0.000000 0003 0035 100\nE: 0.000000 0000 0000 0\n")
        let withoutDevice = replay(eventsOnly)
        guard case .recordingWithoutDevice(eventsOnly)? = withoutDevice else { Issue.record("\(String(describing: withoutDevice))"); return }
        #expect(withoutDevice?.description == "\(eventsOnly): \(ReplayError.noDeviceHeader)")

        let palms = try ReplayDriverTests.palmsAfterTheLastFrame(in: directory)
        let elsewhere = try Configuration.parse("[[device]]\nname = \"ELAN*\"\n", file: "x.toml")
        let notSelected = replay(palms, elsewhere)
        guard case .recordingNotSelected(name: "generated palm panel")? = notSelected else { Issue.record("\(String(describing: notSelected))"); return }
        #expect(notSelected?.description == "no [[device]] entry in the configuration selects the recorded device \"generated palm panel\"")

        var keyboard = DeviceDescription(name: "Keyboard")
        keyboard.codes[EventType.synchronization] = [0]
        keyboard.codes[EventType.key] = [30, 31]
        let keys = try write("keyboard.evemu", EvemuWriter.text(EvemuRecording(device: keyboard, events: [])))
        let notReplayable = replay(keys)
        guard case .recordingNotReplayable(.notATouchscreen("Keyboard", _))? = notReplayable else { Issue.record("\(String(describing: notReplayable))"); return }
        #expect(notReplayable?.description.hasPrefix("the recorded device \"Keyboard\" is not a touchscreen: it is ") == true, "\(String(describing: notReplayable))")

        let stopped = replay(palms, speed: 0)
        guard case .replaySpeed(0)? = stopped else { Issue.record("\(String(describing: stopped))"); return }
        #expect(stopped?.description == "--speed must be a positive number")
    }

    // MARK: The process

    @Test("the process's own causes say which thread or pipe, and why; every cause exits with 1")
    func process() {
        #expect(StartupFailure.threadNotStarted(name: "motiond input", errno: EAGAIN).description == "cannot start the motiond input thread: Resource temporarily unavailable")
        #expect(StartupFailure.wakePipe(errno: EMFILE).description == "cannot make a pipe: Too many open files")
        #expect(StartupFailure.socketNotCreated(errno: EMFILE).description == "cannot make a socket: Too many open files")
        #expect(StartupFailure.socketModeNotSet(path: "/run/m.sock", errno: EPERM).description == "cannot set the mode of /run/m.sock: Operation not permitted")
        #expect(StartupFailure.socketGroupNotSet(path: "/run/m.sock", group: "kiosk", errno: EPERM).description == "cannot give /run/m.sock to group kiosk: Operation not permitted")
        #expect(StartupFailure.webListenerForbidden(ListenAddress(host: "127.0.0.1", port: 8765)).description
                == "cannot listen on 127.0.0.1:8765 ([websocket] listen): this service may not open TCP sockets itself; enable the socket unit that passes one: systemctl enable --now motiond-web.socket (its ListenStream says where)")
        let causes: [StartupFailure] = [
            .configurationRefused(ConfigurationError(file: "m.toml", line: 1, message: "no")), .remoteWebListener(ListenAddress(host: "0.0.0.0", port: 1)),
            .notASocket(path: "p"), .socketInUse(path: "p"), .cannotListen(path: "p", errno: EACCES), .noSuchGroup("g"),
            .recordingNotSelected(name: "n"), .replaySpeed(0), .threadNotStarted(name: "t", errno: EAGAIN), .wakePipe(errno: EMFILE),
        ]
        #expect(causes.allSatisfy { $0.exitStatus == 1 })
    }
}
