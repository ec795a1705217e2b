import Glibc

/// Something on screen that touches land on and interactions move: a card, a photo, a
/// panel. The UI draws it; motiond decides where it is.
///
/// Its geometry is a centre, a size, a rotation about the centre (radians, clockwise) and a
/// scale, each a property that interactions write and the daemon publishes as `ID.position`,
/// `ID.size`, `ID.rotation` and `ID.scale`; `ID.state` says whether anything moves it.
public final class Element {
    /// The element's name in the protocol and the configuration.
    public let id: String
    /// The centre, in screen pixels.
    public let position: ReactiveProperty<Point>
    /// The unscaled size, in pixels.
    public let size: ReactiveProperty<Size>
    /// Radians, clockwise, about the centre.
    public let rotation: ReactiveProperty<Double>
    /// 1 is the configured size.
    public let scale: ReactiveProperty<Double>
    /// Higher is on top; ties go to the element added later.
    public let zOrder: ReactiveProperty<Int>
    /// While false, touches pass through the element to what is below it.
    public let enabled = ReactiveProperty(true)
    /// Whether a touch that begins on the element is kept from the apps that read a virtual
    /// touchscreen (``ReportedContact/forApps``). The screen itself claims none.
    public var claimsTouches = true
    /// `.active` while any of the element's interactions moves it.
    public var state: ReadOnlyProperty<MotionState> { activity.state }

    /// The element's recognizers' events and touch frames.
    public let gestures = GestureStreams()
    /// Which gestures the element's interactions listen to; the engine runs only those.
    public internal(set) var recognizers: Set<GestureKind> = []
    /// What the element's interactions report.
    public let activity = ActivityTracker()
    /// Properties an interaction publishes besides the geometry, by stream name suffix.
    public private(set) var extraProperties: [(name: String, property: PublishedProperty)] = []
    /// Its predicted values, when the engine predicts touches and fingers move it.
    var predicted: PredictedElement?

    /// Where touch prediction says the element will be (its position, rotation and scale,
    /// each its own where not predicted); nil when the engine does not predict it.
    public var predictedPose: (position: Point, rotation: Double, scale: Double)? {
        guard let predicted else { return nil }
        return (predicted.position.value, predicted.rotation?.value ?? rotation.value, predicted.scale?.value ?? scale.value)
    }

    /// Creates an element.
    public init(id: String, center: Point, size: Size, rotation: Double = 0, scale: Double = 1, zOrder: Int = 0) {
        self.id = id
        self.position = ReactiveProperty(center)
        self.size = ReactiveProperty(size)
        self.rotation = ReactiveProperty(rotation)
        self.scale = ReactiveProperty(scale)
        self.zOrder = ReactiveProperty(zOrder)
    }

    /// Declares that an interaction needs a recognizer.
    public func needs(_ kinds: GestureKind...) {
        recognizers.formUnion(kinds)
    }

    /// Publishes an interaction's property as `ID.name`.
    public func publish(_ name: String, _ property: PublishedProperty) {
        // Room for a few at once: an interaction publishes two or three, and the list grew
        // one step at each.
        if extraProperties.isEmpty { extraProperties.reserveCapacity(4) }
        extraProperties.append((name, property))
    }

    /// Whether `point` (screen pixels) falls on the element as drawn: inside its bounds
    /// after rotation and scale.
    public func contains(_ point: Point) -> Bool {
        let offset = point - position.value
        let s = scale.value
        guard s > 0 else { return false }
        // Into the element's own frame: undo the rotation and the scale.
        let c = cos(-rotation.value), n = sin(-rotation.value)
        let local = Point(x: (offset.x * c - offset.y * n) / s, y: (offset.x * n + offset.y * c) / s)
        return Swift.abs(local.x) <= size.value.width / 2 && Swift.abs(local.y) <= size.value.height / 2
    }
}

/// Aggregates the motion state of several streams into one property: an element's or an
/// interaction's `state`.
public final class ActivityTracker {
    /// A property only once ``state`` is asked for: the engine follows every element's, but
    /// an interaction's is seldom observed.
    private var aggregate = OnDemandProperty(MotionState.atRest)
    private var active = ActiveIDs()
    private var nextID = 0

    /// Creates a tracker at rest.
    public init() {}

    /// `.active` while any tracked stream is.
    public var state: ReadOnlyProperty<MotionState> { aggregate.property().readOnly }

    /// The stream, passing its values through and counting its state.
    public func tracked<Value>(_ stream: MotionObservable<Value>) -> MotionObservable<Value> {
        let id = nextID
        nextID += 1
        return MotionObservable(from: stream.quietSource) { [self] observer in
            let counted = CountedStream(observer, counting: (self, id))
            counted.connect(to: stream)
            return counted.disconnect
        }
    }

