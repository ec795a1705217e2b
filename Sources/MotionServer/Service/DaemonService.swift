import FoundationEssentials
import Glibc
import Logging
import MotionConfiguration
import MotionCore
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import MotionTUIO
import TouchInput
import MotionDaemon

/// The running daemon: the event loop, the socket, the input, signals and systemd.
/// ``run(_:)`` returns when the daemon has stopped.
///
/// The daemon runs under one lock (``DaemonLock``): on the input thread (or the replay's)
/// for a frame, on the loop for everything else. Every way in from the loop takes it: the
/// start, the stop's parts, signals, timers, the clients' handlers, the pages.
///
/// Its parts (``DaemonPart``) start in order and stop in reverse: the scene (restored from
/// its state file), the input thread, the socket, the web listener, the replay, and the
/// loop's probe with systemd's watchdog. So a stop ends the input first, whose cancelled
/// touches reach the clients, then their goodbye, and last the scene's final write.
public final class DaemonService {
    private let options: DaemonOptions
    private let loop: EventLoop
    private let logger: Logger
    /// What the daemon runs under.
    private let lock: DaemonLock
    private let notifier: SystemdNotifier
    private let daemon: Daemon
    /// The clients' connections, on either transport, and the slow-client rule's check.
    private let connections: ClientConnections
    /// The browser pages' listener, and who it lets in (set when it starts, and by reloads).
    private var web: WebListener?
    private let webAccess = WebAccess(origins: [])
    private var input: InputThread?
    /// The parts started, to stop in reverse.
    private var parts = DaemonParts()
    /// Where the scene is kept, if it is.
    private var stateFile: StateFile?
    private var stopping = false
    private let stopped: EventLoopPromise<Void>

    /// How long a stop waits for the input thread to end.
    private static let inputJoinTimeout = 1.0

    /// Makes the daemon and its scene, restored from the state file if there is one: the
    /// first part, on the loop.
    private init(options: DaemonOptions, configuration: Configuration, loop: EventLoop, lock: DaemonLock, logger: Logger) throws(StartupFailure) {
        self.options = options
        self.loop = loop
        self.lock = lock
        self.logger = logger
        self.notifier = SystemdNotifier(loop: loop) {
            logger.warning("systemd's notify socket is full (nothing reads it): motiond goes on, and tells systemd once it reads again")
        }
        self.stopped = loop.makePromise()
        let scheduler = EventLoopFrameScheduler(eventLoop: loop, lock: lock)
        let clock = TimedFrameClock(rate: configuration.daemon.frameRate, scheduler: scheduler)
        daemon = Daemon(configuration: configuration, clock: clock, idleScheduler: scheduler, tuio: TUIOTargets(),
                        controlPolicy: ControlPolicy(configuration.daemon).allows)
        connections = ClientConnections(daemon: daemon, lock: lock, loop: loop)
        daemon.onEvent = { [unowned self] in log($0) }
        daemon.mayEnter = { [lock] in lock.isHeldByThisThread }
        connections.onLaggardsDropped = { [logger] in logger.warning("disconnected \($0) client(s) that stopped reading") }
        if let path = options.state ?? configuration.daemon.state {
            do {
                try keepScene(in: StateFile(path: path), interval: options.stateInterval ?? configuration.daemon.stateInterval, scheduler: scheduler)
            } catch {
                // Nothing started: the promise a stop would keep is kept now.
                stopped.succeed()
                throw error
            }
        }
        // The sinks once the scene is restored: TUIO's receivers get the scene as it is, and
        // the virtual touchscreens exist before the input grabs their panels.
        logNotes(daemon.configureSinks())
        daemon.reloadConfiguration = { [unowned self] in reload() }
        parts.append(DaemonPart(name: "scene") { [unowned self] in finish() })
    }

