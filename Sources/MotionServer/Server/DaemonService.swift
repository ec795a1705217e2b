import Dispatch
import Foundation
import Glibc
import Logging
import MotionCore
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import TouchInput

/// How motiond was asked to run.
public struct DaemonOptions: Sendable {
    /// The configuration file; nil means the default path if it exists, else the built-in.
    public var configFile: String?
    /// Overrides `[daemon] socket`.
    public var socket: String?
    /// A recording to replay as the touchscreen.
    public var replay: String?
    public var loop = false
    public var speed = 1.0

    public init() {}

    /// Where motiond looks when not given `--config`.
    public static let defaultConfigFile = "/etc/motiond/motiond.toml"
}

/// The running daemon: the event loop everything lives on, the socket, the input, signals
/// and systemd. ``run(_:)`` returns when the daemon has stopped.
public final class DaemonService {
    private let options: DaemonOptions
    private let loop: EventLoop
    private let logger: Logger
    private let notifier = SystemdNotifier()
    private var daemon: Daemon!
    private var server: Channel?
    private var socketPath: String?
    private let outputs = ClientOutputs()
    private var input: InputThread?
    private var replay: ReplayDriver?
    private var signalSources: [DispatchSourceSignal] = []
    private var stopped: EventLoopPromise<Void>
    private var laggardCheck: Scheduled<Void>?

    private init(options: DaemonOptions, loop: EventLoop, logger: Logger) {
        self.options = options
        self.loop = loop
        self.logger = logger
        self.stopped = loop.makePromise()
    }

    /// Runs motiond until SIGTERM or SIGINT. Throws when it cannot start (a broken
    /// configuration, a socket in use), saying why.
    public static func run(_ options: DaemonOptions) throws {
        LoggingSystem.bootstrap(JournalLogHandler.init)
        let logger = Logger(label: "motiond")
        Signals.prepare()
        let configuration = try loadConfiguration(options, logger: logger)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        // The daemon is made on the loop; the socket is bound from here (binding waits,
        // which the loop must never do); then everything starts on the loop.
        let service = try loop.submit {
            let service = DaemonService(options: options, loop: loop, logger: logger)
            service.prepare(configuration)
            return NIOLoopBound(service, eventLoop: loop)
        }.wait()
        let done: EventLoopFuture<Void>
        do {
            let parts = try loop.submit { service.value.socketParts }.wait()
            let inherited = Self.inheritedSocket(ProcessInfo.processInfo.environment)
            let path = options.socket ?? configuration.daemon.socket
            let server = try SocketServer.start(daemon: parts.daemon, outputs: parts.outputs, on: loop, path: path,
                                                group: inherited == nil ? configuration.daemon.socketGroup : nil, descriptor: inherited)
            done = try loop.submit {
                try service.value.start(configuration, server: server, socketPath: inherited == nil ? path : nil)
                return service.value.stopped.futureResult
            }.wait()
        } catch {
            // Nothing is running yet but what start made: undo it, and say why.
            try? loop.submit { service.value.abandon(error) }.wait()
            throw error
        }
        try done.wait()
    }

    /// Undoes a start that failed half-way.
    private func abandon(_ error: Error) {
        input?.stop()
        replay?.stop()
        server?.close(promise: nil)
        if let socketPath { unlink(socketPath) }
        stopped.fail(error)
    }

    private static func loadConfiguration(_ options: DaemonOptions, logger: Logger) throws -> Configuration {
        if let file = options.configFile { return try Configuration.load(file: file) }
        if FileManager.default.fileExists(atPath: DaemonOptions.defaultConfigFile) {
            return try Configuration.load(file: DaemonOptions.defaultConfigFile)
        }
        logger.info("no \(DaemonOptions.defaultConfigFile): running the built-in default, one full-screen element 'surface'")
        return .builtInDefault
    }

    private func prepare(_ configuration: Configuration) {
        let clock = TimedFrameClock(rate: configuration.daemon.frameRate, scheduler: EventLoopFrameScheduler(eventLoop: loop))
        daemon = Daemon(configuration: configuration, clock: clock, controlPolicy: ControlPolicy(configuration.daemon).allows)
    }

    private var socketParts: (daemon: NIOLoopBound<Daemon>, outputs: NIOLoopBound<ClientOutputs>) {
        (NIOLoopBound(daemon, eventLoop: loop), NIOLoopBound(outputs, eventLoop: loop))
    }

    private func start(_ configuration: Configuration, server: Channel, socketPath: String?) throws {
        let environment = ProcessInfo.processInfo.environment
        self.server = server
        self.socketPath = socketPath
        outputs.onBlocked = { [unowned self] in self.scheduleLaggardCheck() }
        logger.info("listening on \(socketPath ?? "the socket systemd passed")")

        if let recording = options.replay {
            replay = try ReplayDriver(path: recording, configuration: configuration, speed: options.speed, loops: options.loop,
                                      daemon: daemon, eventLoop: loop, logger: logger)
            replay?.start()
        } else {
            let bound = NIOLoopBound(self, eventLoop: loop)
            let loop = self.loop
            input = try InputThread(configuration: configuration, logger: logger) { message in
                loop.execute { bound.value.handle(message) }
            }
        }
        installSignals()
        startWatchdog(environment)
        notifier.notify("READY=1\nSTATUS=\(status)")
    }

    private var status: String {
        "\(daemon.engine.scene.elements.count) elements, \(options.replay.map { "replaying \($0)" } ?? "reading touchscreens"), \(daemon.clientCount) clients"
    }