    /// The stream, its state counted here and in `outer` (an interaction's stream, counted for
    /// the interaction and its element): what `outer.tracked(tracked(stream))` does, in one
    /// layer of subscriptions instead of two, in the same order (here first, then `outer`,
    /// then the observer; on disconnecting, the stream first).
    public func tracked<Value>(_ stream: MotionObservable<Value>, alsoIn outer: ActivityTracker) -> MotionObservable<Value> {
        let id = nextID
        nextID += 1
        let outerID = outer.nextID
        outer.nextID += 1
        return MotionObservable(from: stream.quietSource) { [self] observer in
            let counted = CountedStream(observer, counting: (self, id), alsoIn: (outer, outerID))
            counted.connect(to: stream)
            return counted.disconnect
        }
    }

    /// Counts `state` (another tracker's: an element's, in the engine's) for as long as the
    /// subscription lasts, as ``tracked(_:)`` counts a stream's, without a stream's layers
    /// of subscriptions: a scene follows every element's state this way.
    public func follow(_ state: ReadOnlyProperty<MotionState>) -> Subscription {
        let id = nextID
        nextID += 1
        return state.base.subscribe(countingIn: self, as: id)
    }

    /// Counts stream `id` as being in `state`.
    func set(_ id: Int, _ state: MotionState) {
        active.set(id, active: state == .active)
        let aggregate: MotionState = active.isEmpty ? .atRest : .active
        guard self.aggregate.value != aggregate else { return }
        if let observed = self.aggregate.store(aggregate) { observed.value = aggregate }
    }
}

/// One subscription to a tracked stream: passes its values on, and counts its state in one
/// or two trackers (an interaction's and its element's) until disconnected. One object where
/// closures for the state and the disconnection were two, each holding the trackers weakly.
/// The trackers are held: they hold nothing back, so this makes no cycle.
private final class CountedStream<Value> {
    typealias Count = (tracker: ActivityTracker, id: Int)
    private let observer: MotionObserver<Value>
    private let count: Count
    private let outerCount: Count?
    private var upstream: Subscription?

    init(_ observer: MotionObserver<Value>, counting count: Count, alsoIn outerCount: Count? = nil) {
        self.observer = observer
        self.count = count
        self.outerCount = outerCount
    }

    func connect(to stream: MotionObservable<Value>) {
        upstream = stream.subscribe(next: observer.next, state: stateChanged)
    }

    private func stateChanged(_ state: MotionState) {
        count.tracker.set(count.id, state)
        if let outerCount { outerCount.tracker.set(outerCount.id, state) }
        observer.state(state)
    }

    func disconnect() {
        upstream?.unsubscribe()
        count.tracker.set(count.id, .atRest)
        if let outerCount { outerCount.tracker.set(outerCount.id, .atRest) }
    }
}

/// A property the daemon publishes, with how to read its value and, if clients may set
/// it, how to write one.
public struct PublishedProperty {
    /// The current value.
    public let read: () -> PublishedValue
    /// Subscribes to changes (the current value is delivered at once, as properties do).
    public let subscribe: (@escaping () -> Void) -> Subscription
    /// Writes a value, returning why it cannot be written (wrong shape, out of range), or
    /// nil when it was; nil itself for a property clients cannot set.
    public var write: ((PublishedValue) -> String?)?
    /// Follows the later writes for a listener, with a tag (``ReactiveProperty/follow(_:tag:)``):
    /// how the engine follows the property, without the closure and the call at once that
    /// ``subscribe`` takes, for each of the dozen properties of every element of a scene.
    let follow: (WriteListener, Int) -> Subscription

    /// Creates a published property.
    public init(read: @escaping () -> PublishedValue, subscribe: @escaping (@escaping () -> Void) -> Subscription,
                write: ((PublishedValue) -> String?)? = nil) {
        self.read = read
        self.subscribe = subscribe
        self.write = write
        self.follow = { listener, tag in
            // `subscribe` delivers the current value at once: only what follows is a write.
            var isCurrent = true
            return subscribe {
                if isCurrent { isCurrent = false } else { listener.propertyWritten(tag) }
            }
        }
    }

    /// Publishes `property`, read through `read`; each closure holds the property alone,
    /// which costs no allocation.
    init<Value>(_ property: ReactiveProperty<Value>, read: @escaping () -> PublishedValue,
                write: ((PublishedValue) -> String?)? = nil) {
        self.read = read
        self.subscribe = { notify in property.subscribeToWrites(notify) }
        self.write = write
        self.follow = { listener, tag in property.follow(listener, tag: tag) }
    }