    /// Runs motiond until SIGTERM or SIGINT. Throws when it cannot start (a broken
    /// configuration, a socket in use…), saying why: a ``StartupFailure``, one case per cause.
    ///
    /// The caller has blocked the signals (``DaemonSignal/blockInThisThread()``, first thing
    /// in `main`); they are taken from the first line here, and a stop asked during
    /// start-up ends it as soon as it can: before binding if it came by then, else right
    /// after start.
    public static func run(_ options: DaemonOptions) throws(StartupFailure) {
        let relay = SignalRelay()
        let signals = try SignalThread(relay: relay)
        defer { withExtendedLifetime(signals) {} }
        LoggingSystem.bootstrap(JournalLogHandler.init)
        let logger = Logger(label: "motiond")
        let configuration = try loadConfiguration(options, logger: logger)
        if relay.stopRequested { return logger.info("stopped before starting") }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        let lock = DaemonLock()
        // The scene is made on the loop; the parts that wait to start (the input thread, the
        // listeners) are started from here, which the loop must never do; the rest starts on
        // the loop with them. Two hops onto the loop in all.
        let made = try onLoop(loop, lock) { () throws(StartupFailure) in
            Made(try DaemonService(options: options, configuration: configuration, loop: loop, lock: lock, logger: logger))
        }
        let service = made.service
        var started = DaemonParts()
        /// What started stops, in reverse, as a stop would.
        func stopStarted() { try? loop.flatSubmit { [started] in lock.withLock { service.value.stopAll(adding: started) } }.wait() }
        let done: EventLoopFuture<Void>
        do throws(StartupFailure) {
            let input = options.replay != nil ? nil : try startInput(configuration, made, lock: lock, loop: loop, logger: logger, into: &started)
            if relay.stopRequested {
                stopStarted()
                return logger.info("stopped before starting")
            }
            let listeners = try startListeners(configuration, options, made, relay: relay, loop: loop, into: &started)
            done = try onLoop(loop, lock) { [started] () throws(StartupFailure) in
                try service.value.start(configuration, started: started, input: input, listeners: listeners, relay: relay)
                return service.value.stopped.futureResult
            }
        } catch {
            stopStarted()
            throw error
        }
        // Started: the daemon runs until it stops, which fails only if the loop went first.
        do { try done.wait() } catch { throw .eventLoop(error) }
    }

    /// The input thread, unless motiond replays a recording: it runs its batches through the
    /// daemon itself, under the daemon's lock (``InputQueue``).
    private static func startInput(_ configuration: Configuration, _ made: Made, lock: DaemonLock, loop: EventLoop, logger: Logger,
                                   into started: inout DaemonParts) throws(StartupFailure) -> InputThread? {
        let target = made.input.value
        let queue = InputQueue(lock: lock, behindLoop: loop, handle: target.take)
        let input = try InputThread(configuration: configuration, virtualOutputs: made.virtualOutputs, logger: logger, queue: queue)
        started.append(DaemonPart(name: "input") {
            // The contacts it cancels on the way out have reached the clients when it returns,
            // before the parts started earlier stop (their goodbye).
            if !input.stop(timeout: inputJoinTimeout) {
                logger.warning("the input thread did not end within \(inputJoinTimeout) s; what it sends from now on is dropped")
            }
            return loop.makeSucceededVoidFuture()
        })
        return input
    }

    /// The scene made on the loop, with what the listeners started outside it need.
    private struct Made: Sendable {
        let service: NIOLoopBound<DaemonService>
        let connections: NIOLoopBound<ClientConnections>
        let webAccess: NIOLoopBound<WebAccess>
        /// Where the input thread's batches go, used only under the daemon's lock.
        let input: UncheckedSendable<InputTarget>
        /// The outputs whose virtual touchscreen was made: the input grabs their panels.
        let virtualOutputs: Set<String>

        init(_ service: DaemonService) {
            self.service = NIOLoopBound(service, eventLoop: service.loop)
            input = UncheckedSendable(InputTarget(daemon: service.daemon, log: InputLog(logger: service.logger)))
            virtualOutputs = service.daemon.virtualOutputs
            connections = NIOLoopBound(service.connections, eventLoop: service.loop)
            webAccess = NIOLoopBound(service.webAccess, eventLoop: service.loop)
        }
    }

    /// Where the listeners were bound, for the log and the live page.
    private struct Listeners: @unchecked Sendable {
        /// The socket in the log: the path motiond bound, or systemd's.
        var socket: String
        var web: (channel: Channel, settings: WebSocketSettings)?
    }

    /// The control socket, and the web listener if one is configured; each stops by closing
    /// (the socket's file removed after).
    private static func startListeners(_ configuration: Configuration, _ options: DaemonOptions, _ made: Made, relay: SignalRelay,
                                       loop: EventLoop, into started: inout DaemonParts) throws(StartupFailure) -> Listeners {
        let connections = made.connections
        let passed = SystemdActivation.inheritedSockets(ProcessInfo.processInfo.environment)
        let inherited = passed.control
        let path = options.socket ?? configuration.daemon.socket
        let server = try SocketServer.start(connections: connections, on: loop, path: path,
                                            group: inherited == nil ? configuration.daemon.socketGroup : nil, descriptor: inherited)
        if inherited == nil { relay.socketBound(path) }
        started.append(DaemonPart(name: "socket") { server.close().always { _ in relay.removeSocket() } })
        var listeners = Listeners(socket: inherited == nil ? path : "the socket systemd passed")
        if let settings = try WebListener.settings(configuration, options, passed: passed.web != nil) {
            let web = try WebServer.start(connections: connections, access: made.webAccess, on: loop, address: settings.listen, descriptor: passed.web)
            started.append(DaemonPart(name: "web listener") { web.close() })
            listeners.web = (web, settings)
        }
        return listeners
    }

