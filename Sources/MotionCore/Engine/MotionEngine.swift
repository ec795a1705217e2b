/// One change the daemon publishes: a property's new value at a frame's time.
public struct PublishedUpdate: Hashable, Sendable {
    /// The stream's number in the engine that published it.
    public var id: StreamID
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
///
/// Streams are numbered (``StreamID``): per frame the engine touches arrays, not
/// dictionaries keyed by names; an element's state lives in one ``Entry``.
public final class MotionEngine {
    /// The elements.
    public let scene: Scene
    /// The clock springs run on.
    public let clock: FrameClock
    /// When gestures begin, for every element's recognizers.
    public var thresholds: GestureThresholds
    /// Called once per frame with everything that changed in it.
    public var onUpdates: ([PublishedUpdate]) -> Void = { _ in }
    /// Called with each recognizer event: its stream, the element it happened on, the event.
    public var onGesture: (StreamID, String, RecognizedGesture) -> Void = { _, _, _ in }
    /// Called with each screen gesture (`[[screen_gesture]]`): `screen.gesture`'s stream, the event.
    public var onScreenGesture: (StreamID, ScreenGestureEvent) -> Void = { _, _ in }
    /// Called when streams went with an element: whoever keeps state per ``StreamID``
    /// clears theirs, as the numbers will be reused.
    public var onStreamsRemoved: ([StreamID]) -> Void = { _ in }
    /// Called when an element's value stopped being finite (which the limits on what comes
    /// from outside should make impossible) and the element was put back to its last finite
    /// values, with the streams that were not finite; once, until they are finite again.
    public var onNonFinite: (_ element: String, _ streams: [String]) -> Void = { _, _ in }
    /// Called when the fingers' predictions lapse because no frame came: whoever publishes
    /// predicted contacts (`screen.contacts`) should publish them where the fingers are.
    public var onPredictionsLapsed: () -> Void = {}

    /// Every stream's name and number.
    public private(set) var catalog = StreamCatalog()

    /// An element as the engine runs it: its recognizers, its interactions, its published
    /// properties and the contacts routed to it in the frame being processed.
    private final class Entry {
        let element: Element
        let runtime: MotionRuntime
        /// Made at the element's first touch, with the thresholds then in force.
        var recognizers: GestureSet?
        var values: [(id: StreamID, property: PublishedProperty)] = []
        var links: [Subscription] = []
        var activityLink: Subscription?
        /// The gesture streams, by ``GestureKind`` in `allCases` order.
        var gestureStreams: [StreamID?] = []
        /// This frame's contacts on the element; emptied, not freed, after each frame.
        var contacts: [TouchContact] = []
        /// Attract mode: the element's ``Resettable``, and whether it went home in this
        /// idle period.
        var reset: (interaction: Resettable, done: Bool)?
        /// Whether the element was found not finite and reported, and has not been finite since.
        var nonFiniteReported = false

        init(element: Element, runtime: MotionRuntime) {
            self.element = element
            self.runtime = runtime
        }
    }

    private var owners: [ContactKey: (entry: Entry, id: Int32)] = [:]
    private var nextContactID: Int32 = 0
    /// The elements in the order they were added, the container first.
    private var entries: [Entry] = []
    /// Per stream: the property, the value last published, whether it changed this frame.
    private var properties: [PublishedProperty?] = []
    private var lastPublished: [PublishedValue?] = []
    private var isDirty: [Bool] = []
    private var dirtyCount = 0
    /// This frame's updates; the array is kept between frames.
    private var updates: [PublishedUpdate] = []
    /// One element's recognizer events in this frame; the array is kept between frames.
    private var events: [RecognizedGesture] = []
    private var processing = false
    private var flushScheduled = false
    /// The flush a spring's frame ends with, made once: a closure made per frame was an
    /// allocation per frame.
    private lazy var flushAfterFrame: () -> Void = { [weak self] in
        guard let self else { return }
        flush(at: clock.now)
    }
    private let activity = ActivityTracker()
    /// The screen's own gestures, when the configuration names any.
    private var screenWatch: ScreenWatch?
    private var screenEvents: [ScreenGestureEvent] = []
    /// Contacts a screen gesture took from the elements: routed to none until they lift.
    private var takenByScreen: Set<ContactKey> = []

