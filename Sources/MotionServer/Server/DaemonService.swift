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

/// The running daemon: the event loop everything lives on, the socket, the input, signals
/// and systemd. ``run(_:)`` returns when the daemon has stopped.
public final class DaemonService {
    private let options: DaemonOptions
    private let loop: EventLoop
    private let logger: Logger
    /// The input's events as the log words them.
    private var inputLog: InputLog
    private let notifier = SystemdNotifier()
    private var daemon: Daemon!
    /// The clients' connections, on either transport, and the slow-client rule's check.
    private var connections: ClientConnections!
    private var server: Channel?
    /// The browser pages' listener.
    private var web: WebListener?
    private var input: InputThread?
    private var replay: ReplayDriver?
    /// How late the loop runs, for `/healthz` and the metrics.
    private var lagProbe: LoopLagProbe?
    private var relay: SignalRelay?
    private var stopping = false
    private var stopped: EventLoopPromise<Void>

    /// How long a stop waits for the input thread to end.
    private static let inputJoinTimeout = 1.0

    private init(options: DaemonOptions, loop: EventLoop, logger: Logger) {
        self.options = options
        self.loop = loop
        self.logger = logger
        self.inputLog = InputLog(logger: logger)
        self.stopped = loop.makePromise()
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
        // The daemon is made on the loop; the input thread and the socket are started from
        // here (both wait, which the loop must never do); then everything starts on the loop.
        let service = try onLoop(loop) {
            let service = DaemonService(options: options, loop: loop, logger: logger)
            do { try service.prepare(configuration) } catch {
                // Nothing started: the promise a stop would keep is kept now.
                service.stopped.succeed()
                throw error
            }
            return NIOLoopBound(service, eventLoop: loop)
        }
        var input: InputThread?
        let done: EventLoopFuture<Void>
        do throws(StartupFailure) {
            if options.replay == nil {
                let queue = InputQueue(loop: loop) { batch, coalesced in
                    let service = service.value
                    service.daemon.framesCoalesced(coalesced)
                    for event in batch { service.handle(event) }
                }
                input = try InputThread(configuration: configuration, logger: logger, queue: queue)
            }
            if relay.stopRequested {
                input?.stop(timeout: inputJoinTimeout)
                try onLoop(loop) { service.value.stopped.succeed() }
                return logger.info("stopped before starting")
            }
            let connections = try onLoop(loop) { service.value.boundConnections }
            let passed = SystemdActivation.inheritedSockets(ProcessInfo.processInfo.environment)
            let inherited = passed.control
            let path = options.socket ?? configuration.daemon.socket
            let server = try SocketServer.start(connections: connections, on: loop, path: path,
                                                group: inherited == nil ? configuration.daemon.socketGroup : nil, descriptor: inherited)
            if inherited == nil { relay.socketBound(path) }
            let listening = inherited == nil ? path : "the socket systemd passed"
            try onLoop(loop) { service.value.server = server }
            if let settings = try WebListener.settings(configuration, options, passed: passed.web != nil) {
                let access = try onLoop(loop) { NIOLoopBound(WebAccess(origins: []), eventLoop: loop) }
                let web = try WebServer.start(connections: connections, access: access, on: loop,
                                              address: settings.listen, descriptor: passed.web)
                try onLoop(loop) { service.value.webStarted(WebListener(channel: web, access: access.value, settings: settings, logger: logger)) }
            }
            done = try onLoop(loop) { [input] () throws(StartupFailure) in
                try service.value.start(configuration, server: server, listening: listening, input: input, relay: relay)
                return service.value.stopped.futureResult
            }
        } catch {
            // Nothing is running yet but what start made: undo it, and say why.
            try? loop.submit { service.value.abandon(error) }.wait()
            input?.stop(timeout: inputJoinTimeout)
            relay.removeSocket()
            throw error
        }
        // Started: the daemon runs until it stops, which fails only if the loop went first.
        do { try done.wait() } catch { throw .eventLoop(error) }
    }

    /// Runs `body` on `loop` and waits for its result: how start-up, off the loop, reaches
    /// what lives on it. A failure of `body`'s is passed on as it is; one of the loop's is
    /// ``StartupFailure/eventLoop(_:)``.
    private static func onLoop<T: Sendable>(_ loop: EventLoop, _ body: @escaping @Sendable () throws -> T) throws(StartupFailure) -> T {
        do { return try loop.submit(body).wait() } catch let failure as StartupFailure { throw failure } catch { throw .eventLoop(error) }
    }

    /// Undoes a start that failed half-way (the caller stops the input thread).
    private func abandon(_ error: Error) {
        replay?.stop()
        lagProbe?.stop()
        server?.close(promise: nil)
        web?.channel.close(promise: nil)
        stopped.fail(error)
    }

    /// The listener is bound: the daemon says where the live page is.
    private func webStarted(_ listener: WebListener) {
        web = listener
        daemon.webAddress = "\(listener.address)"
    }

    /// The configuration to start with: the file's, or the built-in default without one.
    static func loadConfiguration(_ options: DaemonOptions, logger: Logger) throws(StartupFailure) -> Configuration {
        if let file = options.configurationFile {
            do { return try Configuration.load(file: file) } catch { throw .configurationRefused(error) }
        }
        logger.info("no \(DaemonOptions.defaultConfigFile): running the built-in default, one full-screen element 'surface'")
        return .builtInDefault
    }

