import Foundation
import MotionCore
import NIOCore
import TOMLKit
import TouchInput

/// The daemon's heart: the engine, the clients, and the protocol between them
/// (docs/protocol.md). Everything runs on one event loop; nothing here is thread-safe.
public final class Daemon {
    /// The engine running the configured scene.
    public private(set) var engine: MotionEngine
    /// The configuration in force.
    public private(set) var configuration: Configuration
    private let clock: FrameClock
    private let startTime: Double
    private var configurationLoadedAt: Double
    private var lastReloadError: String?
    private var sessions: [Int: ClientSession] = [:]
    private var nextSessionID = 1
    private var sequence: [String: Int] = [:]
    private var interactionNames: [String: [String]] = [:]
    private var devices: [(node: String, description: DeviceDescription, dropped: Int, grabbed: Bool)] = []
    private var skippedDevices: [(node: String, reason: String)] = []
    private var frames = 0
    private let allocator = ByteBufferAllocator()
    private let controlPolicy: (PeerCredentials?) -> Bool

    /// Creates a daemon for `configuration`, its springs on `clock`. `controlPolicy` says
    /// which peers may change things.
    public init(configuration: Configuration, clock: FrameClock, controlPolicy: @escaping (PeerCredentials?) -> Bool) {
        self.configuration = configuration
        self.clock = clock
        self.controlPolicy = controlPolicy
        self.startTime = clock.now
        self.configurationLoadedAt = clock.now
        self.engine = configuration.makeEngine(clock: clock)
        wire()
    }

    /// The scene's springs hold themselves through the clock: without this, a daemon that
    /// goes away (in a test, a fuzzer, an embedding program) would leave its scene running.
    deinit {
        engine.disconnect()
    }

    private func wire() {
        engine.onUpdates = { [unowned self] in self.publish($0) }
        engine.onGesture = { [unowned self] in self.gesture($1, on: $0) }
        interactionNames = Dictionary(uniqueKeysWithValues: configuration.elements.map { ($0.id, $0.interactions.map(\.name)) })
        // A new scene (a reload): the streams that went lose their counts.
        forgetRemovedStreams()
    }

    // MARK: Input

    /// Processes a frame from the device numbered `device`, whose node is `node`.
    public func process(_ frame: TouchFrame, device: Int, node: String = "") {
        frames += 1
        engine.process(frame, device: device)
        if contactsWanted, contacts.update(with: frame, device: device, node: node) { publishContacts(time: frame.time) }
    }

    // MARK: Contacts

    /// `screen.contacts`, fed only while ``contactsWanted``.
    private var contacts = ContactsStream()
    /// Whether any client subscribes to `screen.contacts`; updated when subscriptions change.
    private var contactsWanted = false

    private func refreshContactsWanted() {
        let wanted = sessions.values.contains { $0.streams.contains(ContactsStream.name) }
        if !wanted { contacts.reset() }
        contactsWanted = wanted
    }

    /// After a request: subscribe and unsubscribe are what change who wants the contacts.
    private func refreshContactsWantedIfChanged(_ session: ClientSession) {
        if session.streams.contains(ContactsStream.name) != contactsWanted || contactsWanted { refreshContactsWanted() }
    }

    private func publishContacts(time: Double) {
        let name = ContactsStream.name
        let seq = (sequence[name] ?? 0) + 1
        sequence[name] = seq
        let line = encode(.object([("event", "value"), ("stream", .string(name)), ("value", contacts.json), ("t", .number(time)), ("seq", .integer(Int64(seq)))]))
        for session in sessions.values where session.streams.contains(name) {
            session.output.send(line, coalescing: name)
            session.sent += 1
            session.output.flush()
        }
    }

    /// A touchscreen came; every client hears of it.
    public func deviceAdded(node: String, description: DeviceDescription, grabbed: Bool = false) {
        devices.removeAll { $0.node == node }
        skippedDevices.removeAll { $0.node == node }
        devices.append((node, description, 0, grabbed))
        broadcast(.object([("event", "device"), ("action", "added"), ("node", .string(node)), ("name", .string(description.name))]))
    }

    /// A touchscreen went.
    public func deviceRemoved(node: String) {
        devices.removeAll { $0.node == node }
        broadcast(.object([("event", "device"), ("action", "removed"), ("node", .string(node))]))
    }

