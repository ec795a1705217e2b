import MotionCore
import MotionWire

/// The connected clients and what each follows: the sessions, who subscribes to what, the
/// values' numbering and encoding (``Publisher``). Every line but a reply leaves through
/// here: values on subscribing, gesture events, broadcasts.
final class ClientHub {
    /// The connected clients, by session id: the daemon's one list of them, which the check
    /// for slow clients walks too (`ClientConnections`, in MotionServer). A session leaves it through
    /// ``close(_:)`` alone.
    private(set) var sessions: [Int: ClientSession] = [:]
    private var nextSessionID = 1
    /// Who subscribes to what, from the patterns the clients sent.
    var subscriptions = SubscriptionIndex()
    let publisher = Publisher()
    private unowned let scene: DaemonScene
    private let clock: FrameClock

    init(scene: DaemonScene, clock: FrameClock) {
        self.scene = scene
        self.clock = clock
    }

    // MARK: Sessions

    /// A new session for a client that connected.
    func open(credentials: PeerCredentials?, control: Bool, output: ClientOutput) -> ClientSession {
        let session = ClientSession(id: nextSessionID, credentials: credentials, control: control, output: output)
        nextSessionID += 1
        sessions[session.id] = session
        return session
    }

    /// Forgets a session and its subscriptions.
    func close(_ session: ClientSession) {
        sessions[session.id] = nil
        subscriptions.unsubscribeAll(session)
        contactsSubscriptionsChanged()
    }

    /// Says `bye` to every client and closes their connections; each session is forgotten
    /// through ``close(_:)``, as any client that goes is (one on a channel usually already
    /// was, by its transport, as the channel closed).
    func closeAll(saying bye: ArraySlice<UInt8>) {
        for session in sessions.values {
            session.output.close(saying: bye)
            close(session)
        }
    }

    /// After a reload: the streams are numbered anew, so every subscription is made again
    /// from its patterns, and each client gets the new streams' values.
    func sceneReplaced(oldCatalog: StreamCatalog) {
        publisher.renumber(from: oldCatalog, to: scene.engine.catalog)
        subscriptions = SubscriptionIndex()
        for session in sessions.values {
            session.subscriptions = [:]
            resubscribe(session)
        }
        contactsSubscriptionsChanged()
    }

    /// Streams the engine removed (an element went): nobody follows or numbers them any more.
    func streamsRemoved(_ gone: [StreamID]) {
        subscriptions.remove(gone)
        publisher.forget(gone)
    }

    // MARK: Subscriptions

    /// Subscribes `session` to the streams its patterns match (among `candidates`, by
    /// default every stream), sending their values.
    func resubscribe(_ session: ClientSession, among candidates: [(name: String, id: StreamID)]? = nil) {
        let streams = candidates ?? scene.allStreams
        let new = streams.filter { stream in
            session.patterns.contains { globMatches(Substring($0), Substring(stream.name)) } && subscriptions.subscribe(session, to: stream.id)
        }
        sendValues(new.map(\.id), to: session)
        session.output.flush()
    }

    /// The current values of `streams`, as `value` events, many lines to a buffer: a client
    /// subscribing to every stream of a large scene gets a hundred thousand, and a buffer and
    /// a write each cost more than the lines themselves.
    func sendValues(_ streams: [StreamID], to session: ClientSession) {
        let engine = scene.engine
        let room = Swift.min(streams.count * 128, Self.valuesBufferBytes)
        var lines = LineBuffer(capacity: room)
        var ranges: [Range<Int>] = []
        func sendLines() {
            guard lines.count > 0 else { return }
            session.output.sendNow(lines.lines, ranges: ranges)
            lines = LineBuffer(capacity: room)
            ranges.removeAll(keepingCapacity: true)
        }
        for stream in streams {
            guard let value = engine.currentValue(stream) else { continue }
            let start = lines.count
            lines.writeValueLine(stream: engine.catalog.name(of: stream), value: value, time: clock.now, seq: publisher.seq(stream))
            ranges.append(start..<lines.count)
            session.sent += 1
            if lines.count >= Self.valuesBufferBytes { sendLines() }
        }
        sendLines()
    }

    /// How many bytes of values ``sendValues(_:to:)`` puts in one buffer, at most (a line more).
    static let valuesBufferBytes = 64 << 10

    /// Streams the publisher numbers (for the tests of what removing elements leaves).
    var countedStreams: Int { publisher.countedStreams }

    // MARK: Lines

    /// An event every client hears (a device came or went, a calibration target moved).
    func broadcast(_ event: JSONValue) {
        let line = encode(event)
        for session in sessions.values {
            session.output.send(line, coalescing: nil)
            session.output.flush()
        }
    }

    /// One line to one session, not yet flushed.
    func send(_ value: JSONValue, to session: ClientSession) {
        session.output.send(encode(value), coalescing: nil)
        session.sent += 1
    }

    /// A line as bytes, newline included.
    func encode(_ value: JSONValue) -> ArraySlice<UInt8> {
        var bytes = value.encodedBytes
        bytes.append(UInt8(ascii: "\n"))
        return bytes[...]
    }

    // MARK: screen.contacts

    /// Whether anyone follows `screen.contacts`: the engine reports the fingers only then.
    var contactsWanted: Bool { subscriptions.hasSubscribers(scene.contactsStream) }

    /// Tells the engine whether anyone follows the fingers; it forgets them when the last
    /// subscriber of `screen.contacts` went, so a later one does not get stale contacts.
    func contactsSubscriptionsChanged() {
        scene.engine.followContacts(contactsWanted)
    }

}