    private func prepare(_ configuration: Configuration) throws(StartupFailure) {
        let scheduler = EventLoopFrameScheduler(eventLoop: loop)
        let clock = TimedFrameClock(rate: configuration.daemon.frameRate, scheduler: scheduler)
        daemon = Daemon(configuration: configuration, clock: clock, idleScheduler: scheduler, output: TUIOTargets(),
                        controlPolicy: ControlPolicy(configuration.daemon).allows)
        daemon.onWarning = { [logger] in logger.warning("\($0)") }
        daemon.reloadConfiguration = { [unowned self] in reload() }
        connections = ClientConnections(daemon: daemon, loop: loop)
        connections.onLaggardsDropped = { [logger] in logger.warning("disconnected \($0) client(s) that stopped reading") }
        if let path = options.state ?? configuration.daemon.state {
            try keepScene(in: StateFile(path: path), interval: options.stateInterval ?? configuration.daemon.stateInterval, scheduler: scheduler)
        }
    }

    /// Restores the scene from its state file, before the first client and the first frame,
    /// and keeps it there from now on; says in the log what became of the file. Another
    /// motiond keeping its scene in the same file stops this one starting.
    private func keepScene(in file: StateFile, interval: Double, scheduler: FrameScheduler) throws(StartupFailure) {
        let restoration: Daemon.Restoration
        do { restoration = try daemon.keepScene(in: file, interval: interval, scheduler: scheduler, writer: ThreadedStateWriter(loop: loop)) } catch {
            throw .stateFileUnusable(error)
        }
        log(restoration, of: file, when: "starting")
        daemon.onStateFile = { [unowned self] in log($0, of: file, when: "after the reload") }
        daemon.keeper?.onFailureChanged = { [logger, file] failure in
            if let failure {
                logger.error("\(failure.description): the scene is not being kept; trying again, less often while it keeps failing")
            } else {
                logger.info("the scene is kept in \(file.path) again")
            }
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

    /// The connections, for the listeners started from outside the loop.
    private var boundConnections: NIOLoopBound<ClientConnections> { NIOLoopBound(connections, eventLoop: loop) }

    /// `listening` names the socket in the log: a path motiond bound, or systemd's.
    private func start(_ configuration: Configuration, server: Channel, listening: String, input: InputThread?, relay: SignalRelay) throws(StartupFailure) {
        let environment = ProcessInfo.processInfo.environment
        self.input = input
        self.relay = relay
        logger.info("listening on \(listening)")

        if let recording = options.replay {
            replay = try ReplayDriver(path: recording, device: options.replayDevice, configuration: configuration, speed: options.speed, loops: options.loop,
                                      daemon: daemon, eventLoop: loop, logger: logger)
            replay?.start()
        }
        // Signals that came during start-up are handled now, a stop first of all.
        let bound = NIOLoopBound(self, eventLoop: loop)
        let loop = self.loop
        relay.run { signal in loop.execute { bound.value.handle(signal) } }
        SystemdActivation.startWatchdog(notifier, on: loop, environment: environment)
        lagProbe = LoopLagProbe(daemon: daemon, loop: loop)
        lagProbe?.start()
        notifier.notify("READY=1\nSTATUS=\(status)")
    }

    private var status: String {
        "\(daemon.engine.scene.elements.count) elements, \(options.replay.map { "replaying \($0)" } ?? "reading touchscreens"), \(daemon.clientCount) clients"
    }

    // MARK: Input

    /// An event of the input, to the daemon and the log.
    private func handle(_ event: TouchInputEvent) {
        daemon.input(event)
        inputLog.write(event)
    }

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
            daemon.reload(configuration)
            input?.update(configuration)
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

    /// Stops in two steps. First the input: the thread ends (waited for, with a bound),
    /// and the contacts it cancels on the way out are queued on the loop, ahead of the second
    /// step, so clients see their touches cancelled before the goodbye. Then the clients,
    /// the scene and the socket.
    private func stop(reason: String) {
        guard !stopping else { return }
        stopping = true
        notifier.notify("STOPPING=1")
        logger.info("stopping")
        replay?.stop()
        lagProbe?.stop()
        connections.stopChecking()
        if let input, !input.stop(timeout: Self.inputJoinTimeout) {
            logger.warning("the input thread did not end within \(Self.inputJoinTimeout) s; what it sends from now on is dropped")
        }
        let bound = NIOLoopBound(self, eventLoop: loop)
        loop.execute { bound.value.finishStopping(reason: reason) }
    }

    private func finishStopping(reason: String) {
        // The scene as the stop left it, on disk before anyone is told goodbye: a client that
        // reconnects at once to a new motiond finds it there.
        if let failure = daemon.keepSceneFinally() { logger.error("\(failure.description): the scene of this stop is not kept") }
        daemon.closeAll(reason: reason)
        // Springs in flight stop, so no frame is scheduled on a loop that is going away.
        daemon.engine.disconnect()
        let promise = stopped
        let relay = self.relay
        web?.channel.close(promise: nil)
        guard let server else { return promise.succeed() }
        server.close().whenComplete { _ in
            relay?.removeSocket()
            promise.succeed()
        }
    }
}
