import MotionConfiguration
import MotionCore
import MotionWire

/// What a request did: the reply's result, or that the daemon itself is to carry it out and
/// answer (``Request/isTheDaemons``), and the streams whose current values follow the reply
/// (a `subscribe`'s), handed back rather than left in the daemon's state.
struct Dispatched {
    var outcome: Outcome
    var values: [StreamID] = []

    /// The reply's result, or the request for the daemon.
    enum Outcome {
        case result(JSONValue)
        case daemon(Request)
    }

    init(_ result: JSONValue, values: [StreamID] = []) {
        self.outcome = .result(result)
        self.values = values
    }

    init(daemon request: Request) {
        self.outcome = .daemon(request)
    }
}

/// Carries out requests: one method per op, each given its arguments already checked
/// (``Request``). Control has been checked too, for the ops that change the scene.
///
/// It holds the parts of the daemon the ops read and change, each with one job: the scene,
/// the clients and their subscriptions, the touchscreens, and the daemon's counters.
final class RequestDispatcher {
    private let scene: DaemonScene
    private let clients: ClientHub
    private let touchscreens: TouchscreenState
    private let status: DaemonStatus
    private let clock: FrameClock
    /// TUIO's receivers and what they were sent, for `stats`.
    private let tuio: TUIOReceivers?
    private let virtualTouchscreens: VirtualTouchscreens

    init(scene: DaemonScene, clients: ClientHub, touchscreens: TouchscreenState, status: DaemonStatus, clock: FrameClock, tuio: TUIOReceivers?,
         virtualTouchscreens: VirtualTouchscreens) {
        self.virtualTouchscreens = virtualTouchscreens
        self.scene = scene
        self.clients = clients
        self.touchscreens = touchscreens
        self.status = status
        self.clock = clock
        self.tuio = tuio
    }

    private var engine: MotionEngine { scene.engine }
    private var configuration: Configuration { scene.configuration }

    /// What `request` from `session` does: the reply's result, or the daemon's part, and the
    /// streams whose values follow it.
    func dispatch(_ request: Request, for session: ClientSession) throws(ProtocolError) -> Dispatched {
        if request.isTheDaemons { return Dispatched(daemon: request) }
        if case .subscribe(let patterns, let optional) = request { return try subscribe(session, patterns, optional: optional) }
        return Dispatched(try answer(request, for: session))
    }

    /// The reply of every op the dispatcher answers itself.
    private func answer(_ request: Request, for session: ClientSession) throws(ProtocolError) -> JSONValue {
        switch request {
        case .subscribe, .reload, .resetScene, .health, .metrics, .savedScene, .lock, .unlock:
            preconditionFailure("\(request) is answered by dispatch(_:for:)")
        case .unsubscribe(let patterns): return try unsubscribe(session, patterns)
        case .list(let patterns): return try list(patterns)
        case .get(let stream): return try get(stream)
        case let .set(stream, value): return try set(stream, to: value)
        case .elements: return .object([("elements", .array(engine.scene.elements.map(scene.describe)))])
        case .addElement(let input): return try addElement(input)
        case .removeElement(let id): return try removeElement(id)
        case .devices:
            guard case .object(let members) = touchscreens.devices.json(configuration: configuration) else { return .null }
            return .object(members + [("virtual_touchscreens", virtualTouchscreens.json)])
        case .stats: return stats()
        case .auth(let token): return try authenticate(session, token: token)
        case .calibrate(let request): return try touchscreens.calibrate(request, for: session, configuration: configuration)
        case .calibration: return .object([("calibration", touchscreens.calibrationJSON)])
        }
    }

    // MARK: Subscriptions