    /// Runs `body` on `loop` under `lock` and waits for its result: how start-up, off the
    /// loop, reaches what lives on it. A failure of `body`'s is passed on as it is; one of the
    /// loop's is ``StartupFailure/eventLoop(_:)``.
    private static func onLoop<T: Sendable>(_ loop: EventLoop, _ lock: DaemonLock, _ body: @escaping @Sendable () throws -> T) throws(StartupFailure) -> T {
        do { return try loop.submit { try lock.withLock(body) }.wait() } catch let failure as StartupFailure { throw failure } catch { throw .eventLoop(error) }
    }

    /// The configuration to start with: the file's, or the built-in default without one.
    static func loadConfiguration(_ options: DaemonOptions, logger: Logger) throws(StartupFailure) -> Configuration {
        if let file = options.configurationFile {
            do { return try Configuration.load(file: file) } catch { throw .configurationRefused(error) }
        }
        logger.info("no \(Configuration.defaultFile): running the built-in default, one full-screen element 'surface'")
        return .builtInDefault
    }

    /// Restores the scene from its state file, before the first client and the first frame,
    /// and keeps it there from now on; says in the log what became of the file. Another
    /// motiond keeping its scene in the same file stops this one starting.
    private func keepScene(in file: StateFile, interval: Double, scheduler: FrameScheduler) throws(StartupFailure) {
        let restoration: Daemon.Restoration
        do { restoration = try daemon.keepScene(in: file, interval: interval, scheduler: scheduler, writer: ThreadedStateWriter(loop: loop, lock: lock)) } catch {
            throw .stateFileUnusable(error)
        }
        stateFile = file
        log(restoration, of: file, when: "starting")
    }

    /// Says in the log what the daemon told (``DaemonEvent``).
    private func log(_ event: DaemonEvent) {
        switch event {
        case let .valuesRepaired(element, streams):
            logger.warning("\(element) was put back to its last finite values: \(streams.joined(separator: ", ")) stopped being finite numbers")
        case .sceneNote(let note):
            logger.warning("\(note)")
        case .stateFileReread(let restoration):
            if let stateFile { log(restoration, of: stateFile, when: "after the reload") }
        case .sceneKeeping(let failure?):
            logger.error("\(failure.description): the scene is not being kept; trying again, less often while it keeps failing")
        case .sceneKeeping(nil):
            if let stateFile { logger.info("the scene is kept in \(stateFile.path) again") }
        }
    }

    /// Says in the log what became of the state file.
    private func log(_ restoration: Daemon.Restoration, of file: StateFile, when: String) {
        switch restoration {
        case .nothingSaved:
            logger.info("no scene saved in \(file.path) yet: \(when) from the configuration")
        case let .restored(elements, added, notes, cutShort):
            logger.info("restored the scene from \(file.path): \(elements) element(s), \(added) of them added by clients")
            if cutShort > 0 { logger.warning("the last write to \(file.path) was cut short (\(cutShort) bytes, ignored): the scene is as the write before left it") }
            for note in notes { logger.warning("\(note)") }
        case let .refused(error, setAside):
            if let setAside {
                logger.error("\(error.description); \(when) from the configuration, and it could not be set aside (\(setAside.description)): the scene is not kept")
            } else {
                logger.error("\(error.description); \(when) from the configuration, the file kept as \(file.refusedPath)")
            }
        case .leftAlone(let error):
            logger.error("\(error.description); \(when) from the configuration")
        }
    }

