import MotionConfiguration
import MotionCore
import TouchInput
import MotionWire

/// The daemon's heart: the engine running the configured scene, and the clients it serves
/// (docs/protocol.md). Everything runs on one event loop; nothing here is thread-safe.
///
/// Every frame takes one way, in ``process(_:from:)`` and ``publish(_:input:)``:
/// calibration (a touchscreen being calibrated keeps its touches) → the engine, which
/// returns the frame's ``FrameReport`` → each of the daemon's ``ReportSink``s in turn: TUIO's
/// receivers, the clients (each in one write), the state file. Frames the engine makes
/// without input (springs moving, its timer, what a request changed) join that way at the
/// engine's report.
///
/// Besides, the daemon replaces the scene on reload and lets clients come and go; each part
/// of its state is a type with one job, which it shares with the ``RequestDispatcher`` that
/// answers the clients:
/// - ``DaemonScene``: the engine, the configuration in force, the elements' interactions;
/// - ``ClientHub``: the sessions, their subscriptions (``SubscriptionIndex``), the
///   ``Publisher`` that numbers, encodes and fans out values, `screen.contacts`, and every
///   line but the replies (``ProtocolLine`` builds those);
/// - ``TouchscreenState``: the touchscreens used and skipped, and the one being calibrated;
/// - ``DaemonStatus``: the daemon's counts, kept once, which `stats` shows and the metrics read;
/// - ``DaemonMetrics``: the Prometheus metrics (`GET /metrics`), and ``HealthReport`` its
///   verdict (`GET /healthz`, DaemonHealth.swift).
/// ``Request`` reads a line into a typed request; ``EngineTimer`` wakes the engine (attract
/// mode, a long press held still, predictions lapsing); TUIO goes out through a
/// ``TUIOReceivers`` the daemon is given.
public final class Daemon {
    /// The engine running the configured scene.
    public var engine: MotionEngine { scene.engine }
    /// The configuration in force.
    public var configuration: Configuration { scene.configuration }
    /// Hears what the daemon has to tell its operator (``DaemonEvent``).
    public var onEvent: (DaemonEvent) -> Void = { _ in }
    /// Whether the caller may touch the daemon now. Whoever runs it on more than one thread
    /// says (motiond: whether this thread holds the daemon's lock); debug builds check it at
    /// the ways in (input, a report, a client, a line), so that one that forgot fails its
    /// tests instead of racing in a kiosk.
    public var mayEnter: () -> Bool = { true }
    let clock: FrameClock
    let scene: DaemonScene
    let clients: ClientHub
    let touchscreens: TouchscreenState
    let status: DaemonStatus
    let metrics = DaemonMetrics(version: MotiondVersion.string)
    private let dispatcher: RequestDispatcher
    private let controlPolicy: (PeerCredentials?) -> Bool
    /// Where the scene goes besides the clients (TUIO's receivers), if anywhere.
    var tuio: TUIOReceivers? { tuioSink?.receivers }
    private let tuioSink: TUIOSink?
    /// The virtual touchscreens the apps read (``VirtualTouchscreens``).
    let virtualTouchscreens: VirtualTouchscreens
    /// What takes each report, in order (``ReportSink``): the virtual touchscreens, TUIO, the
    /// clients, the state file.
    var sinks: [ReportSink] = []
    /// Whether ``configureSinks()`` was called: the daemon started. Until then a reload
    /// leaves the sinks alone (a test's daemon, a fuzzer's, that never starts them).
    private var sinksConfigured = false

    /// The touchscreen being calibrated (for tests).
    var calibration: CalibrationCapture? { touchscreens.calibration }
    /// Streams the publisher numbers (for tests).
    var countedStreams: Int { clients.countedStreams }
    /// Reloads the configuration as SIGHUP does (the `reload` op): nil when it was taken,
    /// else why not. Set by whoever reads configuration files; without it, `reload` is refused.
    public var reloadConfiguration: (() -> String?)?
    /// Where the web listener serves the live page (`127.0.0.1:8765`), for `stats`; nil without one.
    public var webAddress: String? {
        get { status.webAddress }
        set { status.webAddress = newValue }
    }