    /// A touchscreen was found but is not read (not selected, not openable, or described in
    /// a way motiond cannot trust): `devices` lists it with the reason until it is used or
    /// goes away, so that a kiosk's operator sees why without reading the log.
    public func deviceSkipped(node: String, reason: String) {
        skippedDevices.removeAll { $0.node == node }
        skippedDevices.append((node, reason))
    }

    /// A touchscreen that was skipped went away.
    public func skippedDeviceRemoved(node: String) {
        skippedDevices.removeAll { $0.node == node }
    }

    /// The kernel dropped a device's events; `total` so far.
    public func eventsDropped(node: String, total: Int) {
        if let index = devices.firstIndex(where: { $0.node == node }) { devices[index].dropped = total }
    }

    /// Replaces the configuration (SIGHUP): a new scene, the same clients, whose
    /// subscriptions are matched again against the new streams.
    /// The old engine is taken apart (``MotionEngine/disconnect()``): its springs stop, so
    /// nothing of the old scene stays in memory or keeps the clock running.
    public func reload(_ configuration: Configuration) {
        engine.disconnect()
        self.configuration = configuration
        engine = configuration.makeEngine(clock: clock)
        wire()
        configurationLoadedAt = clock.now
        lastReloadError = nil
        for session in sessions.values {
            session.streams = []
            resubscribe(session)
        }
        refreshContactsWanted()
    }

    /// Records a refused reload, for `stats`.
    public func reloadFailed(_ reason: String) {
        lastReloadError = reason
    }

    // MARK: Clients

    /// A client connected: it gets the hello.
    public func connect(_ output: ClientOutput, credentials: PeerCredentials?) -> ClientSession {
        let session = ClientSession(id: nextSessionID, credentials: credentials, control: controlPolicy(credentials), output: output)
        nextSessionID += 1
        sessions[session.id] = session
        send(.object([
            ("event", "hello"), ("protocol", 1), ("version", .string(MotiondVersion.string)),
            ("streams", .array(streamNames.map { .string($0) })), ("control", .bool(session.control)),
        ]), to: session)
        session.output.flush()
        return session
    }

    /// A client went.
    public func disconnect(_ session: ClientSession) {
        sessions[session.id] = nil
        if session.streams.contains(ContactsStream.name) { refreshContactsWanted() }
    }

    /// The connected clients.
    public var clientCount: Int { sessions.count }

    /// Says goodbye to every client and closes their connections.
    public func closeAll(reason: String) {
        let bye = encode(.object([("event", "bye"), ("reason", .string(reason))]))
        for session in sessions.values { session.output.close(saying: bye) }
        sessions = [:]
        refreshContactsWanted()
    }

    /// Handles one line from a client: exactly one reply.
    public func receive(_ line: Substring, from session: ClientSession) {
        receive(utf8: line.utf8, from: session)
    }

    /// Handles one line as the bytes that came, so that bytes that are not UTF-8 get a
    /// `bad_json` reply instead of being replaced.
    public func receive(utf8 line: some Collection<UInt8>, from session: ClientSession) {
        reply(to: session, handle(line, from: session))
        refreshContactsWantedIfChanged(session)
        if let subscribed = initialValues.removeValue(forKey: session.id) { sendValues(subscribed, to: session) }
        session.output.flush()
    }

    private func reply(to session: ClientSession, _ reply: (id: Int?, result: Result<JSONValue, ProtocolError>)) {
        let id: JSONValue = reply.id.map { .integer(Int64($0)) } ?? .null
        switch reply.result {
        case .success(let result):
            send(.object([("id", id), ("ok", true), ("result", result)]), to: session)
        case .failure(let error):
            send(.object([("id", id), ("ok", false), ("error", .object([("code", .string(error.code)), ("message", .string(error.message))]))]), to: session)
        }
    }

