/// Turns touch frames into property values: routes each contact to the element it landed
/// on (``ContactRouter``), runs that element's recognizers, lets its interactions and springs
/// move it, and reports what changed, once per frame, as a ``FrameReport``.
///
/// Frames come three ways, and each returns one report: an input frame (``process(_:device:)``),
/// time passing (``tick(at:)``: attract mode, a long press held still, predictions lapsing,
/// and whatever a command changed), and the clock's frames while springs move
/// (``runClockFrame(at:)``, which whoever runs the engine makes the clock's
/// ``FrameClock/frameRunner``).
///
/// Everything happens on the caller's thread. Given the same frames and clock ticks, the
/// engine gives the same reports, bit for bit: contacts get ids in arrival order, elements
/// are visited in the order they were added, and values are collected the same way.
public final class MotionEngine {
    /// The elements.
    public let scene: Scene
    /// The clock springs run on.
    public let clock: FrameClock
    /// When gestures begin, for every element's recognizers.
    public var thresholds: GestureThresholds
    /// How far ahead elements moved by fingers are predicted, in seconds; 0 for not at all.
    public let prediction: Double

    /// The elements in the order they were added, the container first.
    var elements: [EngineElement] = []
    /// The same entries by their element: a touch's element and a removed one are found at
    /// once, not by walking a scene that may hold thousands.
    var entries: [ObjectIdentifier: EngineElement] = [:]
    /// How many elements were ever attached: each one's place in publication order.
    var attached = 0
    var published = PublishedStreams()
    var router = ContactRouter()
    let attract: AttractMode
    /// The screen's own gestures, when the configuration names any.
    var screenWatch: ScreenWatch?
    /// The fingers' predictions (ElementPrediction.swift); nil without prediction.
    let predictions: ScenePrediction?
    /// The fingers on the screen, the stream they are reported on (``reportContacts(on:)``),
    /// whether anyone follows them, and whether they changed since the last report.
    var screenContacts = ScreenContacts()
    var contactsStream: StreamID?
    var followsContacts = false
    private var contactsChanged = false
    let activity = ActivityTracker()
    /// What the links to the published properties tell of their writes.
    let writes = PublishedWrites()