    /// With `optional`, a pattern that matches nothing now is held all the same (listed under
    /// `waiting`): like every held pattern, it is matched again when streams appear.
    private func subscribe(_ session: ClientSession, _ patterns: [String], optional: Bool) throws(ProtocolError) -> Dispatched {
        let added = patterns.filter { !session.patterns.contains($0) }
        guard session.patterns.count + added.count <= SubscriptionLimits.patternsPerSession else {
            throw ProtocolError(.badRequest, "a client may hold at most \(SubscriptionLimits.patternsPerSession) patterns; this one holds \(session.patterns.count), and the request adds \(added.count): unsubscribe some first")
        }
        let all = scene.allStreams
        var found: [(name: String, id: StreamID)] = []
        var waiting: [String] = []
        for pattern in patterns {
            let matches = all.filter { globMatches(Substring(pattern), Substring($0.name)) }
            if matches.isEmpty {
                guard optional else { throw unknownStream(pattern) }
                waiting.append(pattern)
            }
            found += matches
        }
        session.patterns += added
        // Each new stream's current value follows the reply.
        let new = found.filter { clients.subscriptions.subscribe(session, to: $0.id) }.map(\.id)
        clients.contactsSubscriptionsChanged()
        var result: [(String, JSONValue)] = [("streams", .array(found.map { .string($0.name) }))]
        if optional { result.append(("waiting", .array(waiting.map { .string($0) }))) }
        return Dispatched(.object(result), values: new)
    }

    private func unsubscribe(_ session: ClientSession, _ patterns: [String]) throws(ProtocolError) -> JSONValue {
        let all = scene.allStreams
        var names: [String] = []
        for pattern in patterns {
            let matches = all.filter { globMatches(Substring(pattern), Substring($0.name)) }
            // A held pattern that matches nothing (an optional subscription still waiting)
            // is let go as any other.
            guard !matches.isEmpty || session.patterns.contains(pattern) else { throw unknownStream(pattern) }
            let mine = matches.filter { session.subscriptions[$0.id] != nil }.sorted { $0.name < $1.name }
            for stream in mine { clients.subscriptions.unsubscribe(session, from: stream.id) }
            names += mine.map(\.name)
            session.patterns.removeAll { $0 == pattern }
        }
        clients.contactsSubscriptionsChanged()
        return .object([("streams", .array(names.map { .string($0) }))])
    }

    // MARK: Reading and writing streams

    /// Every stream, or, with `patterns`, those matching any of them: a scene too large for
    /// the hello to name every stream is learnt this way, a part at a time. Each stream
    /// comes once, in the scene's order, as in the hello; a pattern matching nothing is an
    /// error, as in `subscribe`.
    private func list(_ patterns: [String]?) throws(ProtocolError) -> JSONValue {
        var streams = scene.allStreams
        if let patterns {
            for pattern in patterns where !streams.contains(where: { globMatches(Substring(pattern), Substring($0.name)) }) {
                throw unknownStream(pattern)
            }
            streams.removeAll { stream in !patterns.contains { globMatches(Substring($0), Substring(stream.name)) } }
        }
        return .object([("streams", .array(streams.map { stream in
            let kind = engine.catalog.kind(of: stream.id)
            return .object([("stream", .string(stream.name)), ("writable", .bool(engine.property(stream.id)?.write != nil)),
                            ("kind", .string(kind == .contacts ? "contacts" : kind == .gesture ? "gesture" : "value"))])
        }))])
    }

    private func get(_ name: String) throws(ProtocolError) -> JSONValue {
        // The fingers are followed while someone subscribes; otherwise they are `[]`.
        guard let stream = engine.catalog.id(named: name), let value = engine.currentValue(stream) else { throw unknownStream(name) }
        return .object([("stream", .string(name)), ("value", .published(value)), ("t", .number(clock.now)), ("seq", .integer(Int64(clients.publisher.seq(stream))))])
    }

