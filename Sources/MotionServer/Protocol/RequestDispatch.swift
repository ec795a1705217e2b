import MotionConfiguration
import MotionCore

/// What a request did: the reply's result, and the streams whose current values follow the
/// reply (a `subscribe`'s), handed back rather than left in the daemon's state.
struct Dispatched {
    var result: JSONValue
    var values: [StreamID] = []

    init(_ result: JSONValue, values: [StreamID] = []) {
        self.result = result
        self.values = values
    }
}

/// Carrying out requests: one method per op, each given its arguments already checked
/// (``Request``). Control has been checked too, for the ops that change the scene.
extension Daemon {
    func dispatch(_ request: Request, for session: ClientSession) throws(ProtocolError) -> Dispatched {
        switch request {
        case .subscribe(let patterns): return try subscribe(session, patterns)
        default: return Dispatched(try answer(request, for: session))
        }
    }

    /// Every op's reply (``dispatch(_:for:)`` adds the values that follow a `subscribe`'s).
    private func answer(_ request: Request, for session: ClientSession) throws(ProtocolError) -> JSONValue {
        switch request {
        case .subscribe(let patterns): return try subscribe(session, patterns).result
        case .unsubscribe(let patterns): return try unsubscribe(session, patterns)
        case .list: return list()
        case .get(let stream): return try get(stream)
        case let .set(stream, value): return try set(stream, to: value)
        case .elements: return .object([("elements", .array(engine.scene.elements.map(describe)))])
        case .addElement(let input): return try addElement(input)
        case .removeElement(let id): return try removeElement(id)
        case .devices: return devices.json
        case .stats: return stats()
        case .auth(let token): return try authenticate(session, token: token)
        case .calibrate(let request): return try calibrate(request, for: session)
        case .calibration: return .object([("calibration", calibrationJSON)])
        case .reload: return try reloadOp()
        }
    }

    // MARK: Subscriptions

    private func subscribe(_ session: ClientSession, _ patterns: [String]) throws(ProtocolError) -> Dispatched {
        let added = patterns.filter { !session.patterns.contains($0) }
        guard session.patterns.count + added.count <= SubscriptionLimits.patternsPerSession else {
            throw ProtocolError("bad_request", "a client may hold at most \(SubscriptionLimits.patternsPerSession) patterns; this one holds \(session.patterns.count), and the request adds \(added.count): unsubscribe some first")
        }
        let all = allStreams
        var found: [(name: String, id: StreamID)] = []
        for pattern in patterns {
            let matches = all.filter { globMatches(Substring(pattern), Substring($0.name)) }
            guard !matches.isEmpty else { throw unknownStream(pattern) }
            found += matches
        }
        session.patterns += added
        // Each new stream's current value follows the reply.
        let new = found.filter { subscriptions.subscribe(session, to: $0.id) }.map(\.id)
        contactsSubscriptionsChanged()
        return Dispatched(.object([("streams", .array(found.map { .string($0.name) }))]), values: new)
    }

    private func unsubscribe(_ session: ClientSession, _ patterns: [String]) throws(ProtocolError) -> JSONValue {
        let all = allStreams
        var names: [String] = []
        for pattern in patterns {
            let matches = all.filter { globMatches(Substring(pattern), Substring($0.name)) }
            guard !matches.isEmpty else { throw unknownStream(pattern) }
            let mine = matches.filter { session.subscriptions[$0.id] != nil }.sorted { $0.name < $1.name }
            for stream in mine { subscriptions.unsubscribe(session, from: stream.id) }
            names += mine.map(\.name)
            session.patterns.removeAll { $0 == pattern }
        }
        contactsSubscriptionsChanged()
        return .object([("streams", .array(names.map { .string($0) }))])
    }

    // MARK: Reading and writing streams

    private func list() -> JSONValue {
        .object([("streams", .array(allStreams.map { stream in
            let kind = engine.catalog.kind(of: stream.id)
            return .object([("stream", .string(stream.name)), ("writable", .bool(engine.property(stream.id)?.write != nil)),
                            ("kind", .string(kind == .external ? "contacts" : kind == .gesture ? "gesture" : "value"))])
        }))])
    }