    /// Publishes a writable point property.
    public static func writablePoint(_ property: ReactiveProperty<Point>) -> PublishedProperty {
        var published = point(property)
        published.write = { value in
            guard case .point(let point) = value, point.x.isFinite, point.y.isFinite else { return "a position is {\"x\": …, \"y\": …}" }
            property.value = point
            return nil
        }
        return published
    }

    /// Publishes a writable spring configuration.
    public static func spring(_ property: ReactiveProperty<SpringConfiguration>) -> PublishedProperty {
        PublishedProperty(property, read: { .spring(property.value) }, write: { value in
            guard case .spring(let configuration) = value else { return "a spring is {\"tension\": …, \"friction\": …, \"mass\": …}" }
            do { property.value = try configuration.validated() } catch { return "this spring cannot run: \(error)" }
            return nil
        })
    }

    /// Publishes a writable flag.
    public static func flag(_ property: ReactiveProperty<Bool>) -> PublishedProperty {
        PublishedProperty(property, read: { .bool(property.value) }, write: { value in
            guard case .bool(let flag) = value else { return "a flag is true or false" }
            property.value = flag
            return nil
        })
    }

    /// Publishes a flag clients only read (`screen.idle`).
    public static func flag(_ property: ReadOnlyProperty<Bool>) -> PublishedProperty {
        let base = property.base
        return PublishedProperty(base, read: { .bool(base.value) })
    }

    /// Publishes a point property.
    public static func point(_ property: ReactiveProperty<Point>) -> PublishedProperty {
        PublishedProperty(property, read: { .point(property.value) })
    }

    /// Publishes a number property; writable with `range`, the values a client may set.
    public static func number(_ property: ReactiveProperty<Double>, writable range: ClosedRange<Double>? = nil) -> PublishedProperty {
        PublishedProperty(property, read: { .number(property.value) }, write: range.map { range in
            { value in
                guard case .number(let number) = value, number.isFinite else { return "a number" }
                guard range.contains(number) else { return "between \(range.lowerBound) and \(range.upperBound)" }
                property.value = number
                return nil
            }
        })
    }

    /// Publishes a text property (a state, a direction, a snap point's name).
    public static func text<Value>(_ property: ReadOnlyProperty<Value>, _ describe: @escaping (Value) -> String) -> PublishedProperty {
        let base = property.base
        return PublishedProperty(base, read: { .text(describe(base.value)) })
    }

    /// Publishes a size property, which clients may set to positive sizes.
    public static func size(_ property: ReactiveProperty<Size>) -> PublishedProperty {
        PublishedProperty(property, read: { .size(property.value) }, write: { value in
            guard case .size(let size) = value, size.width > 0, size.height > 0, size.width.isFinite, size.height.isFinite else {
                return "a size is {\"width\": …, \"height\": …}, both positive"
            }
            property.value = size
            return nil
        })
    }
}

/// A value the daemon publishes: absolute, in the units of DEVELOPERS.md.
public enum PublishedValue: Hashable, Sendable {
    /// A position, in screen pixels.
    case point(Point)
    /// A size, in pixels.
    case size(Size)
    /// A number: radians, a scale, a velocity…
    case number(Double)
    /// A state or a name.
    case text(String)
    /// A flag.
    case bool(Bool)
    /// A spring's constants.
    case spring(SpringConfiguration)
    /// The fingers on the screen (`screen.contacts`).
    case contacts([ScreenContact])
}

extension PublishedValue {
    /// Whether every number in the value is finite: what the engine publishes always is.
    public var isFinite: Bool {
        switch self {
        case .point(let point): return point.x.isFinite && point.y.isFinite
        case .size(let size): return size.width.isFinite && size.height.isFinite
        case .number(let number): return number.isFinite
        case .spring(let spring): return spring.tension.isFinite && spring.friction.isFinite && spring.mass.isFinite
        // The fingers are published where the devices put them; no element's value is one.
        case .text, .bool, .contacts: return true
        }
    }
}

/// The numbers of the streams that are active, as a tracker counts them (``ActivityTracker``,
/// ``MotionRuntime``): the first 64 as bits, the rest in a set. A tracker numbers its streams
/// from zero and an element's or interaction's has a handful, so its set was a table made
/// the first time a spring moved: thousands of them when a restored scene's springs start.
struct ActiveIDs {
    private var low: UInt64 = 0
    private var high: Set<Int> = []

    /// Whether none is active.
    var isEmpty: Bool { low == 0 && high.isEmpty }

    /// Counts `id` as active or not.
    mutating func set(_ id: Int, active: Bool) {
        if id < 64 {
            let bit = UInt64(1) << UInt64(id)
            if active { low |= bit } else { low &= ~bit }
        } else if active {
            high.insert(id)
        } else {
            high.remove(id)
        }
    }
}