    /// The engine's timer; nil without a scheduler: then only frames and commands move time.
    private var timer: EngineTimer?
    /// Keeps the scene in its state file across restarts; nil keeps nothing
    /// (``keepScene(in:interval:scheduler:writer:)``).
    var keeper: SceneKeeper?
    /// Keeps a second motiond off the state file while this one keeps its scene there.
    var stateLock: StateFileLock?
    /// Creates a daemon for `configuration`, its springs on `clock`. `controlPolicy` says
    /// which peers may change things; `idleScheduler`, on the clock's time, wakes the engine
    /// when it has something due without a frame (``MotionEngine/nextDeadline``); `tuio`
    /// (TUIO's receivers) gets the scene each frame besides the clients.
    public init(configuration: Configuration, clock: FrameClock, idleScheduler: FrameScheduler? = nil, tuio: TUIOReceivers? = nil,
                uinputPath: String = "/dev/uinput", controlPolicy: @escaping (PeerCredentials?) -> Bool) {
        self.clock = clock
        self.controlPolicy = controlPolicy
        self.scene = DaemonScene(configuration, clock: clock)
        self.clients = ClientHub(scene: scene, clock: clock)
        self.touchscreens = TouchscreenState(clients: clients)
        self.status = DaemonStatus(now: clock.now)
        self.virtualTouchscreens = VirtualTouchscreens(uinputPath: uinputPath, metrics: metrics)
        virtualTouchscreens.scheduler = idleScheduler
        self.dispatcher = RequestDispatcher(scene: scene, clients: clients, touchscreens: touchscreens, status: status, clock: clock, tuio: tuio, virtualTouchscreens: virtualTouchscreens)
        let tuioSink = tuio.map { [scene] in TUIOSink($0, scene: scene) }
        self.tuioSink = tuioSink
        sinks = [virtualTouchscreens, tuioSink as ReportSink?, ClientsSink(clients: clients, status: status, metrics: metrics, clock: clock)].compactMap { $0 }
        self.timer = idleScheduler.map { EngineTimer($0) { [unowned self] in tick(at: $0) } }
        clock.frameRunner = { [weak self] time in self?.runClockFrame(at: time) }
        scheduleTimer()
    }

    /// The scene's springs hold themselves through the clock: without this, a daemon that
    /// goes away (in a test, a fuzzer, an embedding program) would leave its scene running.
    deinit {
        clock.frameRunner = nil
        timer?.cancel()
        engine.disconnect()
    }

    /// Sets the timer to the engine's next deadline. Called after anything that may
    /// move it (a frame, a command, a reload).
    func scheduleTimer() {
        timer?.follow(engine)
    }

    // MARK: Input

    /// Processes a frame from `device`: the pipeline every frame takes, calibration →
    /// engine → TUIO → clients. `readAt` is when the input thread read it (``TouchInputEvent``).
    public func process(_ frame: TouchFrame, from device: DeviceIdentity, readAt: Double? = nil) {
        assert(mayEnter(), "the daemon was reached without its lock")
        clock.catchUp(to: frame.time)
        let now = clock.now
        status.frame(of: device, touches: frame.contacts.count { $0.phase == .began }, at: now)
        var frame = frame
        if touchscreens.capturesTouches(of: device.node) {
            touchscreens.takeCalibrationTouches(&frame, node: device.node)
            if frame.contacts.isEmpty { return }
        }
        publish(engine.process(frame, device: device.number, deviceName: device.node), input: FrameOrigin(device: device, time: frame.time, readAt: readAt))
        scheduleTimer()
    }

    /// Does what the engine has due by `time` (its timer fired) and publishes it.
    func tick(at time: Double) {
        publish(engine.tick(at: time))
        scheduleTimer()
    }

