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

/// A gesture event in a frame: an element's recognizer, or the screen's own
/// (`[[screen_gesture]]`, on `screen.gesture`).
public enum FrameEvent: Hashable, Sendable {
    /// An element's recognizer: the element's gesture stream (`card.drag`), the element, the event.
    case gesture(stream: StreamID, name: String, element: String, RecognizedGesture)
    /// A screen gesture, on `screen.gesture`.
    case screenGesture(stream: StreamID, name: String, ScreenGestureEvent)

    /// The stream it is published on.
    public var stream: StreamID {
        switch self {
        case .gesture(let stream, _, _, _), .screenGesture(let stream, _, _): return stream
        }
    }
}

/// A contact of an input frame, as the engine saw it: which finger it is, and where it will
/// be when the engine predicts (`[screen] prediction`).
public struct ReportedContact: Hashable, Sendable {
    /// The device it is on (the number its frames came with).
    public var device: Int
    /// The finger's number: the same from its landing to its lift, on every device, never
    /// given twice while the process runs. What `screen.contacts` publishes and TUIO's
    /// cursors follow, so that every consumer names a finger alike.
    public var finger: Int
    /// The contact, in screen pixels.
    public var contact: TouchContact
    /// Where it will be one horizon ahead; nil without prediction, or once predictions lapsed.
    public var predicted: Point?
    /// Whether the apps reading a virtual touchscreen may have it: false while it is on an
    /// element that claims its touches (``Element/claimsTouches``), and once a screen gesture
    /// took it.
    public var forApps: Bool

    /// Finger number `finger` on `device`, predicted to be at `predicted`.
    public init(device: Int, finger: Int, contact: TouchContact, predicted: Point?, forApps: Bool = true) {
        self.device = device
        self.finger = finger
        self.contact = contact
        self.predicted = predicted
        self.forApps = forApps
    }
}

/// Everything one frame changed, in the order a client is to hear it: what
/// ``MotionEngine/process(_:device:)``, ``MotionEngine/tick(at:)`` and
/// ``MotionEngine/runClockFrame(at:)`` (springs moving) return.
///
/// The order is the protocol's (docs/protocol.md, "A frame's lines"): first the values the
/// frame changed, then the gesture events it began, ended, cancelled or recognized, in the
/// order they happened. A UI reading line by line so sees an element's last values before
/// the `ended` that concludes its gesture, and the values a `began` moved with it.
///
/// The engine lends its storage: a report is valid until the next call into the engine, and
/// one that is let go by then costs no allocation (the engine reuses the arrays).
public struct FrameReport: Sendable {
    /// The frame's time, in seconds on the monotonic clock.
    public internal(set) var time: Double = 0
    /// The values that changed, each stream at most once, in publication order (elements in
    /// the order they were added, each element's properties in a fixed order), then the
    /// fingers (`screen.contacts`) if the engine reports them and they changed.
    public internal(set) var values: [PublishedUpdate] = []
    /// Gesture events, in the order they happened.
    public internal(set) var events: [FrameEvent] = []
    /// The input frame's contacts (none for a clock frame or a timer), with their predictions.
    public internal(set) var contacts: [ReportedContact] = []
    /// Whether the fingers' predictions lapsed (no frame came in time): whoever publishes
    /// predicted contacts publishes them where the fingers are.
    public internal(set) var predictionsLapsed = false
    /// Streams that went with an element in this report; their numbers will name other
    /// streams. Whoever keeps state per ``StreamID`` forgets it after the report's lines.
    public internal(set) var removedStreams: [StreamID] = []
    /// Elements whose values stopped being finite and were put back to their last finite
    /// ones (which the limits on what comes from outside should make impossible): for the
    /// log, said once per element until its values are finite again.
    public internal(set) var repairs: [RepairedElement] = []
    /// Fingers a screen gesture took in this report (``ReportedContact/finger``): those the
    /// apps were shown are to be cancelled at once, not at the finger's next frame, which a
    /// finger held still may never send.
    public internal(set) var takenFingers: [Int] = []
    /// Fingers a lock took in this report (``MotionEngine/lock(at:until:)``), in order: every
    /// output that shows fingers drops them at once (the apps see them cancelled, TUIO's
    /// receivers see them leave), and hears of them no more, not even as they lift.
    public internal(set) var lockedFingers: [Int] = []

    /// Whether values of elements changed, not only the fingers: what a keeper of the scene
    /// follows.
    public var elementValuesChanged: Bool {
        guard case .contacts? = values.last?.value else { return !values.isEmpty }
        return values.count > 1
    }

    /// Whether the report has nothing to publish.
    public var isEmpty: Bool {
        values.isEmpty && events.isEmpty && contacts.isEmpty && !predictionsLapsed && removedStreams.isEmpty && repairs.isEmpty && takenFingers.isEmpty
            && lockedFingers.isEmpty
    }

    /// Empties the report for the next frame, keeping its storage.
    mutating func clear(time: Double) {
        self.time = time
        values.removeAll(keepingCapacity: true)
        events.removeAll(keepingCapacity: true)
        contacts.removeAll(keepingCapacity: true)
        removedStreams.removeAll(keepingCapacity: true)
        repairs.removeAll(keepingCapacity: true)
        takenFingers.removeAll(keepingCapacity: true)
        lockedFingers.removeAll(keepingCapacity: true)
        predictionsLapsed = false
    }
}

/// An element put back to its last finite values (``FrameReport/repairs``).
public struct RepairedElement: Sendable, Equatable {
    /// The element's id.
    public var element: String
    /// The streams that stopped being finite.
    public var streams: [String]
}