    private func handle(_ line: some Collection<UInt8>, from session: ClientSession) -> (id: Int?, result: Result<JSONValue, ProtocolError>) {
        let request: JSONInput
        do { request = try JSONInput(parsing: line) } catch {
            return (nil, .failure(ProtocolError("bad_json", error.description)))
        }
        guard case .object = request else { return (nil, .failure(ProtocolError("bad_json", "a request is a JSON object, not \(request.kind)"))) }
        guard let idValue = request["id"] else { return (nil, .failure(ProtocolError("bad_request", "a request needs an \"id\": an integer the reply will carry"))) }
        guard let id = idValue.integer else { return (nil, .failure(ProtocolError("bad_request", "\"id\" must be an integer, not \(idValue.kind)"))) }
        guard let op = request["op"]?.string else {
            return (id, .failure(ProtocolError("bad_request", "a request needs an \"op\" string: \(Self.operations.joined(separator: ", "))")))
        }
        do {
            return (id, .success(try perform(op, request, for: session)))
        } catch {
            return (id, .failure(error))
        }
    }

    static let operations = ["subscribe", "unsubscribe", "list", "get", "set", "elements", "add_element", "remove_element", "devices", "stats", "auth"]

    private func perform(_ op: String, _ request: JSONInput, for session: ClientSession) throws(ProtocolError) -> JSONValue {
        switch op {
        case "subscribe": return try subscribe(session, patterns(request))
        case "unsubscribe": return try unsubscribe(session, patterns(request))
        case "list":
            return .object([("streams", .array(streamNames.map { name in
                .object([("stream", .string(name)), ("writable", .bool(engine.property(name)?.write != nil)),
                         ("kind", .string(name == ContactsStream.name ? "contacts" : engine.property(name) == nil ? "gesture" : "value"))])
            }))])
        case "get":
            let name = try string(request, "stream")
            if name == ContactsStream.name {
                // Fed while someone subscribes; otherwise nothing is known of the fingers.
                return .object([("stream", .string(name)), ("value", contacts.json), ("t", .number(clock.now)), ("seq", .integer(Int64(sequence[name] ?? 0)))])
            }
            guard let property = engine.property(name) else { throw unknownStream(name) }
            return .object([("stream", .string(name)), ("value", .published(property.read())), ("t", .number(clock.now)), ("seq", .integer(Int64(sequence[name] ?? 0)))])
        case "set": return try set(request, by: session)
        case "elements": return .object([("elements", .array(engine.scene.elements.map(describe)))])
        case "add_element": return try addElement(request, by: session)
        case "remove_element":
            try requireControl(session, op)
            let id = try string(request, "element")
            guard engine.scene.element(id) != nil, id != engine.scene.container.id else {
                throw ProtocolError("unknown_element", "no element is called '\(id)'")
            }
            engine.remove(id)
            interactionNames[id] = nil
            forgetRemovedStreams()
            return .object([("id", .string(id))])
        case "devices":
            return .object([("devices", .array(devices.map { device in
                var json = JSONValue.device(device.description, node: device.node)
                if case .object(var members) = json {
                    members.append(("dropped", .integer(Int64(device.dropped))))
                    members.append(("grabbed", .bool(device.grabbed)))
                    json = .object(members)
                }
                return json
            })), ("skipped", .array(skippedDevices.map { .object([("node", .string($0.node)), ("reason", .string($0.reason))]) }))])
        case "stats": return stats()
        case "auth": return try authenticate(session, token: string(request, "token"))
        default:
            throw ProtocolError("unknown_op", "no op is called '\(op)'; the ops are \(Self.operations.joined(separator: ", "))")
        }
    }

    // MARK: Operations

    /// Every stream: the engine's values, and each element's gesture streams.
    private var streamNames: [String] {
        var names = engine.streams.map(\.stream) + [ContactsStream.name]
        for element in [engine.scene.container] + engine.scene.elements {
            for kind in GestureKind.allCases where element.recognizers.contains(kind) {
                names.append("\(element.id).\(kind.rawValue)")
            }
        }
        return names
    }

    /// The request's `streams`, within ``SubscriptionLimits``, checked before any matching.
    private func patterns(_ request: JSONInput) throws(ProtocolError) -> [String] {
        guard let list = request["streams"]?.array, !list.isEmpty else {
            throw ProtocolError("bad_request", "\"streams\" must be a non-empty array of stream names or globs, like [\"card.*\"]")
        }
        guard list.count <= SubscriptionLimits.patternsPerRequest else {
            throw ProtocolError("bad_request", "\"streams\" holds \(list.count) patterns; a request may hold at most \(SubscriptionLimits.patternsPerRequest)")
        }
        var patterns: [String] = []
        for item in list {
            guard let pattern = item.string else { throw ProtocolError("bad_request", "\"streams\" holds strings, not \(item.kind)") }
            guard pattern.utf8.count <= SubscriptionLimits.patternLength else {
                throw ProtocolError("bad_request", "a pattern is \(pattern.utf8.count) bytes long; at most \(SubscriptionLimits.patternLength) are allowed")
            }
            if !patterns.contains(pattern) { patterns.append(pattern) }
        }
        return patterns
    }