    /// Runs the clock's frame (springs moving) and publishes what it changed: the clock's
    /// ``FrameClock/frameRunner``.
    private func runClockFrame(at time: Double) {
        publish(engine.runClockFrame(at: time))
    }

    /// Locks touches out for `seconds` (`lock`): the gestures in progress end, every sink
    /// drops the fingers down (``FrameReport/lockedFingers``: the apps see them cancelled),
    /// and until the lock ends by itself (or `unlock`) no touch reaches the scene, the
    /// clients, TUIO or the apps. `screen.locked` says so.
    func lock(for seconds: Double) -> JSONValue {
        let now = clock.now
        publish(engine.lock(at: now, until: now + seconds))
        return lockJSON
    }

    /// Ends a lock (`unlock`).
    func unlock() -> JSONValue {
        publish(engine.unlock(at: clock.now))
        return lockJSON
    }

    private var lockJSON: JSONValue {
        .object([("locked", .bool(engine.isLocked)), ("until", engine.lockedUntil.map { .number($0) } ?? .null)])
    }

    /// Publishes what changed outside a frame (a command), at once.
    func publishPending() {
        publish(engine.tick(at: clock.now))
    }

    /// A frame's report to every sink, in order; `input` is the frame it is of, if any. Then
    /// back to the engine, whose next report reuses its storage (``MotionEngine/takeBack(_:)``).
    private func publish(_ report: consuming FrameReport, input: FrameOrigin? = nil) {
        assert(mayEnter(), "the daemon was reached without its lock")
        for repair in report.repairs {
            onEvent(.valuesRepaired(element: repair.element, streams: repair.streams))
        }
        for sink in sinks { sink.take(report, input: input) }
        engine.takeBack(&report)
    }

    /// Counts frames the input left out because newer ones of the same device were already
    /// waiting (``FrameCoalescing``), for `stats`.
    public func framesCoalesced(_ count: Int) {
        status.coalescedFrames += count
    }

    // MARK: Configuration

    /// Replaces the configuration (SIGHUP): a new scene, the same clients, whose
    /// subscriptions are matched again against the new streams.
    /// The old engine is taken apart (``MotionEngine/disconnect()``): its springs stop, so
    /// nothing of the old scene stays in memory or keeps the clock running.
    ///
    /// When the daemon keeps its scene (``keepScene(in:interval:scheduler:writer:)``), the
    /// scene carries over as it would across a restart: the elements clients added, and where
    /// every element is. Then only what the new configuration changes is made anew, unless it
    /// changes the screen, `[gestures]`, prediction or the screen gestures: the other elements
    /// stay as they are (``DaemonScene/reloadKeepingScene(_:)``).
    ///
    /// When the state file was left alone (it could not be read, or was not a state file),
    /// a reload reads it again: if it now reads, the scene is the new configuration's with
    /// the file's put back, as at a start, and it is kept from then on.
    ///
    /// Returns what the sinks, configured anew, say for the log (a virtual touchscreen made
    /// anew, or not made).
    @discardableResult
    public func reload(_ configuration: Configuration) -> [SinkNote] {
        let notes: [SinkNote]
        if keeper?.leftAlone != nil {
            let reading = readStateFile()
            let readable = (try? reading.get()) != nil
            notes = replaceScene(with: configuration, carryingOver: !readable)
            onEvent(.stateFileReread(takeUpStateFile(reading)))
        } else {
            notes = replaceScene(with: configuration, carryingOver: keeper != nil)
        }
        status.configurationLoadedAt = clock.now
        status.reloaded(refusedFor: nil)
        return notes
    }

    /// Makes the scene anew from the configuration in force, without what clients added or
    /// moved (`reset_scene`), and writes that to the state file at once. Returns how many
    /// elements the scene now has.
    func resetScene() -> Int {
        for note in replaceScene(with: configuration, carryingOver: false) where note.problem { onEvent(.sceneNote(note.line)) }
        keeper?.writeSoon()
        return engine.scene.elements.count
    }