    // Attract mode: idle time counts from the last touch anywhere on the screen.
    /// Seconds without a touch before `screen.idle` turns true.
    public var idleAfter: Double
    private let idle = ReactiveProperty(false)
    /// Every contact down, on an element or not, on every device.
    private var down: Set<ContactKey> = []
    /// When the last contact lifted (or the engine started): idle time counts from here.
    private var lastTouch: Double
    /// Whether an element went home in this idle period: only then does a touch have
    /// resets to re-arm (a frame does not visit every element for nothing).
    private var anyResetDone = false

    /// How far ahead elements moved by fingers are predicted, in seconds; 0 for not at all.
    public let prediction: Double
    /// The fingers' predictions (ElementPrediction.swift); nil without prediction.
    private let predictions: ScenePrediction?
    /// One element's fingers, while its predictions are updated; kept between frames.
    private var held: [(key: ContactKey, id: Int32)] = []

    /// Creates an engine for `scene` whose springs run on `clock`.
    /// With a `prediction` horizon (seconds, 0 for none), elements that fingers move also
    /// publish where they will be that far ahead.
    public init(scene: Scene, clock: FrameClock, thresholds: GestureThresholds = GestureThresholds(), idleAfter: Double = 60,
                prediction: Double = 0) {
        precondition(idleAfter > 0 && idleAfter.isFinite, "the screen is idle after a positive number of seconds")
        precondition(prediction >= 0 && prediction.isFinite, "a prediction horizon is 0 or more seconds")
        self.prediction = prediction
        self.predictions = prediction > 0
            ? ScenePrediction(horizon: prediction, screen: Rect(origin: Point(x: 0, y: 0), size: scene.container.size.value)) : nil
        self.scene = scene
        self.clock = clock
        self.thresholds = thresholds
        self.idleAfter = idleAfter
        self.lastTouch = clock.now
        attach(scene.container, interactions: [])
    }

    /// `screen.idle`: false while anyone touches the screen, true once nobody has for
    /// ``idleAfter`` seconds.
    public var isIdle: Bool { idle.value }

    /// When attract mode next has something to do (`screen.idle` turns true, an element goes
    /// home), on the clock's time; nil while a finger is down or when nothing is left until
    /// the next touch. Whoever drives the engine calls ``advanceIdle(to:)`` then.
    public var nextIdleDeadline: Double? {
        guard down.isEmpty else { return nil }
        var next: Double? = idle.value ? nil : lastTouch + idleAfter
        for entry in entries {
            guard let reset = entry.reset, !reset.done else { continue }
            next = Swift.min(next ?? .infinity, lastTouch + reset.interaction.after)
        }
        return next
    }

    /// Does what attract mode has due by `time`: turns `screen.idle` true, sends elements
    /// home. Publishes at `time`. Calling it early, or with a finger down, does nothing.
    public func advanceIdle(to time: Double) {
        guard down.isEmpty else { return }
        clock.perform(at: time) {
            if !idle.value && time >= lastTouch + idleAfter { idle.value = true }
            for entry in entries {
                guard let reset = entry.reset, !reset.done, time >= lastTouch + reset.interaction.after else { continue }
                entry.reset?.done = true
                anyResetDone = true
                reset.interaction.reset()
            }
        }
        flushIfIdle()
    }

    /// `.active` while any element moves.
    public var state: ReadOnlyProperty<MotionState> { activity.state }

    /// The runtime of an element's interactions.
    public func runtime(of id: String) -> MotionRuntime? { entry(id)?.runtime }

