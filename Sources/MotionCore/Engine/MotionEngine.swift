/// One change the daemon publishes: a property's new value at a frame's time.
public struct PublishedUpdate: Hashable, Sendable {
    /// `ID.position`, `ID.rotation`, `ID.scale`, `ID.size`, `ID.state`, …
    public var stream: String
    /// The new value, absolute.
    public var value: PublishedValue
    /// The frame's timestamp, in seconds on the monotonic clock.
    public var time: Double
}

/// Turns touch frames into property values: routes each contact to the element it landed
/// on, runs that element's recognizers, lets its interactions and springs move it, and
/// publishes what changed, once per frame.
///
/// Everything happens on the caller's thread. Given the same frames and clock ticks, the
/// engine gives the same updates, bit for bit: contacts get ids in arrival order, elements
/// are visited in the order they were added, and updates are sorted the same way.
public final class MotionEngine {
    /// The elements.
    public let scene: Scene
    /// The clock springs run on.
    public let clock: FrameClock
    /// When gestures begin, for every element's recognizers.
    public var thresholds: GestureThresholds
    /// Called once per frame with everything that changed in it.
    public var onUpdates: ([PublishedUpdate]) -> Void = { _ in }

    private struct ContactKey: Hashable { var device: Int; var trackingID: Int32 }
    private var owners: [ContactKey: (element: String, id: Int32)] = [:]
    private var nextContactID: Int32 = 0
    private var recognizers: [String: GestureSet] = [:]
    private var runtimes: [String: MotionRuntime] = [:]
    private var published: [String: (values: [(stream: String, property: PublishedProperty)], links: [Subscription])] = [:]
    private var lastPublished: [String: PublishedValue] = [:]
    private var dirty: Set<String> = []
    private var order: [String] = []
    private var processing = false
    private var flushScheduled = false
    private let activity = ActivityTracker()
    private var activityLinks: [String: Subscription] = [:]

    /// Creates an engine for `scene` whose springs run on `clock`.
    public init(scene: Scene, clock: FrameClock, thresholds: GestureThresholds = GestureThresholds()) {
        self.scene = scene
        self.clock = clock
        self.thresholds = thresholds
        attach(scene.container, interactions: [])
    }

    /// `.active` while any element moves.
    public var state: ReadOnlyProperty<MotionState> { activity.state }

    /// The runtime of an element's interactions.
    public func runtime(of id: String) -> MotionRuntime? { runtimes[id] }

    /// Adds an element with its interactions, while running or not.
    public func add(_ element: Element, interactions: [any Interaction<Element>]) {
        scene.add(element)
        attach(element, interactions: interactions)
    }

    /// Adds interactions to the container, the screen.
    public func addToContainer(_ interactions: [any Interaction<Element>]) {
        let runtime = runtimes[scene.container.id]!
        for interaction in interactions { runtime.add(interaction, to: scene.container) }
    }

    /// Removes an element: its gestures are cancelled, its interactions disconnected, and the
    /// fingers on it are ignored until they lift.
    public func remove(_ id: String) {
        guard let element = scene.element(id), element !== scene.container else { return }
        let time = clock.now
        if var set = recognizers.removeValue(forKey: id) {
            let mine = owners.filter { $0.value.element == id }
            let cancelled = TouchFrame(time: time, contacts: mine.map { entry in
                TouchContact(slot: 0, trackingID: entry.value.id, phase: .cancelled, deviceX: 0, deviceY: 0, position: element.position.value)
            }.sorted { $0.trackingID < $1.trackingID })
            if !cancelled.contacts.isEmpty {
                for event in set.update(cancelled) { element.gestures.send(event) }
                element.gestures.touches.send(cancelled)
            }
        }
        owners = owners.filter { $0.value.element != id }
        runtimes.removeValue(forKey: id)?.disconnectAll()
        if let gone = published.removeValue(forKey: id) {
            gone.links.forEach { $0.unsubscribe() }
            for (stream, _) in gone.values {
                lastPublished[stream] = nil
                dirty.remove(stream)
            }
        }
        activityLinks.removeValue(forKey: id)?.unsubscribe()
        order.removeAll { $0 == id }
        scene.remove(id)
        flushIfIdle()
    }

    /// Takes the engine apart, for good: every interaction is disconnected (springs in flight
    /// stop and no longer observe the clock), the links that published the elements'
    /// properties are cut, and nothing more is published or reported. Springs hold
    /// themselves alive through their subscriptions, so an engine that is only dropped
    /// keeps its scene in memory and keeps the clock ticking; a reload calls this on the
    /// engine it replaces. Touches in progress are forgotten, not cancelled: nobody listens.
    public func disconnect() {
        onUpdates = { _ in }
        onGesture = { _, _ in }
        for id in order { runtimes[id]?.disconnectAll() }
        runtimes = [:]
        for entry in published.values { entry.links.forEach { $0.unsubscribe() } }
        published = [:]
        activityLinks.values.forEach { $0.unsubscribe() }
        activityLinks = [:]
        recognizers = [:]
        owners = [:]
        order = []
        dirty = []
    }

