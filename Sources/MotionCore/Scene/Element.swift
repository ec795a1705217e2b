import Foundation

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
    private let aggregate = ReactiveProperty(MotionState.atRest)
    private var active: Set<Int> = []
    private var nextID = 0

    /// Creates a tracker at rest.
    public init() {}

    /// `.active` while any tracked stream is.
    public var state: ReadOnlyProperty<MotionState> { aggregate.readOnly }

    /// The stream, passing its values through and counting its state.
    public func tracked<Value>(_ stream: MotionObservable<Value>) -> MotionObservable<Value> {
        let id = nextID
        nextID += 1
        return MotionObservable { observer in
            let subscription = stream.subscribe(next: observer.next, state: { [weak self] state in
                self?.set(id, state)
                observer.state(state)
            })
            return { [weak self] in
                subscription.unsubscribe()
                self?.set(id, .atRest)
            }
        }
    }

    private func set(_ id: Int, _ state: MotionState) {
        if state == .active { active.insert(id) } else { active.remove(id) }
        let aggregate: MotionState = active.isEmpty ? .atRest : .active
        if self.aggregate.value != aggregate { self.aggregate.value = aggregate }
    }
}

/// A property the daemon publishes, with how to read its value.
public struct PublishedProperty {
    /// The current value.
    public let read: () -> PublishedValue
    /// Subscribes to changes (the current value is delivered at once, as properties do).
    public let subscribe: (@escaping () -> Void) -> Subscription

    /// Publishes a point property.
    public static func point(_ property: ReactiveProperty<Point>) -> PublishedProperty {
        PublishedProperty(read: { .point(property.value) }, subscribe: { notify in property.subscribe { _ in notify() } })
    }

    /// Publishes a number property.
    public static func number(_ property: ReactiveProperty<Double>) -> PublishedProperty {
        PublishedProperty(read: { .number(property.value) }, subscribe: { notify in property.subscribe { _ in notify() } })
    }

    /// Publishes a text property (a state, a direction, a snap point's name).
    public static func text<Value>(_ property: ReadOnlyProperty<Value>, _ describe: @escaping (Value) -> String) -> PublishedProperty {
        PublishedProperty(read: { .text(describe(property.value)) }, subscribe: { notify in property.subscribe { _ in notify() } })
    }

    /// Publishes a size property.
    public static func size(_ property: ReactiveProperty<Size>) -> PublishedProperty {
        PublishedProperty(read: { .size(property.value) }, subscribe: { notify in property.subscribe { _ in notify() } })
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
}