    private func matching(_ pattern: String, in names: [String]) -> [String] {
        names.filter { globMatches(Substring(pattern), Substring($0)) }
    }

    private func subscribe(_ session: ClientSession, _ patterns: [String]) throws(ProtocolError) -> JSONValue {
        let added = patterns.filter { !session.patterns.contains($0) }
        guard session.patterns.count + added.count <= SubscriptionLimits.patternsPerSession else {
            throw ProtocolError("bad_request", "a client may hold at most \(SubscriptionLimits.patternsPerSession) patterns; this one holds \(session.patterns.count), and the request adds \(added.count): unsubscribe some first")
        }
        let all = streamNames
        var names: [String] = []
        for pattern in patterns {
            let found = matching(pattern, in: all)
            guard !found.isEmpty else { throw unknownStream(pattern) }
            names += found
        }
        session.patterns += added
        let new = names.filter { session.streams.insert($0).inserted }
        // Each new stream's current value follows the reply (see `receive`).
        initialValues[session.id, default: []] += new
        return .object([("streams", .array(names.map { .string($0) }))])
    }

    /// Streams just subscribed to, whose current values go out after the reply.
    private var initialValues: [Int: [String]] = [:]

    private func unsubscribe(_ session: ClientSession, _ patterns: [String]) throws(ProtocolError) -> JSONValue {
        let all = streamNames
        var names: [String] = []
        for pattern in patterns {
            let found = session.streams.filter { globMatches(Substring(pattern), Substring($0)) }.sorted()
            guard !found.isEmpty || !matching(pattern, in: all).isEmpty else { throw unknownStream(pattern) }
            names += found
            session.streams.subtract(found)
            session.patterns.removeAll { $0 == pattern }
        }
        return .object([("streams", .array(names.map { .string($0) }))])
    }

    /// Subscribes `session` to the streams among `candidates` (by default every stream)
    /// that its patterns match, sending their values.
    private func resubscribe(_ session: ClientSession, among candidates: [String]? = nil) {
        let names = candidates ?? streamNames
        let new = session.patterns.flatMap { matching($0, in: names) }.filter { session.streams.insert($0).inserted }
        sendValues(new, to: session)
        session.output.flush()
    }

    /// Forgets what belongs to streams that no longer exist: their `seq` counts, and the
    /// subscriptions to them. Run after elements go (remove_element, a reload), so that
    /// adding and removing elements for ever does not grow these tables.
    private func forgetRemovedStreams() {
        let current = Set(streamNames)
        sequence = sequence.filter { current.contains($0.key) }
        for session in sessions.values { session.streams.formIntersection(current) }
    }

    /// How many streams have a `seq` count (for tests: it must not outgrow the streams).
    var countedStreams: Int { sequence.count }

    private func sendValues(_ names: [String], to session: ClientSession) {
        for name in names {
            if name == ContactsStream.name {
                send(.object([("event", "value"), ("stream", .string(name)), ("value", contacts.json), ("t", .number(clock.now)), ("seq", .integer(Int64(sequence[name] ?? 0)))]), to: session)
                continue
            }
            guard let property = engine.property(name) else { continue }
            send(valueEvent(name, property.read(), time: clock.now, seq: sequence[name] ?? 0), to: session)
        }
    }

    private func set(_ request: JSONInput, by session: ClientSession) throws(ProtocolError) -> JSONValue {
        try requireControl(session, "set")
        let name = try string(request, "stream")
        guard let property = engine.property(name) else { throw unknownStream(name) }
        guard let write = property.write else { throw ProtocolError("not_writable", "\(name) cannot be set; the writable streams are in `list`") }
        guard let input = request["value"] else { throw ProtocolError("bad_request", "set needs a \"value\"") }
        guard let value = Self.published(input, like: property.read()) else {
            throw ProtocolError("bad_value", "\(name) takes \(Self.shape(of: property.read())), not \(input.kind)")
        }
        if let problem = write(value) { throw ProtocolError("bad_value", "\(name): \(problem)") }
        engine.flushIfIdle()
        return .object([("stream", .string(name)), ("value", .published(property.read()))])
    }