    /// A new scene from `configuration`; the gestures in progress end under the old one.
    /// Carrying the scene over, a reload that leaves the screen, `[gestures]`, prediction and
    /// the screen gestures as they were keeps the elements it does not change as they are
    /// (``DaemonScene/reloadKeepingScene(_:)``).
    func replaceScene(with configuration: Configuration, carryingOver: Bool) -> [SinkNote] {
        if carryingOver, let reload = scene.reloadKeepingScene(configuration) {
            return remakeChangedElements(reload)
        }
        let carried = carryingOver ? scene.savedState().state : nil
        let (endings, oldCatalog) = scene.replace(with: configuration)
        publish(endings)
        if let carried { for note in scene.restore(carried) { onEvent(.sceneNote(note)) } }
        clients.sceneReplaced(oldCatalog: oldCatalog)
        defer { scheduleTimer() }
        return sinksConfigured ? configureSinks() : []
    }

    /// A reload that keeps the scene, making anew only the elements it changes: their
    /// gestures, like every other, end `cancelled`; their streams go, and the new ones' values
    /// follow, as for `remove_element` and `add_element`; the streams it keeps are not sent again.
    private func remakeChangedElements(_ reload: DaemonScene.Reload) -> [SinkNote] {
        scene.takeApart(for: reload)
        // The endings and the streams that went reach the clients before the new elements'
        // streams take their numbers.
        publishPending()
        let (notes, streams) = scene.complete(reload)
        for note in notes { onEvent(.sceneNote(note)) }
        if !streams.isEmpty {
            for session in clients.sessions.values { clients.resubscribe(session, among: streams) }
        }
        if reload.changesElements { keeper?.sceneChanged() }
        defer { scheduleTimer() }
        return sinksConfigured ? configureSinks() : []
    }

    /// Configures every sink (``ReportSink``) for the configuration in force and the scene
    /// as it is: at start, by whoever starts the daemon, once the scene is restored; from
    /// then on the daemon does it itself whenever the scene is made anew (a reload,
    /// `reset_scene`). Among them the virtual touchscreens are made, kept or removed; the
    /// input grabs the panels of ``virtualOutputs``. What the sinks say for the log.
    @discardableResult
    public func configureSinks() -> [SinkNote] {
        sinksConfigured = true
        let elements = engine.scene.elements, time = clock.now
        return sinks.flatMap { $0.configure(configuration, elements: elements, time: time) }
    }

    /// The outputs whose virtual touchscreen exists.
    public var virtualOutputs: Set<String> { virtualTouchscreens.available }

    /// Records a refused reload, for `stats`.
    public func reloadFailed(_ reason: String) {
        status.reloaded(refusedFor: reason)
    }

    // MARK: Clients

    /// A client connected: it gets the hello.
    public func connect(_ output: ClientOutput, credentials: PeerCredentials?) -> ClientSession {
        assert(mayEnter(), "the daemon was reached without its lock")
        let session = clients.open(credentials: credentials, control: controlPolicy(credentials), output: output)
        status.connections[output.transport, default: 0] += 1
        clients.send(ProtocolLine.hello(streams: scene.firstStreams(ProtocolLine.helloStreams), count: scene.streamCount, control: session.control), to: session)
        session.output.flush()
        return session
    }

    /// A client went.
    public func disconnect(_ session: ClientSession) {
        assert(mayEnter(), "the daemon was reached without its lock")
        if touchscreens.calibration?.sessionID == session.id { touchscreens.endCalibration() }
        if session.output.wasDropped { status.dropped[session.output.transport, default: 0] += 1 }
        status.coalescedByClosedClients += session.output.coalesced
        clients.close(session)
    }

    /// The connected clients.
    public var clientCount: Int { clients.sessions.count }