    private func set(_ name: String, to input: JSONInput) throws(ProtocolError) -> JSONValue {
        guard let property = engine.property(name) else { throw unknownStream(name) }
        guard let write = property.write else { throw ProtocolError(.notWritable, "\(name) cannot be set; the writable streams are in `list`") }
        guard let value = PublishedValue.from(input, like: property.read()) else {
            throw ProtocolError(.badValue, "\(name) takes \(PublishedValue.shape(of: property.read())), not \(input.kind)")
        }
        if let problem = Self.limitProblem(value, configuration.valueLimits) ?? write(value) {
            throw ProtocolError(.badValue, "\(name): \(problem)")
        }
        return .object([("stream", .string(name)), ("value", .published(property.read()))])
    }

    /// Why a position or size from a client is out of range; spring constants are checked
    /// by the spring itself, numbers by their property's range.
    static func limitProblem(_ value: PublishedValue, _ limits: ValueLimits) -> String? {
        switch value {
        case .point(let point): return limits.problem(position: point)
        case .size(let size): return limits.problem(size: size)
        default: return nil
        }
    }

    // MARK: Elements

    private func addElement(_ input: JSONInput) throws(ProtocolError) -> JSONValue {
        let object = JSONValue(input)
        let settings = try ElementInput.settings(from: object, limits: configuration.valueLimits)
        let element = try scene.add(settings, object: object)
        // Only the new element's streams can be new matches.
        let added = scene.streams(of: element)
        for session in clients.sessions.values { clients.resubscribe(session, among: added) }
        return scene.describe(element)
    }

    private func removeElement(_ id: String) throws(ProtocolError) -> JSONValue {
        try scene.remove(id)
        clients.contactsSubscriptionsChanged()
        return .object([("id", .string(id))])
    }

    // MARK: The daemon

    private func stats() -> JSONValue {
        let devices = touchscreens.devices
        return .object([
            ("uptime", .number(clock.now - status.startTime)), ("frames", .integer(Int64(status.frames))),
            ("frames_coalesced", .integer(Int64(status.coalescedFrames))),
            ("frame_rate", .number(configuration.daemon.frameRate)), ("state", .string(engine.state.value.rawValue)),
            ("config", .object([
                ("file", configuration.file.map { .string($0) } ?? .null),
                ("loaded", .number(status.configurationLoadedAt - status.startTime)),
                ("last_error", status.lastReloadError.map { .string($0) } ?? .null),
            ])),
            ("web", status.webAddress.map { .string($0) } ?? .null),
            ("devices", .integer(Int64(devices.devices.count))),
            ("dropped_events", .integer(Int64(devices.droppedEvents))),
            ("filtered", devices.filteredByDevice),
            ("geometry", devices.geometryByDevice),
            ("tuio", tuio?.json ?? .array([])),
            ("virtual_touchscreens", virtualTouchscreens.json),
            ("clients", .array(clients.sessions.values.sorted { $0.id < $1.id }.map { session in
                .object([
                    ("client", .integer(Int64(session.id))),
                    ("uid", session.credentials.map { .integer(Int64($0.uid)) } ?? .null),
                    ("control", .bool(session.control)),
                    ("subscriptions", .integer(Int64(session.subscriptions.count))),
                    ("sent", .integer(Int64(session.sent))),
                    ("coalesced", .integer(Int64(session.output.coalesced))),
                ])
            })),
        ])
    }

    /// Gives `session` control if `token` is the configured control token. Over TCP there
    /// are no peer credentials, so this is how a browser page earns control.
    private func authenticate(_ session: ClientSession, token: String) throws(ProtocolError) -> JSONValue {
        guard let expected = configuration.websocket?.controlToken else {
            throw ProtocolError(.forbidden, "no control token is configured ([websocket] control_token_file)")
        }
        guard ControlToken.matches(token, expected) else { throw ProtocolError(.forbidden, "the token is wrong") }
        session.control = true
        return .object([("control", true)])
    }

    private func unknownStream(_ name: String) -> ProtocolError {
        ProtocolError(.unknownStream, "no stream is called or matches '\(name)'; `list` shows them")
    }
}