    private func entry(_ id: String) -> Entry? { entries.first { $0.element.id == id } }

    /// Adds an element with its interactions, while running or not.
    public func add(_ element: Element, interactions: [any Interaction<Element>]) {
        scene.add(element)
        attach(element, interactions: interactions)
    }

    /// Adds interactions to the container, the screen.
    public func addToContainer(_ interactions: [any Interaction<Element>]) {
        let runtime = entries[0].runtime
        for interaction in interactions { runtime.add(interaction, to: scene.container) }
    }

    /// Names a stream published from outside the engine (the daemon's `screen.contacts`),
    /// so that it is numbered like the rest.
    public func registerExternalStream(_ name: String) -> StreamID {
        catalog.id(named: name) ?? register(name, kind: .external)
    }

    /// Removes an element: its gestures are cancelled, its interactions disconnected, and the
    /// fingers on it are ignored until they lift.
    public func remove(_ id: String) {
        guard let index = entries.firstIndex(where: { $0.element.id == id }), index > 0 else { return }
        let entry = entries[index]
        cancelTouches(of: entry, at: clock.now)
        entry.runtime.disconnectAll()
        entry.links.forEach { $0.unsubscribe() }
        entry.activityLink?.unsubscribe()
        entries.remove(at: index)
        var gone: [StreamID] = []
        for (stream, _) in entry.values {
            if isDirty[stream.index] {
                isDirty[stream.index] = false
                dirtyCount -= 1
            }
            properties[stream.index] = nil
            lastPublished[stream.index] = nil
            gone.append(stream)
        }
        gone += entry.gestureStreams.compactMap { $0 }
        for stream in gone { catalog.remove(stream) }
        scene.remove(id)
        onStreamsRemoved(gone)
        flushIfIdle()
    }

    /// Takes the fingers from an element: its gestures in progress end `cancelled` (its
    /// interactions and its gesture streams hear so), and the fingers go to no element until
    /// they lift.
    private func cancelTouches(of entry: Entry, at time: Double) {
        let mine = owners.filter { $0.value.entry === entry }
        guard !mine.isEmpty else { return }
        for key in mine.keys { owners[key] = nil }
        let position = entry.element.position.value
        let cancelled = TouchFrame(time: time, contacts: mine.values.map { owner in
            TouchContact(slot: 0, trackingID: owner.id, phase: .cancelled, deviceX: 0, deviceY: 0, position: position)
        }.sorted { $0.trackingID < $1.trackingID })
        deliver(cancelled, to: entry)
    }

    /// Runs an element's recognizers on its contacts of one frame, and tells its interactions
    /// and its gesture streams what they recognized.
    private func deliver(_ frame: TouchFrame, to entry: Entry) {
        if entry.recognizers == nil { entry.recognizers = GestureSet(entry.element.recognizers, thresholds: thresholds) }
        events.removeAll(keepingCapacity: true)
        entry.recognizers!.update(frame, into: &events)
        for event in events {
            entry.element.gestures.send(event)
            if let stream = entry.gestureStreams[event.kind.allCasesIndex] { onGesture(stream, entry.element.id, event) }
        }
        entry.element.gestures.touches.send(frame)
    }

    /// Hands the touches in progress over to `successor`, the engine a reload made from the
    /// new configuration, before this one is taken apart (``disconnect()``), so that every
    /// gesture begun ends. The gestures on elements end `cancelled` here: the successor's
    /// elements are new ones, where the configuration puts them, and the fingers down go to
    /// none of them until they lift. The screen's gestures carry on in the successor where
    /// its patterns keep them, and end here where not (``ScreenGestures/handOver(to:at:into:)``).
    /// The successor knows the fingers are down, so the screen does not go idle under them.
    public func handOver(to successor: MotionEngine) {
        let time = clock.now
        for entry in entries { cancelTouches(of: entry, at: time) }
        if let screenWatch {
            screenWatch.handOver(to: successor.screenWatch, at: time, into: &screenEvents)
            publishScreenGestures()
        }
        successor.down = down
    }