    /// The report being filled; lent to the caller when it is handed out, and emptied when
    /// the next one starts (``startReport(at:)``).
    var report = FrameReport()
    /// Where the report is in its life (``ReportPhase``).
    var reportPhase = ReportPhase.handedOut
    /// Buffers kept between frames: one element's recognizer events, the screen's.
    private var recognized: [RecognizedGesture] = []
    var screenEvents: [ScreenGestureEvent] = []
    private var broken: [EngineElement] = []

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
        self.attract = AttractMode(idleAfter: idleAfter, now: clock.now)
        writes.engine = self
        attach(scene.container, interactions: [])
    }

    /// The links that outlive the engine tell no one from now on (``PublishedWrites``).
    deinit {
        writes.engine = nil
    }

    // MARK: Frames

    /// Processes one device's frame at its timestamp: what it changed, in order. `deviceName`
    /// is what `screen.contacts` says the fingers are on.
    @discardableResult
    public func process(_ frame: TouchFrame, device: Int = 0, deviceName: String = "") -> FrameReport {
        if isLocked { return processLocked(frame, device: device) }
        // The contacts a lock took do nothing until they lift, after the lock too: a cloth
        // still down as it ends.
        var frame = frame
        if router.hasLockedOut { frame.contacts.removeAll { router.isLockedOut($0, device: device, locked: false) } }
        beginProcessing(at: frame.time)
        clock.perform(at: frame.time) {
            if let screenWatch {
                screenWatch.take(frame, device: device, into: &screenEvents)
                reportScreenGestures()
            }
            var touched = false
            for contact in frame.contacts {
                let (finger, heard, forApps) = router.route(contact, device: device, hit: hitElement)
                report.contacts.append(ReportedContact(device: device, finger: finger, contact: contact, predicted: nil, forApps: forApps))
                guard let (element, heard) = heard else { continue }
                element.contacts.append(heard)
                touched = true
            }
            if !frame.contacts.isEmpty { attract.touched(at: frame.time) }
            guard touched else { return }
            for element in elements where !element.contacts.isEmpty {
                // The element's buffer is lent to the frame and taken back after it, and the
                // recognizers are updated where they live: copies would allocate every frame.
                var own = TouchFrame(time: frame.time, contacts: [])
                swap(&own.contacts, &element.contacts)
                deliver(own, to: element)
                swap(&own.contacts, &element.contacts)
                element.contacts.removeAll(keepingCapacity: true)
            }
        }
        if let predictions {
            predictions.take(frame, device: device)
            for index in report.contacts.indices.suffix(frame.contacts.count) {
                report.contacts[index].predicted = predictions.move(ContactKey(device: device, trackingID: report.contacts[index].contact.trackingID))?.then
            }
        }
        if followsContacts, screenContacts.update(with: report.contacts.suffix(frame.contacts.count), device: deviceName) {
            contactsChanged = true
        }
        return endReport(at: frame.time)
    }

    /// Does what is due by `time` (a screen gesture's long press held still, predictions
    /// lapsing, attract mode), and reports it with whatever changed since the last report
    /// (a command from a client, an element removed).
    public func tick(at time: Double) -> FrameReport {
        beginProcessing(at: time)
        endLock(by: time)
        if let predictions, predictions.lapse(by: time) {
            report.predictionsLapsed = true
            if followsContacts, screenContacts.lapsePredictions() { contactsChanged = true }
        }
        if let screenWatch, let due = screenWatch.nextDeadline, due <= time {
            screenWatch.advance(to: time, into: &screenEvents)
            reportScreenGestures()
        }
        runAttractMode(to: time)
        return endReport(at: time)
    }

    /// Does what attract mode has due by `time` (turns `screen.idle` true, sends elements
    /// home) and nothing else, and reports it: for offline runs (``Simulation``), which fire
    /// attract mode's deadlines alone. Calling it early, or with a finger down, does nothing.
    @discardableResult
    public func advanceIdle(to time: Double) -> FrameReport {
        beginProcessing(at: time)
        runAttractMode(to: time)
        return endReport(at: time)
    }

    /// When the engine next has something to do without a frame: attract mode's deadline,
    /// a screen gesture's (a long press held still, on a panel that sends nothing then), or
    /// the predictions' lapse. Whoever drives the engine calls ``tick(at:)`` then.
    public var nextDeadline: Double? {
        [nextIdleDeadline, screenWatch?.nextDeadline, predictions?.lapse, lockedUntil].compactMap { $0 }.min()
    }

    /// When attract mode next has something to do (`screen.idle` turns true, an element goes
    /// home), on the clock's time; nil while a finger is down or when nothing is left until
    /// the next touch.
    public var nextIdleDeadline: Double? { attract.nextDeadline(anyDown: router.isAnyDown) }

    private func runAttractMode(to time: Double) {
        guard !router.isAnyDown else { return }
        clock.perform(at: time) { attract.advance(to: time) }
    }

    /// The element a contact landing at `point` is on (the container, the screen, when on
    /// no other), if the engine runs it.
    private func hitElement(_ point: Point) -> EngineElement? {
        entries[ObjectIdentifier(scene.hitTest(point))]
    }

    /// Runs an element's recognizers on its contacts of one frame, and tells its interactions
    /// and its gesture streams what they recognized.
    func deliver(_ frame: TouchFrame, to element: EngineElement) {
        if element.recognizers == nil {
            element.recognizers = EngineElement.Recognizers(GestureSet(element.element.recognizers, thresholds: thresholds))
        }
        recognized.removeAll(keepingCapacity: true)
        element.recognizers!.gestures.update(frame, into: &recognized)
        for event in recognized {
            element.element.gestures.send(event)
            if let stream = element.gestureStreams[event.kind.allCasesIndex] {
                report.events.append(.gesture(stream: stream, name: published.catalog.name(of: stream), element: element.element.id, event))
            }
        }
        element.element.gestures.touches.send(frame)
    }

    /// The screen's gestures of this frame, into the report; one that takes the fingers takes
    /// every contact down (their elements hear them cancelled at their next frame).
    func reportScreenGestures() {
        guard let screenWatch, !screenEvents.isEmpty else { return }
        for event in screenEvents {
            if event.takesFingers {
                router.takenByScreen(screenWatch.down)
                for key in screenWatch.down { if let finger = router.finger(of: key) { report.takenFingers.append(finger) } }
            }
            report.events.append(.screenGesture(stream: screenWatch.stream, name: published.catalog.name(of: screenWatch.stream), event))
        }
        screenEvents.removeAll(keepingCapacity: true)
    }

    /// Watches the whole screen for `patterns` (`[[screen_gesture]]`), published on
    /// `screen.gesture`.
    public func watch(_ patterns: [ScreenGesturePattern]) {
        guard !patterns.isEmpty else { return }
        let gestures = ScreenGestures(patterns, screen: scene.container.size.value, thresholds: thresholds)
        screenWatch = ScreenWatch(gestures, stream: published.register("screen.gesture", kind: .gesture))
    }

    // MARK: Locked

    /// Whether touches are locked out (``lock(at:until:)``), published as `screen.locked`.
    public var isLocked: Bool { locked.value }
    let locked = ReactiveProperty(false)
    /// When the lock ends by itself; nil while unlocked.
    public internal(set) var lockedUntil: Double?

    /// Locks touches out until `until`, for cleaning the screen: every gesture in progress,
    /// on an element or on the screen, ends `cancelled`, the fingers leave `screen.contacts`
    /// and every output (``FrameReport/lockedFingers``), and until the lock ends (at `until`,
    /// by ``tick(at:)``, or by ``unlock(at:)``) touches move nothing, are recognized as
    /// nothing, and are reported nowhere. A finger down across the end stays so until it
    /// lifts: a cloth still on the glass does nothing. Locking again moves the end.
    public func lock(at time: Double, until: Double) -> FrameReport {
        beginProcessing(at: time)
        lockedUntil = until
        if !isLocked {
            locked.value = true
            for element in elements { cancelTouches(of: element, at: time) }
            if let screenWatch {
                screenWatch.forgetFingers(at: time, into: &screenEvents)
                reportScreenGestures()
            }
            router.lockOut(into: &report.lockedFingers)
            if followsContacts, !screenContacts.contacts.isEmpty {
                screenContacts.reset()
                contactsChanged = true
            }
        }
        return endReport(at: time)
    }

    /// Lets touches in again; reports what changed meanwhile.
    public func unlock(at time: Double) -> FrameReport {
        lockedUntil = time
        return tick(at: time)
    }

    /// Ends the lock if it is due by `time`.
    private func endLock(by time: Double) {
        guard let lockedUntil, lockedUntil <= time else { return }
        self.lockedUntil = nil
        locked.value = false
    }

    /// A frame while locked: its contacts are only followed, locked out until they lift
    /// (``ContactRouter/isLockedOut(_:device:locked:)``), so that the screen is not idle under
    /// them and they do nothing after the lock either. No element, screen gesture or output
    /// hears of them.
    private func processLocked(_ frame: TouchFrame, device: Int) -> FrameReport {
        beginProcessing(at: frame.time)
        for contact in frame.contacts { _ = router.isLockedOut(contact, device: device, locked: true) }
        return endReport(at: frame.time)
    }

    // MARK: Reports

    /// Starts filling a report at `time`, unless one is being filled: what happened since the
    /// last report (an element removed) is kept for the next.
    func startReport(at time: Double) {
        if reportPhase == .handedOut {
            report.clear(time: time)
            reportPhase = .gathering
        }
        report.time = time
    }

    /// Starts a call that hands out a report at its end (``endReport(at:)``).
    private func beginProcessing(at time: Double) {
        startReport(at: time)
        reportPhase = .processing
    }

    /// Collects the values that changed into the report and hands it out. Values that change
    /// meanwhile (predictions set, broken values put back) are marked for the next report.
    private func endReport(at time: Double) -> FrameReport {
        reportPhase = .processing
        updatePredictions()
        published.collect(at: time, into: &report, broken: &broken)
        repairBroken()
        reportContacts(at: time)
        reportPhase = .handedOut
        // Moved out, not copied: a copy retained and released each of the report's seven
        // arrays every frame. Whoever publishes it gives it back (``takeBack(_:)``), and the
        // next report is filled in its storage.
        var handedOut = FrameReport()
        swap(&handedOut, &report)
        return handedOut
    }

    /// Gives back a report this engine handed out, once it is published, for the next report
    /// to be filled in its storage: a frame then allocates nothing for its report. A report
    /// not given back costs the next one its arrays' storage, nothing more. Ignored when the
    /// next report has begun meanwhile (a value changed after the report was handed out).
    public func takeBack(_ handedOut: inout FrameReport) {
        guard reportPhase == .handedOut else { return }
        swap(&report, &handedOut)
    }

    /// The fingers, after the elements' values, if they changed since the last report. The
    /// value shares the fingers' storage: the report is emptied before they change again.
    private func reportContacts(at time: Double) {
        guard contactsChanged, let contactsStream else { return }
        contactsChanged = false
        report.values.append(PublishedUpdate(id: contactsStream, stream: published.catalog.name(of: contactsStream),
                                             value: .contacts(screenContacts.contacts), time: time))
    }

    /// Runs the clock's frame at `time` (springs moving) and reports what it changed. Whoever
    /// runs the engine makes this the clock's ``FrameClock/frameRunner``, so that a spring's
    /// frame returns its report as an input frame does.
    public func runClockFrame(at time: Double) -> FrameReport {
        beginProcessing(at: time)
        clock.deliverFrame(at: time)
        return endReport(at: time)
    }

    /// A property changed: collected at the end of the call being processed (a frame of
    /// either kind); outside one (a command), by the next ``tick(at:)``.
    func valueChanged(_ stream: StreamID) {
        published.markChanged(stream)
    }

    /// Sets each element's predicted values (``ScenePrediction``) before values are collected:
    /// a spring's step carries them along too.
    private func updatePredictions() {
        guard let predictions else { return }
        router.collectFingers()
        for element in elements {
            defer { element.fingers.removeAll(keepingCapacity: true) }
            guard let predicted = element.element.predicted else { continue }
            predictions.update(predicted, of: element.element, fingers: element.fingers, minimumSpan: thresholds.minimumSpan.pixels)
        }
    }

    /// Puts back the elements found not finite, saying so once.
    private func repairBroken() {
        guard !broken.isEmpty else { return }
        for element in broken {
            let names = published.restoreFiniteValues(element)
            guard !names.isEmpty else { continue }
            if !element.nonFiniteReported { report.repairs.append(RepairedElement(element: element.element.id, streams: names)) }
            element.nonFiniteReported = true
        }
        broken.removeAll(keepingCapacity: true)
    }

    /// A finger's predicted move, unless predictions lapsed.
    func predictedMove(_ key: ContactKey) -> FingerMove? { predictions?.move(key) }
}