    private func get(_ name: String) throws(ProtocolError) -> JSONValue {
        if name == ContactsStream.name {
            // Fed while someone subscribes; otherwise nothing is known of the fingers.
            return .object([("stream", .string(name)), ("value", contacts.json), ("t", .number(clock.now)), ("seq", .integer(Int64(publisher.seq(contactsStream))))])
        }
        guard let stream = engine.catalog.id(named: name), let property = engine.property(stream) else { throw unknownStream(name) }
        return .object([("stream", .string(name)), ("value", .published(property.read())), ("t", .number(clock.now)), ("seq", .integer(Int64(publisher.seq(stream))))])
    }

    private func set(_ name: String, to input: JSONInput) throws(ProtocolError) -> JSONValue {
        guard let property = engine.property(name) else { throw unknownStream(name) }
        guard let write = property.write else { throw ProtocolError("not_writable", "\(name) cannot be set; the writable streams are in `list`") }
        guard let value = PublishedValue.from(input, like: property.read()) else {
            throw ProtocolError("bad_value", "\(name) takes \(PublishedValue.shape(of: property.read())), not \(input.kind)")
        }
        if let problem = Self.limitProblem(value, ValueLimits(screen: configuration.screen)) ?? write(value) {
            throw ProtocolError("bad_value", "\(name): \(problem)")
        }
        engine.flushIfIdle()
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
        let settings = try ElementInput.settings(from: input, limits: ValueLimits(screen: configuration.screen))
        guard engine.scene.element(settings.id) == nil, settings.id != engine.scene.container.id else {
            throw ProtocolError("exists", "an element is already called '\(settings.id)'")
        }
        // The configuration file's own checks, against the elements there are now.
        let ids = Set(engine.scene.elements.map(\.id) + [settings.id])
        if let problem = settings.referenceProblem(among: ids) { throw ProtocolError("bad_value", problem.message) }
        let element = settings.makeElement()
        let existing = Set(allStreams.map(\.id))
        engine.add(element, interactions: settings.makeInteractions(for: element, in: engine) { [engine] in engine.scene.element($0)?.position })
        interactionNames[settings.id] = settings.interactions.map(\.name)
        // Only the new element's streams can be new matches.
        let added = allStreams.filter { !existing.contains($0.id) }
        for session in sessions.values { resubscribe(session, among: added) }
        return describe(element)
    }

    private func removeElement(_ id: String) throws(ProtocolError) -> JSONValue {
        guard engine.scene.element(id) != nil, id != engine.scene.container.id else {
            throw ProtocolError("unknown_element", "no element is called '\(id)'")
        }
        engine.remove(id)
        interactionNames[id] = nil
        contactsSubscriptionsChanged()
        return .object([("id", .string(id))])
    }

    private func describe(_ element: Element) -> JSONValue {
        .object([
            ("id", .string(element.id)), ("position", .point(element.position.value)),
            ("size", .published(.size(element.size.value))), ("rotation", .number(element.rotation.value)),
            ("scale", .number(element.scale.value)), ("z", .integer(Int64(element.zOrder.value))),
            ("state", .string(element.state.value.rawValue)), ("enabled", .bool(element.enabled.value)),
            ("interactions", .array((interactionNames[element.id] ?? []).map { .string($0) })),
        ])
    }

    // MARK: The daemon

    private func stats() -> JSONValue {
        let tuioTargets: JSONValue = tuio?.json ?? .array([])
        return .object([
            ("uptime", .number(clock.now - startTime)), ("frames", .integer(Int64(frames))),
            ("frames_coalesced", .integer(Int64(coalescedFrames))),
            ("frame_rate", .number(configuration.daemon.frameRate)), ("state", .string(engine.state.value.rawValue)),
            ("config", .object([
                ("file", configuration.file.map { .string($0) } ?? .null),
                ("loaded", .number(configurationLoadedAt - startTime)),
                ("last_error", lastReloadError.map { .string($0) } ?? .null),
            ])),
            ("web", webAddress.map { .string($0) } ?? .null),
            ("devices", .integer(Int64(devices.devices.count))),
            ("dropped_events", .integer(Int64(devices.droppedEvents))),
            ("filtered", devices.filteredByDevice),
            ("tuio", tuioTargets),
            ("clients", .array(sessions.values.sorted { $0.id < $1.id }.map { session in
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
            throw ProtocolError("forbidden", "no control token is configured ([websocket] control_token_file)")
        }
        guard ControlToken.matches(token, expected) else { throw ProtocolError("forbidden", "the token is wrong") }
        session.control = true
        return .object([("control", true)])
    }

    private func unknownStream(_ name: String) -> ProtocolError {
        ProtocolError("unknown_stream", "no stream is called or matches '\(name)'; `list` shows them")
    }
}
