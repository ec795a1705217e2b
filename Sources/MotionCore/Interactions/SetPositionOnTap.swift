/// Moves something to where the screen (or another element) is tapped: the element itself,
/// or, for an animated move, the destination of its Attach or Tossable.
public final class SetPositionOnTap: Interaction, ReportsMotionState {
    /// Whether the interaction is moving its target.
    public let activity = ActivityTracker()
    /// Where taps are listened to: usually the scene's container, the whole screen.
    public let taps: EventStream<TapEvent>
    /// The property written; nil for the element's position.
    public let target: ReactiveProperty<Point>?

    /// Creates one that writes taps on `taps` to `target` (or the element's position).
    public init(taps: EventStream<TapEvent>, target: ReactiveProperty<Point>? = nil) {
        self.taps = taps
        self.target = target
    }

    public func add(to element: Element, withRuntime runtime: MotionRuntime) {
        let positions = taps.stream.filter { $0.state == .recognized }.map(\.location)
        runtime.connect(positions, to: target ?? element.position)
    }
}

/// Which way a release points a two-state transition (open or closed, next or previous).
public enum TransitionDirection: String, Hashable, Sendable {
    /// Down or right on screen.
    case forward
    /// Up or left.
    case backward
}

/// Sets a transition's direction from a drag's release velocity: past `+minimumVelocity`
/// along the axis it is forward, past `−minimumVelocity` backward, slower leaves it as it
/// was (the Material Motion `ChangeDirection`). Published as `ID.direction`.
public final class ChangeDirection: Interaction, ReportsMotionState {
    /// Whether the interaction is moving its target.
    public let activity = ActivityTracker()
    /// The axis the velocity is read along.
    public enum Axis: String, Hashable, Sendable { case horizontal, vertical }

    /// The current direction.
    public let direction: ReactiveProperty<TransitionDirection>
    /// The slowest release that changes it, in pixels per second.
    public let minimumVelocity: ReactiveProperty<Double>
    /// Which component of the velocity counts.
    public let axis: Axis

    /// Creates one starting `forward`.
    public init(minimumVelocity: Double = 100, axis: Axis = .vertical, initial: TransitionDirection = .forward) {
        self.direction = ReactiveProperty(initial)
        self.minimumVelocity = ReactiveProperty(minimumVelocity)
        self.axis = axis
    }

    public func add(to element: Element, withRuntime runtime: MotionRuntime) {
        element.needs(.drag)
        let axis = self.axis, minimum = minimumVelocity
        let directions = element.gestures.drag.stream.velocity()
            .map { axis == .vertical ? $0.y : $0.x }
            .filter { Swift.abs($0) >= minimum.value }
            .map { $0 > 0 ? TransitionDirection.forward : .backward }
        runtime.connect(directions, to: direction)
        element.publish("direction", .text(direction.readOnly) { $0.rawValue })
    }
}
