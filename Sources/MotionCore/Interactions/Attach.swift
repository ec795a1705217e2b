/// Pulls a position toward a destination with a spring (the Material Motion `Attach`).
///
/// Moving the destination while the spring moves retargets it from the current position
/// and velocity: no jump.
public final class Attach: Interaction, ReportsMotionState {
    /// Whether the interaction is moving its target.
    public let activity = ActivityTracker()
    /// The destination the spring pulls toward.
    public let destination: ReactiveProperty<Point>
    /// A velocity to apply once, in pixels per second.
    public let initialVelocity: ReactiveProperty<Point>
    /// The spring's tension, friction and mass.
    public let springConfiguration: ReactiveProperty<SpringConfiguration>
    /// The position the spring writes to.
    public let position: ReactiveProperty<Point>
    /// The positions the spring emits, once added (it runs on the runtime's clock).
    public private(set) var positionStream: MotionObservable<Point> = MotionObservable { _ in {} }
    private let spring: Spring<Point>

    /// Creates an attach pulling `position` toward `destination`; add it to the element
    /// whose state should show the motion.
    public init(position: ReactiveProperty<Point>, to destination: ReactiveProperty<Point>, configuration: SpringConfiguration = .standard) {
        self.position = position
        self.destination = destination
        self.spring = Spring(to: destination, initialValue: position, threshold: 1, configuration: configuration)
        self.initialVelocity = spring.initialVelocity
        self.springConfiguration = spring.configuration
    }

    public func add(to element: Element, withRuntime runtime: MotionRuntime) {
        element.publish("destination", .writablePoint(destination))
        element.publish("spring", .spring(springConfiguration))
        positionStream = springSource(spring, clock: runtime.clock)
        runtime.connect(tracked(on: element, positionStream), to: position)
    }
}