    /// Processes one device's frame at its timestamp.
    public func process(_ frame: TouchFrame, device: Int = 0) {
        processing = true
        clock.perform(at: frame.time) {
            var frames: [String: [TouchContact]] = [:]
            for contact in frame.contacts {
                let key = ContactKey(device: device, trackingID: contact.trackingID)
                if contact.phase == .began {
                    let element = scene.hitTest(contact.position)
                    owners[key] = (element.id, nextContactID)
                    nextContactID = nextContactID == Int32.max ? 0 : nextContactID + 1
                }
                guard let owner = owners[key] else { continue }
                var routed = contact
                routed.trackingID = owner.id
                frames[owner.element, default: []].append(routed)
                if !contact.phase.isActive { owners[key] = nil }
            }
            for id in order {
                guard let contacts = frames[id], let element = scene.element(id) else { continue }
                let own = TouchFrame(time: frame.time, contacts: contacts)
                var set = recognizers[id] ?? GestureSet(element.recognizers, thresholds: thresholds)
                let events = set.update(own)
                recognizers[id] = set
                for event in events {
                    element.gestures.send(event)
                    onGesture(id, event)
                }
                element.gestures.touches.send(own)
            }
        }
        processing = false
        flush(at: frame.time)
    }

    /// Publishes whatever changed outside a frame (a command from a client), at `clock.now`.
    public func flushIfIdle() {
        guard !processing else { return }
        flush(at: clock.now)
    }

    // MARK: Publishing

    private func attach(_ element: Element, interactions: [any Interaction<Element>]) {
        let runtime = MotionRuntime(clock: clock)
        runtimes[element.id] = runtime
        for interaction in interactions { runtime.add(interaction, to: element) }
        order.append(element.id)

        var values: [(String, PublishedProperty)] = [
            ("position", .writablePoint(element.position)), ("size", .size(element.size)),
            ("rotation", .number(element.rotation, writable: -1e6...1e6)), ("scale", .number(element.scale, writable: 1e-6...1e6)),
            ("state", .text(element.state) { $0.rawValue }), ("enabled", .flag(element.enabled)),
        ]
        values += element.extraProperties.map { ($0.name, $0.property) }
        var links: [Subscription] = []
        var readers: [(String, PublishedProperty)] = []
        for (name, property) in values {
            let stream = "\(element.id).\(name)"
            lastPublished[stream] = property.read()
            readers.append((stream, property))
            links.append(property.subscribe { [weak self] in self?.markDirty(stream) })
        }
        dirty.subtract(readers.map(\.0))
        published[element.id] = (readers, links)
        activityLinks[element.id] = activity.tracked(element.state.stream.asStateStream()).subscribe(next: { _ in })
    }

    /// Every stream the engine publishes, with its current value, in publication order.
    public var streams: [(stream: String, value: PublishedValue)] {
        order.flatMap { id in published[id]?.values.map { ($0.stream, $0.property.read()) } ?? [] }
    }

    /// A published stream by name, to read or (if it allows) write.
    public func property(_ stream: String) -> PublishedProperty? {
        guard let dot = stream.lastIndex(of: ".") else { return nil }
        return published[String(stream[..<dot])]?.values.first { $0.stream == stream }?.property
    }

    /// The last value published on `stream`, or nil when there is no such stream.
    public func lastValue(_ stream: String) -> PublishedValue? { lastPublished[stream] }

    /// Called with each recognizer event, and the element it happened on.
    public var onGesture: (String, RecognizedGesture) -> Void = { _, _ in }

    private func markDirty(_ stream: String) {
        dirty.insert(stream)
        guard !processing, !flushScheduled else { return }
        flushScheduled = true
        if !clock.afterFrame({ [weak self] in self?.flush(at: self?.clock.now ?? 0) }) {
            // Not inside a frame: the caller (a command) flushes with flushIfIdle().
            flushScheduled = false
        }
    }

    private func flush(at time: Double) {
        flushScheduled = false
        guard !dirty.isEmpty else { return }
        var updates: [PublishedUpdate] = []
        for id in order {
            for (stream, property) in published[id]?.values ?? [] where dirty.contains(stream) {
                let value = property.read()
                if lastPublished[stream] != value {
                    lastPublished[stream] = value
                    updates.append(PublishedUpdate(stream: stream, value: value, time: time))
                }
            }
        }
        dirty.removeAll(keepingCapacity: true)
        if !updates.isEmpty { onUpdates(updates) }
    }
}

extension MotionObservable where Value == MotionState {
    /// A stream of states as a stream whose state channel follows them.
    func asStateStream() -> MotionObservable<MotionState> {
        MotionObservable { observer in
            self.subscribe(next: { state in
                observer.next(state)
                observer.state(state)
            }).unsubscribe
        }
    }
}