    // MARK: Input

    private func handle(_ message: InputMessage) {
        switch message {
        case let .frame(frame, device): daemon.process(frame, device: device)
        case let .added(node, description):
            daemon.deviceAdded(node: node, description: description)
            logger.info("using \(node) (\(description.name))")
        case let .removed(node):
            daemon.deviceRemoved(node: node)
            logger.warning("\(node) went away; its touches were cancelled")
        case let .skipped(node, reason):
            daemon.deviceSkipped(node: node, reason: reason)
            logger.info("not using \(node): \(reason)")
        case .skippedRemoved(let node): daemon.skippedDeviceRemoved(node: node)
        case let .dropped(node, total):
            daemon.eventsDropped(node: node, total: total)
            logger.warning("the kernel dropped events from \(node) (\(total) times); resynced")
        case let .failed(reason): logger.error("touch input stopped: \(reason)")
        }
    }

    // MARK: Signals and systemd

    private func installSignals() {
        let bound = NIOLoopBound(self, eventLoop: loop)
        let loop = self.loop
        for (signal, action) in [(SIGHUP, "reload"), (SIGTERM, "stop"), (SIGINT, "stop")] {
            let source = DispatchSource.makeSignalSource(signal: signal, queue: .global())
            source.setEventHandler {
                loop.execute { action == "reload" ? bound.value.reload() : bound.value.stop(reason: "the daemon is stopping") }
            }
            source.resume()
            signalSources.append(source)
        }
    }

    private func reload() {
        let file = options.configFile ?? (FileManager.default.fileExists(atPath: DaemonOptions.defaultConfigFile) ? DaemonOptions.defaultConfigFile : nil)
        guard let file else {
            logger.info("SIGHUP: no configuration file; still running the built-in default")
            return
        }
        notifier.notify("RELOADING=1")
        do {
            let configuration = try Configuration.load(file: file)
            daemon.reload(configuration)
            input?.update(configuration)
            logger.info("reloaded \(file): \(configuration.elements.count) elements")
        } catch {
            daemon.reloadFailed(error.description)
            logger.error("refused to reload: \(error.description); the previous configuration stays")
        }
        notifier.notify("READY=1\nSTATUS=\(status)")
    }

    private func stop(reason: String) {
        notifier.notify("STOPPING=1")
        logger.info("stopping")
        daemon.closeAll(reason: reason)
        input?.stop()
        replay?.stop()
        laggardCheck?.cancel()
        signalSources.forEach { $0.cancel() }
        let promise = stopped
        let path = socketPath
        if let server {
            server.close().whenComplete { _ in
                if let path { unlink(path) }
                promise.succeed()
            }
        } else {
            promise.succeed()
        }
    }

    private func startWatchdog(_ environment: [String: String]) {
        guard notifier.isActive, let text = environment["WATCHDOG_USEC"], let microseconds = Int64(text), microseconds > 0 else { return }
        let notifier = self.notifier
        // Half the period, from the event loop itself: a stuck loop stops the pings.
        loop.scheduleRepeatedTask(initialDelay: .zero, delay: .microseconds(microseconds / 2)) { _ in
            notifier.notify("WATCHDOG=1")
        }
    }

    private func scheduleLaggardCheck() {
        guard laggardCheck == nil else { return }
        let bound = NIOLoopBound(self, eventLoop: loop)
        laggardCheck = loop.scheduleTask(in: .milliseconds(5100)) {
            let service = bound.value
            service.laggardCheck = nil
            let dropped = service.outputs.dropLaggards(olderThan: 5, orLargerThan: 4 << 20, allocator: ByteBufferAllocator())
            if dropped > 0 { service.logger.warning("disconnected \(dropped) client(s) that stopped reading") }
            if service.outputs.anyBlocked { service.scheduleLaggardCheck() }
        }
    }

    /// A listening socket systemd passed (`LISTEN_FDS`, for this process), if any.
    private static func inheritedSocket(_ environment: [String: String]) -> Int32? {
        guard let pid = environment["LISTEN_PID"].flatMap(Int32.init), pid == getpid(),
              let count = environment["LISTEN_FDS"].flatMap(Int.init), count >= 1 else { return nil }
        return 3  // SD_LISTEN_FDS_START
    }
}

/// Which peers may use the control operations.
struct ControlPolicy {
    let daemonUID = getuid()
    let groups: Set<gid_t>

    init(_ settings: DaemonSettings) {
        groups = Set(settings.controlGroups.compactMap { getgrnam($0)?.pointee.gr_gid })
    }

    func allows(_ peer: PeerCredentials?) -> Bool {
        guard let peer else { return false }
        if peer.uid == 0 || peer.uid == daemonUID { return true }
        if groups.contains(peer.gid) { return true }
        guard !groups.isEmpty, let user = getpwuid(peer.uid) else { return false }
        var count: Int32 = 64
        var list = [gid_t](repeating: 0, count: Int(count))
        guard getgrouplist(user.pointee.pw_name, peer.gid, &list, &count) >= 0 else { return false }
        return list.prefix(Int(count)).contains { groups.contains($0) }
    }
}

/// Signal dispositions: handled through dispatch sources, so the default actions are off,
/// and unblocked, since a parent (a test runner) may have blocked them.
enum Signals {
    static func prepare() {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in [SIGHUP, SIGTERM, SIGINT] {
            sigaddset(&set, signal)
            Glibc.signal(signal, SIG_IGN)
        }
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }
}