    /// The connected clients' outputs: the server holds them to the slow-client rule.
    package var clientOutputs: some Sequence<ClientOutput> { clients.sessions.values.lazy.map(\.output) }

    /// The daemon stops: every sink finished, the last first (``ReportSink``): the scene
    /// written to its state file, every client told goodbye (`reason`) and closed, TUIO's
    /// receivers told nothing is alive, the virtual touchscreens removed. What the sinks say
    /// for the log (a final write that failed).
    @discardableResult
    public func finish(reason: String) -> [SinkNote] {
        defer { stateLock = nil }
        return sinks.reversed().flatMap { $0.finish(reason: reason) }
    }

    /// Handles one line from a client: exactly one reply.
    public func receive(_ line: Substring, from session: ClientSession) {
        receive(utf8: line.utf8, from: session)
    }

    /// Handles one line as the bytes that came, so that bytes that are not UTF-8 get a
    /// `bad_json` reply instead of being replaced.
    public func receive(utf8 line: some Collection<UInt8>, from session: ClientSession) {
        assert(mayEnter(), "the daemon was reached without its lock")
        let decoded = Request.decode(line)
        let outcome = Result { () throws(ProtocolError) -> (result: JSONValue, values: [StreamID]) in
            if let operation = decoded.operation, operation.needsControl { try requireControl(session, operation) }
            let dispatched = try dispatcher.dispatch(decoded.request.get(), for: session)
            switch dispatched.outcome {
            case .result(let result): return (result, dispatched.values)
            case .daemon(let request): return (try carryOut(request), dispatched.values)
            }
        }
        // What the command changed goes to every subscriber before the reply, as it happened.
        publishPending()
        if case .success = outcome, decoded.operation?.changesScene == true { keeper?.sceneChanged() }
        reply(to: session, id: decoded.id, outcome.map(\.result))
        if case .success(let dispatched) = outcome, !dispatched.values.isEmpty { clients.sendValues(dispatched.values, to: session) }
        session.output.flush()
        scheduleTimer()
    }

    /// Does what an op asks of the daemon itself (``Request/isTheDaemons``), and answers it.
    private func carryOut(_ request: Request) throws(ProtocolError) -> JSONValue {
        switch request {
        case .reload:
            guard let reloadConfiguration else { throw ProtocolError(.reloadFailed, "this daemon reads no configuration file to reload") }
            if let problem = reloadConfiguration() { throw ProtocolError(.reloadFailed, problem) }
            return .object([("file", configuration.file.map { .string($0) } ?? .null), ("elements", .integer(Int64(engine.scene.elements.count)))])
        case .resetScene: return .object([("elements", .integer(Int64(resetScene())))])
        case .health: return health().json
        case .metrics: return .object([("text", .string(String(decoding: metricsExposition(), as: UTF8.self)))])
        case .savedScene: return savedSceneJSON
        case .lock(let seconds): return lock(for: seconds)
        case .unlock: return unlock()
        default: preconditionFailure("\(request) is answered by the dispatcher")
        }
    }

    private func reply(to session: ClientSession, id: Int?, _ result: Result<JSONValue, ProtocolError>) {
        clients.send(ProtocolLine.reply(id: id, result), to: session)
    }

    /// Answers something that is not a request at all (a binary WebSocket message) with an
    /// error, as a line that is not JSON would be; the connection stays usable.
    public func refuse(_ error: ProtocolError, to session: ClientSession) {
        reply(to: session, id: nil, .failure(error))
        session.output.flush()
    }

    private func requireControl(_ session: ClientSession, _ operation: Operation) throws(ProtocolError) {
        guard session.control else {
            throw ProtocolError(.forbidden, "\(operation.rawValue) \([.reload, .calibrate, .lock, .unlock].contains(operation) ? "changes the daemon" : "changes the scene"): only root, motiond's user, members of [daemon] control_groups and clients that sent the control token (auth) may use it")
        }
    }
}
