/// Drag an element with its fingers: position = position at `.began` + drag translation.
///
/// With ``bounds``, the element resists being pulled outside them (rubber-banding, maximum
/// stretch ``maxLength``) and springs back inside when released.
public final class Draggable: Interaction, ReportsMotionState {
    /// Whether the interaction is moving its target.
    public let activity = ActivityTracker()
    /// The rectangle the element's centre is kept in, or nil for none.
    public let bounds: ReactiveProperty<Rect?>
    /// The most the rubber band stretches, in pixels.
    public let maxLength: ReactiveProperty<Double>
    /// The spring that brings the element back inside ``bounds`` after a release.
    public let configuration: ReactiveProperty<SpringConfiguration>

    /// Creates a draggable, optionally kept in `bounds`.
    public init(bounds: Rect? = nil, maxLength: Double = 48, configuration: SpringConfiguration = .standard) {
        self.bounds = ReactiveProperty(bounds)
        self.maxLength = ReactiveProperty(maxLength)
        self.configuration = ReactiveProperty(configuration)
    }

    public func add(to element: Element, withRuntime runtime: MotionRuntime) {
        element.needs(.drag)
        let drag = tracked(on: element, element.gestures.drag.stream)
        let bounds = self.bounds, maxLength = self.maxLength
        let positions = drag.translated(from: element.position).map { position in
            bounds.value.map { rubberBand(position, outsideOf: $0, maxLength: maxLength.value) } ?? position
        }
        runtime.connect(positions, to: element.position)

        // Back inside the bounds on release: a spring to the nearest point inside them.
        let destination = ReactiveProperty(element.position.value)
        let spring = Spring(to: destination, initialValue: element.position, threshold: 0.5)
        runtime.connect(configuration.stream, to: spring.configuration)
        runtime.toggle(spring, inReactionTo: element.gestures.drag.stream)
        runtime.observe(element.gestures.drag.stream.whenRecognitionState(is: .ended, .cancelled), next: { _ in
            destination.value = Self.clamp(element.position.value, to: bounds.value)
        })
        runtime.connect(tracked(on: element, springSource(spring, clock: runtime.clock)), to: element.position)
    }

    static func clamp(_ point: Point, to bounds: Rect?) -> Point {
        guard let bounds else { return point }
        return Point(x: Swift.min(Swift.max(point.x, bounds.minX), bounds.maxX), y: Swift.min(Swift.max(point.y, bounds.minY), bounds.maxY))
    }
}