    /// Takes the engine apart, for good: every interaction is disconnected (springs in flight
    /// stop and no longer observe the clock), the links that published the elements'
    /// properties are cut, and nothing more is published or reported. Springs hold
    /// themselves alive through their subscriptions, so an engine that is only dropped
    /// keeps its scene in memory and keeps the clock ticking; a reload calls this on the
    /// engine it replaces, after ``handOver(to:)``. Touches still in progress are forgotten.
    public func disconnect() {
        onUpdates = { _ in }
        onGesture = { _, _, _ in }
        onScreenGesture = { _, _ in }
        onStreamsRemoved = { _ in }
        for entry in entries {
            entry.runtime.disconnectAll()
            entry.links.forEach { $0.unsubscribe() }
            entry.activityLink?.unsubscribe()
        }
        entries = []
        owners = [:]
        properties = []
        lastPublished = []
        isDirty = []
        dirtyCount = 0
    }

    /// Processes one device's frame at its timestamp.
    public func process(_ frame: TouchFrame, device: Int = 0) {
        processing = true
        clock.perform(at: frame.time) {
            if let screenWatch {
                screenWatch.take(frame, device: device, into: &screenEvents)
                publishScreenGestures()
            }
            var touched = false
            for contact in frame.contacts {
                let key = ContactKey(device: device, trackingID: contact.trackingID)
                if contact.phase.isActive { down.insert(key) } else { down.remove(key) }
                if takenByScreen.contains(key) {
                    // The element that had it hears it cancelled, once; then nobody does.
                    if let owner = owners[key] {
                        var cancelled = contact
                        cancelled.trackingID = owner.id
                        cancelled.phase = .cancelled
                        owner.entry.contacts.append(cancelled)
                        owners[key] = nil
                        touched = true
                    }
                    if !contact.phase.isActive { takenByScreen.remove(key) }
                    continue
                }
                if contact.phase == .began {
                    let element = scene.hitTest(contact.position)
                    if let entry = entries.first(where: { $0.element === element }) {
                        owners[key] = (entry, nextContactID)
                        nextContactID = nextContactID == Int32.max ? 0 : nextContactID + 1
                    }
                }
                guard let owner = owners[key] else { continue }
                var routed = contact
                routed.trackingID = owner.id
                owner.entry.contacts.append(routed)
                touched = true
                if !contact.phase.isActive { owners[key] = nil }
            }
            if !frame.contacts.isEmpty { touchedScreen(at: frame.time) }
            guard touched else { return }
            for entry in entries where !entry.contacts.isEmpty {
                // The entry's buffers are lent to the frame and taken back after it, and the
                // recognizers are updated where they live: copies would allocate every frame.
                var own = TouchFrame(time: frame.time, contacts: [])
                swap(&own.contacts, &entry.contacts)
                deliver(own, to: entry)
                swap(&own.contacts, &entry.contacts)
                entry.contacts.removeAll(keepingCapacity: true)
            }
        }
        predictions?.take(frame, device: device)
        processing = false
        flush(at: frame.time)
    }

    /// Watches the whole screen for `patterns` (`[[screen_gesture]]`), published on
    /// `screen.gesture`.
    public func watch(_ patterns: [ScreenGesturePattern]) {
        guard !patterns.isEmpty else { return }
        let gestures = ScreenGestures(patterns, screen: scene.container.size.value, thresholds: thresholds)
        screenWatch = ScreenWatch(gestures, stream: register("screen.gesture", kind: .gesture))
    }

    /// When the engine next has something to do without a frame: attract mode's deadline,
    /// or a screen gesture's (a long press held still, on a panel that sends nothing then).
    /// Whoever drives the engine calls ``advance(to:)`` then.
    public var nextDeadline: Double? {
        [nextIdleDeadline, screenWatch?.nextDeadline, predictions?.lapse].compactMap { $0 }.min()
    }