    /// The rest of the start, on the loop: the parts started outside it join the scene's,
    /// then the replay, signals (a stop that came during start-up first of all), systemd's
    /// watchdog and the loop's probe; then systemd hears that motiond is ready.
    private func start(_ configuration: Configuration, started: DaemonParts, input: InputThread?, listeners: Listeners, relay: SignalRelay) throws(StartupFailure) {
        let loop = self.loop
        // The steps that may fail (reading the recording, starting its thread) come before the
        // parts from outside join: a failed start stops those itself (``run(_:)``).
        let replay = try options.replay.map { recording throws(StartupFailure) in
            try ReplayDriver(path: recording, device: options.replayDevice, configuration: configuration, speed: options.speed, loops: options.loop,
                             daemon: daemon, lock: lock, eventLoop: loop, logger: logger)
        }
        try replay?.start()
        parts.append(contentsOf: started)
        self.input = input
        logger.info("listening on \(listeners.socket)")
        if let bound = listeners.web {
            web = WebListener(channel: bound.channel, access: webAccess, settings: bound.settings, logger: logger)
            daemon.webAddress = web.map { "\($0.address)" }
        }
        if let replay {
            parts.append(DaemonPart(name: "replay") {
                replay.stop()
                return loop.makeSucceededVoidFuture()
            })
        }
        let bound = NIOLoopBound(self, eventLoop: loop)
        relay.run { [lock] signal in loop.execute { lock.withLock { bound.value.handle(signal) } } }
        SystemdActivation.startWatchdog(notifier, on: loop, environment: ProcessInfo.processInfo.environment)
        let probe = LoopLagProbe(daemon: daemon, lock: lock, loop: loop)
        probe.start()
        parts.append(DaemonPart(name: "loop probe") {
            probe.stop()
            return loop.makeSucceededVoidFuture()
        })
        notifier.notify("READY=1\nSTATUS=\(status)")
    }

    private var status: String {
        "\(daemon.engine.scene.elements.count) elements, \(options.replay.map { "replaying \($0)" } ?? "reading touchscreens"), \(daemon.clientCount) clients"
    }

    // MARK: Input

    /// An event of the input, to the daemon and the log.
    // MARK: Signals and systemd

    private func handle(_ signal: DaemonSignal) {
        switch signal {
        case .reload: reload()
        case .stop: stop(reason: "the daemon is stopping")
        }
    }

    /// Reads the configuration again (SIGHUP, or the `reload` op): nil when it was taken,
    /// else why not, and the previous configuration stays.
    @discardableResult
    private func reload() -> String? {
        guard let file = options.configurationFile else {
            logger.info("reload: no configuration file; still running the built-in default")
            return "motiond runs the built-in default: there is no configuration file to reload"
        }
        notifier.notify("RELOADING=1")
        defer { notifier.notify("READY=1\nSTATUS=\(status)") }
        do {
            let configuration = try Configuration.load(file: file)
            logNotes(daemon.reload(configuration))
            input?.update(configuration, virtualOutputs: daemon.virtualOutputs)
            if let web { web.reload(configuration, options) } else if configuration.websocket != nil {
                logger.warning("[websocket] takes effect when motiond restarts")
            }
            logger.info("reloaded \(file): \(configuration.elements.count) elements")
            return nil
        } catch {
            daemon.reloadFailed(error.description)
            logger.error("refused to reload: \(error.description); the previous configuration stays")
            return error.description
        }
    }

    /// What the sinks said (a virtual touchscreen made or not, a final write that failed), in the log.
    private func logNotes(_ notes: [SinkNote]) {
        for note in notes {
            if note.problem { logger.error("\(note.line)") } else { logger.info("\(note.line)") }
        }
    }

    /// Stops every part, the last started first (``DaemonParts``); once, whatever asks.
    private func stop(reason: String) {
        guard !stopping else { return }
        stopping = true
        stopReason = reason
        notifier.notify("STOPPING=1")
        logger.info("stopping")
        _ = stopAll(adding: DaemonParts())
    }

    /// Stops the parts started, with `more` started outside the loop that have not joined
    /// them (a start that failed half-way); the promise ``run(_:)`` waits for is kept then.
    private func stopAll(adding more: DaemonParts) -> EventLoopFuture<Void> {
        parts.append(contentsOf: more)
        let done = parts.stopAll(on: loop, lock: lock, logger: logger)
        done.cascade(to: stopped)
        return done
    }

    /// Why clients are told goodbye when the scene stops.
    private var stopReason = "the daemon is stopping"

    /// The scene's stop, the last: what the stop left, on disk before anyone is told goodbye
    /// (a client that reconnects at once to a new motiond finds it there); the goodbye; and
    /// the springs in flight stopped, so no frame is scheduled on a loop that is going away.
    private func finish() -> EventLoopFuture<Void> {
        connections.stopChecking()
        logNotes(daemon.finish(reason: stopReason))
        daemon.engine.disconnect()
        return loop.makeSucceededVoidFuture()
    }
}