/// Where the engine's report is in its life: every report-giving call (an input frame, a
/// tick, a clock frame) ends by handing it out, and it is emptied only when the next one
/// starts, so that what happens between calls (an element removed, the touches let go of)
/// is in the next report.
///
/// | phase | event | next |
/// |---|---|---|
/// | handedOut | something to report outside a call (``MotionEngine/startReport(at:)``) | gathering, the report emptied |
/// | handedOut, gathering | a call begins | processing (emptied if it was handed out) |
/// | processing | the call ends | handedOut |
enum ReportPhase {
    /// The last report is the caller's until the next call into the engine.
    case handedOut
    /// Filling the next report between calls.
    case gathering
    /// Inside a call that hands out a report: values that change are collected at its end.
    case processing
}

/// Hears the writes to an engine's published properties (``WriteListener``) and marks their
/// streams changed; of its elements' `enabled` flags (``FlagListener``), also lets go of the
/// fingers on an element turned off. Apart from the engine, so that each of the thousands of
/// links holds a plain reference rather than one to the engine of its own. Its reference to
/// the engine is not counted, and the engine's deinit clears it: a property may outlive its
/// engine (an element a test keeps, a spring still moving when an engine is dropped), and then
/// tells no one. Not weak: a weak reference gives the engine a side table, and every retain
/// and release of an object with one takes the runtime's slow path, a few a frame.
final class PublishedWrites: WriteListener, FlagListener {
    unowned(unsafe) var engine: MotionEngine?

    /// A property was written: its stream, whose number is the tag it is followed with
    /// (``MotionEngine/attach(_:interactions:)``), changed.
    func propertyWritten(_ tag: Int) { engine?.valueChanged(StreamID(index: tag)) }

    /// An element's `enabled` was written: its stream changed, and an element turned off
    /// lets go of the fingers holding it.
    func flagWritten(_ tag: Int, to value: Bool) {
        guard let engine else { return }
        let stream = StreamID(index: tag)
        engine.valueChanged(stream)
        if !value, let element = engine.published.publisher(of: stream) { engine.disabled(element) }
    }
}