    /// Does what is due by `time`: screen gestures whose time has come, then attract mode.
    public func advance(to time: Double) {
        if let predictions, predictions.lapse(by: time) {
            flush(at: time)
            onPredictionsLapsed()
        }
        if let screenWatch, let due = screenWatch.nextDeadline, due <= time {
            screenWatch.advance(to: time, into: &screenEvents)
            publishScreenGestures()
        }
        advanceIdle(to: time)
    }

    /// Hands this frame's screen gestures on; one that takes the fingers takes every
    /// contact down (the elements hear them cancelled at their next frame).
    private func publishScreenGestures() {
        guard let screenWatch, !screenEvents.isEmpty else { return }
        for event in screenEvents {
            if event.takesFingers { takenByScreen.formUnion(screenWatch.down) }
            onScreenGesture(screenWatch.stream, event)
        }
        screenEvents.removeAll(keepingCapacity: true)
    }

    /// Someone touched the screen: it is not idle, and the idle period starts again.
    private func touchedScreen(at time: Double) {
        lastTouch = time
        if idle.value { idle.value = false }
        guard anyResetDone else { return }
        anyResetDone = false
        for entry in entries where entry.reset?.done == true { entry.reset?.done = false }
    }

    /// Publishes whatever changed outside a frame (a command from a client), at `clock.now`.
    public func flushIfIdle() {
        guard !processing else { return }
        flush(at: clock.now)
    }

    // MARK: Publishing

    private func register(_ name: String, kind: StreamKind) -> StreamID {
        let id = catalog.register(name, kind: kind)
        if id.index == properties.count {
            properties.append(nil)
            lastPublished.append(nil)
            isDirty.append(false)
        }
        return id
    }

    private func attach(_ element: Element, interactions: [any Interaction<Element>]) {
        let runtime = MotionRuntime(clock: clock)
        let entry = Entry(element: element, runtime: runtime)
        entries.append(entry)
        for interaction in interactions { runtime.add(interaction, to: element) }
        if let reset = interactions.lazy.compactMap({ $0 as? Resettable }).first { entry.reset = (reset, false) }

        var values: [(String, PublishedProperty)] = [
            ("position", .writablePoint(element.position)), ("size", .size(element.size)),
            ("rotation", .number(element.rotation, writable: -1e6...1e6)), ("scale", .number(element.scale, writable: 1e-6...1e6)),
            ("state", .text(element.state) { $0.rawValue }), ("enabled", .flag(element.enabled)),
        ]
        if predictions != nil, element !== scene.container, let predicted = PredictedElement(element) {
            element.predicted = predicted
            values += predicted.streams
        }
        values += element.extraProperties.map { ($0.name, $0.property) }
        if element === scene.container { values.append(("idle", .flag(idle.readOnly))) }
        for (name, property) in values {
            let stream = register("\(element.id).\(name)", kind: .value)
            properties[stream.index] = property
            lastPublished[stream.index] = property.read()
            entry.values.append((stream, property))
            entry.links.append(property.subscribe { [weak self] in self?.markDirty(stream) })
        }
        // Subscribing delivered the current values: nothing is new.
        for (stream, _) in entry.values where isDirty[stream.index] {
            isDirty[stream.index] = false
            dirtyCount -= 1
        }
        entry.gestureStreams = GestureKind.allCases.map { kind in
            element.recognizers.contains(kind) ? register("\(element.id).\(kind.rawValue)", kind: .gesture) : nil
        }
        entry.activityLink = activity.tracked(element.state.stream.asStateStream()).subscribe(next: { _ in })
    }

    /// Every stream the engine publishes values on, with its current value, in publication
    /// order (elements as added, each element's properties in a fixed order).
    public var streams: [(stream: String, value: PublishedValue)] {
        entries.flatMap { entry in entry.values.map { (catalog.name(of: $0.id), $0.property.read()) } }
    }

