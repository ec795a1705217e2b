/// Rotate an element with two fingers: rotation = rotation at `.began` + gesture rotation
/// (the Material Motion `Rotatable`).
public final class Rotatable: Interaction, ReportsMotionState {
    /// Whether the interaction is moving its target.
    public let activity = ActivityTracker()
    /// The property the value stream writes to, once added (the element's rotation).
    public private(set) var property: ReactiveProperty<Double>?
    /// The rotations written, once added.
    public private(set) var valueStream: MotionObservable<Double> = MotionObservable { _ in {} }
    /// The angular velocity when the gesture ends, in radians per second.
    public private(set) var velocityStream: MotionObservable<Double> = MotionObservable { _ in {} }
    /// The recognizer's events: the element's own, or those given at creation.
    public private(set) var gestureRecognizer: EventStream<RotationEvent>?

    private let providedGestures: EventStream<RotationEvent>?

    /// Creates a rotatable driven by the element's own rotation recognizer, or by
    /// `gestureRecognizer` (another element's, say, to turn a dial from anywhere on a panel).
    public init(gestureRecognizer: EventStream<RotationEvent>? = nil) {
        self.providedGestures = gestureRecognizer
    }

    public func add(to element: Element, withRuntime runtime: MotionRuntime) {
        if providedGestures == nil { element.needs(.rotate) }
        let gestures = providedGestures ?? element.gestures.rotation
        gestureRecognizer = gestures
        property = element.rotation
        valueStream = gestures.stream.rotated(from: element.rotation)
        velocityStream = gestures.stream.velocity()
        runtime.connect(tracked(on: element, valueStream), to: element.rotation)
    }
}

/// Scale an element with a pinch: scale = scale at `.began` × gesture scale (the Material
/// Motion `Scalable`), optionally kept between a minimum and a maximum: past them the
/// element resists (rubber-banding) and springs back when released.
public final class Scalable: Interaction, ReportsMotionState {
    /// Whether the interaction is moving its target.
    public let activity = ActivityTracker()
    /// The smallest and largest scale, or nil for no limit.
    public let minimum: ReactiveProperty<Double?>
    public let maximum: ReactiveProperty<Double?>
    /// How far past a limit the rubber band stretches, in scale units.
    public let maxLength: ReactiveProperty<Double>
    /// The spring back inside the limits.
    public let configuration: ReactiveProperty<SpringConfiguration>
    /// The property the value stream writes to, once added (the element's scale).
    public private(set) var property: ReactiveProperty<Double>?
    /// The scales written, once added.
    public private(set) var valueStream: MotionObservable<Double> = MotionObservable { _ in {} }
    /// The scale velocity when the gesture ends, per second.
    public private(set) var velocityStream: MotionObservable<Double> = MotionObservable { _ in {} }
    /// The recognizer's events.
    public private(set) var gestureRecognizer: EventStream<PinchEvent>?

    private let providedGestures: EventStream<PinchEvent>?

    /// Creates a scalable, optionally limited to `minimum...maximum`.
    public init(
        minimum: Double? = nil, maximum: Double? = nil, maxLength: Double = 0.5,
        configuration: SpringConfiguration = .standard, gestureRecognizer: EventStream<PinchEvent>? = nil
    ) {
        self.minimum = ReactiveProperty(minimum)
        self.maximum = ReactiveProperty(maximum)
        self.maxLength = ReactiveProperty(maxLength)
        self.configuration = ReactiveProperty(configuration)
        self.providedGestures = gestureRecognizer
    }

    public func add(to element: Element, withRuntime runtime: MotionRuntime) {
        if providedGestures == nil { element.needs(.pinch) }
        let gestures = providedGestures ?? element.gestures.pinch
        gestureRecognizer = gestures
        property = element.scale
        let minimum = self.minimum, maximum = self.maximum, maxLength = self.maxLength
        valueStream = gestures.stream.scaled(from: element.scale).map { scale in
            rubberBand(scale, min: minimum.value ?? -.infinity, max: maximum.value ?? .infinity, maxLength: maxLength.value)
        }
        velocityStream = gestures.stream.velocity()
        runtime.connect(tracked(on: element, valueStream), to: element.scale)

        // Back inside the limits on release.
        let destination = ReactiveProperty(element.scale.value)
        let spring = Spring(to: destination, initialValue: element.scale, threshold: 0.001, configuration: configuration.value)
        runtime.connect(configuration.stream, to: spring.configuration)
        runtime.toggle(spring, inReactionTo: gestures.stream)
        runtime.observe(gestures.stream.whenRecognitionState(is: .ended, .cancelled), next: { _ in
            destination.value = Swift.min(Swift.max(element.scale.value, minimum.value ?? -.infinity), maximum.value ?? .infinity)
        })
        runtime.connect(tracked(on: element, springSource(spring, clock: runtime.clock)), to: element.scale)
    }
}
