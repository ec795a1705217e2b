/// A stream that something pushes values into and any number of observers receive: how
/// the engine hands each element's gesture events and touch frames to its interactions.
///
/// Until its first value, subscriptions to it (and to the operators drawn from it) wait,
/// unconnected (``QuietSource``): most elements of a large scene are never touched.
public final class EventStream<Value>: QuietSource {
    private var observers: [(id: Int, observer: MotionObserver<Value>)] = []
    private var nextID = 0
    private let stateOf: (Value) -> MotionState?
    /// The subscriptions waiting for the first value, in the order they were made.
    private var held: [Subscription] = []
    private var hasSent = false

    /// Creates a stream; `stateOf` says which values change the motion state (a gesture's
    /// `.began` makes it active, its end brings it to rest).
    public init(state stateOf: @escaping (Value) -> MotionState? = { _ in nil }) {
        self.stateOf = stateOf
        link.stream = self
    }

    deinit {
        link.stream = nil
    }

    /// The stream to subscribe to.
    public var stream: MotionObservable<Value> { MotionObservable(from: self, connectObserver) }

    /// How the subscriptions reach the stream (``EventStreamLink``).
    private let link = EventStreamLink<Value>()

    /// What ``stream`` runs for each subscription: made once, where each `stream` made it anew,
    /// and an interaction draws several streams from one event stream. Not holding the stream:
    /// a held subscription keeps this function, and the stream keeps the held subscription.
    private lazy var connectObserver: MotionObservable<Value>.Connect = { [link] observer in
        guard let stream = link.stream else { return {} }
        let id = stream.nextID
        stream.nextID += 1
        stream.observers.append((id, observer))
        return { [link] in link.stream?.observers.removeAll { $0.id == id } }
    }

    /// Runs `connect` when the first value comes, in its turn among the subscriptions waiting
    /// for it and before the value is delivered (at once if one came already); cancelling
    /// the subscription returned before then means it never runs. For an interaction to make
    /// its chains of operators at the gesture's first event: even unconnected, making them is
    /// most of what an untouched element's interactions cost.
    func onFirstValue(_ connect: @escaping () -> Void) -> Subscription {
        let deferred = DeferredConnection(running: connect)
        if hasSent { deferred.connectNow() } else { hold(deferred) }
        return deferred
    }

    var isQuiet: Bool { !hasSent }

    /// How many subscriptions wait for the first value (for tests).
    var waiting: Int { held.count }

    func hold(_ subscription: Subscription) {
        // Those unsubscribed while waiting are dropped now and then, so that a stream never
        // sent on (the screen's taps, say) does not collect every element's that came and went.
        if held.count >= 16, held.count & (held.count - 1) == 0 { held.removeAll { $0.isUnsubscribed } }
        // Room for a few at once: an interaction's chains hold three or four.
        if held.isEmpty { held.reserveCapacity(4) }
        held.append(subscription)
    }

    /// Delivers `value`, then the state change it implies, to every observer.
    public func send(_ value: Value) {
        if !hasSent {
            hasSent = true
            let held = self.held
            self.held = []
            for subscription in held { subscription.connectNow() }
        }
        let current = observers
        for entry in current { entry.observer.next(value) }
        if let state = stateOf(value) {
            for entry in current { entry.observer.state(state) }
        }
    }
}

/// An event stream as its subscriptions reach it, which may outlive it: its reference is not
/// counted, and the stream's deinit clears it, so that they then reach nothing. Not a weak
/// reference: that gives the stream a side table, and every retain and release of an object
/// with one takes the runtime's slow path (the engine sends on an element's streams every
/// frame).
private final class EventStreamLink<Value> {
    unowned(unsafe) var stream: EventStream<Value>?
}

/// A subscription that runs a function when connected (``EventStream/onFirstValue(_:)``).
private final class DeferredConnection: Subscription {
    private var connect: (() -> Void)?

    init(running connect: @escaping () -> Void) {
        self.connect = connect
        super.init()
    }

    override func connectNow() {
        guard let connect else { return }
        self.connect = nil
        connect()
    }

    override func cancel() { connect = nil }
}

/// The motion state a gesture event implies: active from `.began`, at rest once it ends.
func gestureMotionState(_ state: RecognitionState) -> MotionState? {
    switch state {
    case .began: return .active
    case .ended, .cancelled, .failed: return .atRest
    case .possible, .changed, .recognized: return nil
    }
}

/// The streams of one element's recognizers, fed by the engine. Each is made when first
/// asked for: an element uses one or two of them, and a scene may hold thousands of elements.
public final class GestureStreams {
    public private(set) lazy var drag = EventStream<DragEvent>(state: { gestureMotionState($0.state) })
    public private(set) lazy var pinch = EventStream<PinchEvent>(state: { gestureMotionState($0.state) })
    public private(set) lazy var rotation = EventStream<RotationEvent>(state: { gestureMotionState($0.state) })
    public private(set) lazy var tap = EventStream<TapEvent>()
    public private(set) lazy var longPress = EventStream<LongPressEvent>(state: { gestureMotionState($0.state) })
    public private(set) lazy var swipe = EventStream<SwipeEvent>()
    public private(set) lazy var edgeSwipe = EventStream<EdgeSwipeEvent>()
    /// The element's own touch frames: its contacts only, with the engine's contact ids.
    public private(set) lazy var touches = EventStream<TouchFrame>()

    init() {}

    /// Delivers a recognizer's event to its stream.
    public func send(_ gesture: RecognizedGesture) {
        switch gesture {
        case .drag(let event): drag.send(event)
        case .pinch(let event): pinch.send(event)
        case .rotate(let event): rotation.send(event)
        case .tap(let event): tap.send(event)
        case .longPress(let event): longPress.send(event)
        case .swipe(let event): swipe.send(event)
        case .edgeSwipe(let event): edgeSwipe.send(event)
        }
    }
}