    /// The value streams' numbers, in publication order.
    public var valueStreams: [StreamID] { entries.flatMap { $0.values.map(\.id) } }

    /// Every element's gesture streams, in the order of elements (the container first) and
    /// then of ``GestureKind/allCases``.
    public var gestureStreams: [StreamID] {
        entries.flatMap { $0.gestureStreams.compactMap { $0 } } + (screenWatch.map { [$0.stream] } ?? [])
    }

    /// A published stream by name, to read or (if it allows) write.
    public func property(_ stream: String) -> PublishedProperty? {
        catalog.id(named: stream).flatMap { property($0) }
    }

    /// A published stream by number.
    public func property(_ stream: StreamID) -> PublishedProperty? {
        stream.index < properties.count ? properties[stream.index] : nil
    }

    /// The last value published on `stream`, or nil when there is no such stream.
    public func lastValue(_ stream: String) -> PublishedValue? {
        catalog.id(named: stream).flatMap { lastPublished[$0.index] }
    }

    private func markDirty(_ stream: StreamID) {
        if !isDirty[stream.index] {
            isDirty[stream.index] = true
            dirtyCount += 1
        }
        guard !processing, !flushScheduled else { return }
        flushScheduled = true
        if !clock.afterFrame(flushAfterFrame) {
            // Not inside a frame: the caller (a command) flushes with flushIfIdle().
            flushScheduled = false
        }
    }

    private func flush(at time: Double) {
        flushScheduled = false
        updatePredictions()
        guard dirtyCount > 0 else { return }
        updates.removeAll(keepingCapacity: true)
        var broken: [Entry] = []
        for entry in entries {
            for (stream, property) in entry.values where isDirty[stream.index] {
                isDirty[stream.index] = false
                let value = property.read()
                guard value.isFinite else {
                    if broken.last !== entry { broken.append(entry) }
                    continue
                }
                if entry.nonFiniteReported && broken.last !== entry { entry.nonFiniteReported = false }
                if lastPublished[stream.index] != value {
                    lastPublished[stream.index] = value
                    updates.append(PublishedUpdate(id: stream, stream: catalog.name(of: stream), value: value, time: time))
                }
            }
        }
        dirtyCount = 0
        if !updates.isEmpty { onUpdates(updates) }
        for entry in broken { restoreFiniteValues(entry) }
    }

    /// Sets each element's predicted values (``ScenePrediction``), before each flush: a
    /// spring's step carries them along too, and the flush publishes what changed.
    private func updatePredictions() {
        guard let predictions else { return }
        let wasProcessing = processing
        processing = true
        defer { processing = wasProcessing }
        for entry in entries {
            guard let predicted = entry.element.predicted else { continue }
            held.removeAll(keepingCapacity: true)
            for (key, owner) in owners where owner.entry === entry { held.append((key, owner.id)) }
            predictions.update(predicted, of: entry.element, fingers: held, minimumSpan: thresholds.minimumSpanPixels)
        }
    }

    /// A finger's predicted move, unless predictions lapsed.
    func predictedMove(_ key: ContactKey) -> FingerMove? { predictions?.move(key) }

    /// Defence in depth: an element whose value is not finite is never published so; each
    /// value that is not is written back to the last one published (its position, its
    /// spring's destination and constants…), which restarts what drives it from there.
    private func restoreFiniteValues(_ entry: Entry) {
        var names: [String] = []
        for (stream, property) in entry.values where !property.read().isFinite {
            names.append(catalog.name(of: stream))
            if let last = lastPublished[stream.index], let write = property.write { _ = write(last) }
        }
        guard !names.isEmpty else { return }
        if !entry.nonFiniteReported { onNonFinite(entry.element.id, names) }
        entry.nonFiniteReported = true
    }
}