    /// Gives `session` control if `token` is the configured control token. Over TCP there
    /// are no peer credentials, so this is how a browser page earns control.
    private func authenticate(_ session: ClientSession, token: String) throws(ProtocolError) -> JSONValue {
        guard let expected = configuration.websocket?.controlToken else {
            throw ProtocolError("forbidden", "no control token is configured ([websocket] control_token_file)")
        }
        guard Self.sameToken(token, expected) else { throw ProtocolError("forbidden", "the token is wrong") }
        session.control = true
        return .object([("control", true)])
    }

    /// Compares in time that depends only on the lengths, so that how long a wrong guess
    /// takes says nothing about how much of it was right.
    static func sameToken(_ given: String, _ expected: String) -> Bool {
        let a = Array(given.utf8), b = Array(expected.utf8)
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count) | (a.count == b.count ? 0 : 1)
        for index in 0..<b.count { difference |= (index < a.count ? a[index] : 0) ^ b[index] }
        return difference == 0
    }

    /// Answers something that is not a request at all (a binary WebSocket message) with an
    /// error, as a line that is not JSON would be; the connection stays usable.
    public func refuse(_ error: ProtocolError, to session: ClientSession) {
        reply(to: session, (nil, .failure(error)))
        session.output.flush()
    }

    private func addElement(_ request: JSONInput, by session: ClientSession) throws(ProtocolError) -> JSONValue {
        try requireControl(session, "add_element")
        guard let input = request["element"], case .object = input else {
            throw ProtocolError("bad_request", "add_element needs an \"element\" object: {\"id\", \"center\", \"size\", \"interactions\"?}")
        }
        // The interactions may come as a table of their own, {"interactions": {"tossable": {…}}},
        // or beside the other keys, as in the configuration file.
        var members = input.object ?? [:]
        if let interactions = members.removeValue(forKey: "interactions") {
            guard let table = interactions.object else { throw ProtocolError("bad_value", "\"interactions\" is an object, like {\"tossable\": {\"destination\": [300, 200]}}") }
            for (name, settings) in table {
                guard members[name] == nil else { throw ProtocolError("bad_value", "\(name) is given twice") }
                members[name] = settings
            }
        }
        let table: TOMLTable
        do { table = try Self.toml(.object(members)) } catch { throw ProtocolError("bad_value", error.message) }
        let settings: ElementSettings
        do { settings = try ElementSettings.read(table, source: "element") } catch {
            throw ProtocolError("bad_value", error.message)
        }
        guard engine.scene.element(settings.id) == nil else { throw ProtocolError("exists", "an element is already called '\(settings.id)'") }
        for case .element(let other)? in settings.interactions.map(Self.destination) where engine.scene.element(other) == nil {
            throw ProtocolError("bad_value", "no element is called '\(other)'")
        }
        let element = settings.makeElement()
        let existing = Set(streamNames)
        engine.add(element, interactions: settings.makeInteractions(for: element, in: engine) { [engine] in engine.scene.element($0)?.position })
        interactionNames[settings.id] = settings.interactions.map(\.name)
        // Only the new element's streams can be new matches.
        let added = streamNames.filter { !existing.contains($0) }
        for session in sessions.values { resubscribe(session, among: added) }
        return describe(element)
    }

    private static func destination(_ interaction: InteractionSettings) -> DestinationSettings? {
        switch interaction {
        case .tossable(let destination, _, _): return destination
        case .attach(let destination, _): return destination
        default: return nil
        }
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

    private func stats() -> JSONValue {
        .object([
            ("uptime", .number(clock.now - startTime)), ("frames", .integer(Int64(frames))),
            ("frame_rate", .number(configuration.daemon.frameRate)), ("state", .string(engine.state.value.rawValue)),
            ("config", .object([
                ("file", configuration.file.map { .string($0) } ?? .null),
                ("loaded", .number(configurationLoadedAt - startTime)),
                ("last_error", lastReloadError.map { .string($0) } ?? .null),
            ])),
            ("devices", .integer(Int64(devices.count))),
            ("dropped_events", .integer(Int64(devices.reduce(0) { $0 + $1.dropped }))),
            ("clients", .array(sessions.values.sorted { $0.id < $1.id }.map { session in
                .object([
                    ("client", .integer(Int64(session.id))),
                    ("uid", session.credentials.map { .integer(Int64($0.uid)) } ?? .null),
                    ("control", .bool(session.control)),
                    ("subscriptions", .integer(Int64(session.streams.count))),
                    ("sent", .integer(Int64(session.sent))),
                    ("coalesced", .integer(Int64(session.output.coalesced))),
                ])
            })),
        ])
    }

    // MARK: Publishing

    private func publish(_ updates: [PublishedUpdate]) {
        var seqs: [Int] = []
        seqs.reserveCapacity(updates.count)
        for update in updates {
            let seq = (sequence[update.stream] ?? 0) + 1
            sequence[update.stream] = seq
            seqs.append(seq)
        }
        // One pass over the clients (there may be thousands); each update encoded once, when
        // its first subscriber is found, and written to every subscriber.
        var lines = [ByteBuffer?](repeating: nil, count: updates.count)
        func line(_ index: Int) -> ByteBuffer {
            if let line = lines[index] { return line }
            let update = updates[index]
            let line = encode(valueEvent(update.stream, update.value, time: update.time, seq: seqs[index]))
            lines[index] = line
            return line
        }
        // A client that keeps up gets its lines of the frame as one write, in a buffer shared
        // by every client wanting the same updates (a thousand "*" subscribers share one): the
        // per-write cost is paid once per client, not once per line. The updates a client wants
        // are a bit mask, so frames of up to 64 updates batch; larger ones go line by line.
        var frames: [UInt64: ByteBuffer] = [:]
        let batching = updates.count <= 64
        for session in sessions.values where !session.streams.isEmpty {
            if batching && session.output.isKeepingUp {
                var wanted: UInt64 = 0
                for (index, update) in updates.enumerated() where session.streams.contains(update.stream) { wanted |= 1 << index }
                guard wanted != 0 else { continue }
                if frames[wanted] == nil {
                    var frame = allocator.buffer(capacity: 256 * wanted.nonzeroBitCount)
                    var rest = wanted
                    while rest != 0 {
                        var next = line(rest.trailingZeroBitCount)
                        frame.writeBuffer(&next)
                        rest &= rest - 1
                    }
                    frames[wanted] = frame
                }
                session.output.send(frames[wanted]!, coalescing: nil)
                session.sent += wanted.nonzeroBitCount
                session.output.flush()
            } else {
                var touched = false
                for (index, update) in updates.enumerated() where session.streams.contains(update.stream) {
                    session.output.send(line(index), coalescing: update.stream)
                    session.sent += 1
                    touched = true
                }
                if touched { session.output.flush() }
            }
        }
    }

    private func gesture(_ gesture: RecognizedGesture, on element: String) {
        let stream = "\(element).\(gesture.kind.rawValue)"
        guard [.began, .ended, .cancelled, .recognized].contains(gesture.state) else { return }
        let subscribers = sessions.values.filter { $0.streams.contains(stream) }
        guard !subscribers.isEmpty, case .object(var members) = JSONValue.gesture(gesture) else { return }
        // {"event": "state", "stream", "state", "t", "touches", …the gesture's values}
        members.removeAll { $0.0 == "gesture" || $0.0 == "t" || $0.0 == "state" }
        if gesture.state != .ended { members.removeAll { $0.0 == "velocity" } }
        let line = encode(.object([("event", "state"), ("stream", .string(stream)), ("state", .string(gesture.state.rawValue)), ("t", .number(gesture.time))] + members))
        for session in subscribers {
            session.output.send(line, coalescing: nil)
            session.output.flush()
        }
    }

    private func valueEvent(_ stream: String, _ value: PublishedValue, time: Double, seq: Int) -> JSONValue {
        .object([("event", "value"), ("stream", .string(stream)), ("value", .published(value)), ("t", .number(time)), ("seq", .integer(Int64(seq)))])
    }

    private func broadcast(_ event: JSONValue) {
        let line = encode(event)
        for session in sessions.values {
            session.output.send(line, coalescing: nil)
            session.output.flush()
        }
    }

    private func send(_ value: JSONValue, to session: ClientSession) {
        session.output.send(encode(value), coalescing: nil)
        session.sent += 1
    }

    private func encode(_ value: JSONValue) -> ByteBuffer {
        var text = ""
        value.encode(into: &text)
        text += "\n"
        return allocator.buffer(string: text)
    }

    // MARK: Helpers

    private func requireControl(_ session: ClientSession, _ op: String) throws(ProtocolError) {
        guard session.control else {
            throw ProtocolError("forbidden", "\(op) changes the scene: only root, motiond's user, members of [daemon] control_groups and clients that sent the control token (auth) may use it")
        }
    }

    private func string(_ request: JSONInput, _ key: String) throws(ProtocolError) -> String {
        guard let value = request[key] else { throw ProtocolError("bad_request", "this op needs \"\(key)\"") }
        guard let string = value.string else { throw ProtocolError("bad_request", "\"\(key)\" must be a string, not \(value.kind)") }
        return string
    }

    private func unknownStream(_ name: String) -> ProtocolError {
        ProtocolError("unknown_stream", "no stream is called or matches '\(name)'; `list` shows them")
    }

    /// A client's JSON as the kind of value a stream holds, or nil if it has another shape.
    static func published(_ input: JSONInput, like current: PublishedValue) -> PublishedValue? {
        switch current {
        case .point:
            guard let x = input["x"]?.number, let y = input["y"]?.number, input.object?.count == 2 else { return nil }
            return .point(Point(x: x, y: y))
        case .size:
            guard let w = input["width"]?.number, let h = input["height"]?.number, input.object?.count == 2 else { return nil }
            return .size(Size(width: w, height: h))
        case .number: return input.number.map { .number($0) }
        case .bool: return input.bool.map { .bool($0) }
        case .text: return input.string.map { .text($0) }
        case .spring(let spring):
            guard let object = input.object, Set(object.keys).isSubset(of: ["tension", "friction", "mass"]) else { return nil }
            return .spring(SpringConfiguration(
                tension: input["tension"]?.number ?? spring.tension, friction: input["friction"]?.number ?? spring.friction,
                mass: input["mass"]?.number ?? spring.mass))
        }
    }

    static func shape(of value: PublishedValue) -> String {
        switch value {
        case .point: return "{\"x\": …, \"y\": …}"
        case .size: return "{\"width\": …, \"height\": …}"
        case .number: return "a number"
        case .bool: return "true or false"
        case .text: return "a string"
        case .spring: return "{\"tension\": …, \"friction\": …, \"mass\": …}"
        }
    }

    /// A client's JSON element as the TOML table the configuration loader reads.
    static func toml(_ input: JSONInput) throws(ProtocolError) -> TOMLTable {
        let table = TOMLTable()
        for (key, value) in input.object ?? [:] {
            try refuseNUL(key, key)
            table[key] = try tomlValue(value, key)
        }
        return table
    }

    /// TOMLKit passes strings to toml++ as C strings, which end at a NUL: "car\u0000" would
    /// become an element "car" that no request naming "car\u0000" could remove.
    private static func refuseNUL(_ text: String, _ key: String) throws(ProtocolError) {
        guard !text.unicodeScalars.contains("\u{0}") else { throw ProtocolError("bad_value", "\(key) contains a NUL character (\\u0000)") }
    }

    private static func tomlValue(_ input: JSONInput, _ key: String) throws(ProtocolError) -> TOMLValueConvertible {
        switch input {
        case .null: throw ProtocolError("bad_value", "\(key) cannot be null")
        case .bool(let b): return b
        case .number(let n):
            if let integer = input.integer { return integer }
            return n
        case .string(let s):
            try refuseNUL(s, key)
            return s
        case .array(let items):
            let array = TOMLArray()
            for item in items { array.append(try tomlValue(item, key)) }
            return array
        case .object: return try toml(input)
        }
    }
}

/// An error reply: a code from docs/protocol.md and a message for people.
public struct ProtocolError: Error, Equatable {
    public var code: String
    public var message: String

    public init(_ code: String, _ message: String) {
        self.code = code
        self.message = message
    }
}
