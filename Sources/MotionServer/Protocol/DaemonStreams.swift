import MotionCore
import NIOCore

/// The daemon's side of streams: which exist, what a subscriber is sent on subscribing, and
/// the lines that go to one session, to the subscribers of a gesture, or to everyone.
extension Daemon {
    // MARK: Streams and subscriptions

    /// Every stream, in the order `hello` and `list` give them: the engine's values, the
    /// contacts, and each element's gesture streams.
    var allStreams: [(name: String, id: StreamID)] {
        let catalog = engine.catalog
        return (engine.valueStreams + [contactsStream] + engine.gestureStreams).map { (catalog.name(of: $0), $0) }
    }

    /// Subscribes `session` to the streams its patterns match (among `candidates`, by
    /// default every stream), sending their values.
    func resubscribe(_ session: ClientSession, among candidates: [(name: String, id: StreamID)]? = nil) {
        let streams = candidates ?? allStreams
        let new = streams.filter { stream in
            session.patterns.contains { globMatches(Substring($0), Substring(stream.name)) } && subscriptions.subscribe(session, to: stream.id)
        }
        sendValues(new.map(\.id), to: session)
        session.output.flush()
    }

    /// The current values of `streams`, as `value` events.
    func sendValues(_ streams: [StreamID], to session: ClientSession) {
        for stream in streams {
            if stream == contactsStream {
                send(contactsEvent(time: clock.now, seq: publisher.seq(stream)), to: session)
                continue
            }
            guard let property = engine.property(stream) else { continue }
            var line = allocator.buffer(capacity: 160)
            line.writeValueLine(stream: engine.catalog.name(of: stream), value: property.read(), time: clock.now, seq: publisher.seq(stream))
            session.output.send(line, coalescing: nil)
            session.sent += 1
        }
    }

    /// How many streams have a `seq` count (for tests: it must not outgrow the streams).
    var countedStreams: Int { publisher.countedStreams }

    // MARK: Publishing

    /// A recognizer's event as a `state` event: `{"event": "state", "stream", "state", "t",
    /// "touches", …the gesture's values}`, the velocity only when it ended. Only the changes
    /// of state are published; a gesture's values in between are in the element's streams.
    func gesture(_ gesture: RecognizedGesture, on element: String, stream: StreamID) {
        guard [.began, .ended, .cancelled, .recognized].contains(gesture.state), subscriptions.hasSubscribers(stream) else { return }
        let head: [(String, JSONValue)] = [("event", "state"), ("stream", .string(engine.catalog.name(of: stream))),
                                           ("state", .string(gesture.state.rawValue)), ("t", .number(gesture.time))]
        let line = encode(.object(head + JSONValue.gestureValues(gesture, velocity: gesture.state == .ended)))
        for session in subscriptions.subscribers(of: stream) {
            session.output.send(line, coalescing: nil)
            session.output.flush()
        }
    }

    func broadcast(_ event: JSONValue) {
        let line = encode(event)
        for session in sessions.values {
            session.output.send(line, coalescing: nil)
            session.output.flush()
        }
    }

    func send(_ value: JSONValue, to session: ClientSession) {
        session.output.send(encode(value), coalescing: nil)
        session.sent += 1
    }

    func encode(_ value: JSONValue) -> ByteBuffer {
        var text = ""
        value.encode(into: &text)
        text += "\n"
        return allocator.buffer(string: text)
    }

    /// Whether any client subscribes to `screen.contacts`.
    var contactsWanted: Bool { subscriptions.hasSubscribers(contactsStream) }

    /// After subscriptions changed: nobody wants the contacts any more, so they are forgotten.
    func contactsSubscriptionsChanged() {
        if !contactsWanted { contacts.reset() }
    }

    func contactsEvent(time: Double, seq: Int) -> JSONValue {
        .object([("event", "value"), ("stream", .string(ContactsStream.name)), ("value", contacts.json), ("t", .number(time)), ("seq", .integer(Int64(seq)))])
    }
}
