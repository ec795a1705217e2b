/// Drag an element and toss it: when the finger lifts, a spring carries it to a destination,
/// starting with the finger's velocity (the Material Motion `Tossable`).
///
/// The destination is a property: a fixed point, another element's position, or, with
/// ``snapPoints``, the snap point nearest to where the release would carry the element if
/// it coasted and slowed down like a scroll view (position + velocity · 0.499 s, the
/// distance UIKit's normal deceleration rate covers), the behaviour of a picture-in-picture
/// window.
public final class Tossable: Interaction, ReportsMotionState {
    /// Whether the interaction is moving its target.
    public let activity = ActivityTracker()
    /// The spring that carries the element after a release; disabled while it is dragged.
    public let spring: Spring<Point>
    /// Where the spring pulls.
    public let destination: ReactiveProperty<Point>
    /// Named points the destination snaps to on release; empty to keep ``destination``.
    public var snapPoints: ReactiveProperty<[String: Point]> { snapPointsStorage.property() }
    /// The snap point chosen last, published as `ID.snap`.
    public let snapPoint = ReactiveProperty<String?>(nil)
    /// How far a release coasts, in seconds of its velocity.
    public var projection: ReactiveProperty<Double> { projectionStorage.property() }
    /// The element tossed.
    public let element: Element
    /// The positions the interaction writes: the drag, then the spring.
    public private(set) lazy var positionStream: MotionObservable<Point> =
        tracked(on: element, element.gestures.drag.stream).translated(from: element.position)
    /// The release velocity, once per toss, in pixels per second.
    public private(set) lazy var initialVelocityStream: MotionObservable<Point> = element.gestures.drag.stream.velocity()

    /// Properties only once asked for: read at a release, which most elements of a large scene
    /// never see.
    private var snapPointsStorage: OnDemandProperty<[String: Point]>
    private var projectionStorage: OnDemandProperty<Double>

    /// The coasting time of UIKit's normal deceleration rate (0.998 per millisecond):
    /// rate / (1 − rate) milliseconds.
    public static let normalProjection = 0.998 / (1 - 0.998) / 1000

    /// Creates a tossable that tosses `element` toward `destination`, or toward the nearest
    /// of `snapPoints`; add it to the same element.
    public init(
        element: Element,
        destination: ReactiveProperty<Point>,
        snapPoints: [String: Point] = [:],
        configuration: SpringConfiguration = .standard,
        projection: Double = Tossable.normalProjection
    ) {
        self.element = element
        self.destination = destination
        self.snapPointsStorage = OnDemandProperty(snapPoints)
        self.projectionStorage = OnDemandProperty(projection)
        self.spring = Spring(to: destination, initialValue: element.position, threshold: 1, configuration: configuration)
    }

    /// The snap point nearest to where a release at `position` moving at `velocity` coasts.
    public static func nearest(_ points: [String: Point], to position: Point, velocity: Point, projection: Double) -> (name: String, point: Point)? {
        let coasted = position + velocity * projection
        // Sorted by name first, so that equal distances choose the same point every run.
        return points.sorted { $0.key < $1.key }.min { $0.value.distance(to: coasted) < $1.value.distance(to: coasted) }
            .map { ($0.key, $0.value) }
    }

    public func add(to element: Element, withRuntime runtime: MotionRuntime) {
        precondition(element === self.element, "a Tossable is added to the element it tosses")
        element.needs(.drag)
        // The drag's chains are made at its first event, connecting in the order they are
        // made: an element nobody touches never makes them.
        runtime.keep(element.gestures.drag.onFirstValue { [self, weak runtime] in
            if let runtime { connectDrag(withRuntime: runtime) }
        })

        // Before the velocity reaches the spring, choose where it goes.
        if let start = Self.nearest(snapPointsStorage.value, to: element.position.value, velocity: .zero, projection: 0) {
            destination.value = start.point
            snapPoint.value = start.name
        }
        let springs = tracked(on: element, springSource(spring, clock: runtime.clock))
        runtime.connect(springs, to: element.position)
        element.publish("snap", .text(snapPoint.readOnly) { $0 ?? "" })
        element.publish("destination", .writablePoint(destination))
        element.publish("spring", .spring(spring.configuration))
    }

    /// The drag moves the element and holds the spring off; its release tosses the element
    /// toward the destination, or the snap point nearest to where it would coast.
    private func connectDrag(withRuntime runtime: MotionRuntime) {
        let spring = self.spring, element = self.element
        runtime.connect(positionStream, to: element.position)
        runtime.toggle(spring, inReactionTo: element.gestures.drag.stream)
        runtime.connect(initialVelocityStream, next: { [snapPoints, projection, destination, snapPoint] velocity in
            if let snap = Self.nearest(snapPoints.value, to: element.position.value, velocity: velocity, projection: projection.value) {
                snapPoint.value = snap.name
                destination.value = snap.point
            }
            spring.initialVelocity.value = velocity
        })
    }
}
