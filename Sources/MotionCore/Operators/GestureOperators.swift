// Operators on streams of gesture events: turning a recognizer's cumulative translation,
// rotation or scale into an element's absolute position, rotation or scale.

/// An event from a gesture recognizer: at least its recognition state.
public protocol GestureEvent {
    /// The recognizer's state when the event was emitted.
    var state: RecognitionState { get }
}

/// An event carrying a cumulative translation since `.began`, in pixels.
public protocol TranslationGestureEvent: GestureEvent {
    /// Translation since the gesture began, in pixels; never a delta.
    var translation: Point { get }
    /// Velocity of the translation, in pixels per second.
    var translationVelocity: Point { get }
}

/// An event carrying a cumulative rotation since `.began`, in radians.
public protocol RotationGestureEvent: GestureEvent {
    /// Rotation since the gesture began, in radians, positive clockwise on screen.
    var rotation: Double { get }
    /// Angular velocity, in radians per second.
    var rotationVelocity: Double { get }
}

/// An event carrying a cumulative scale factor since `.began`.
public protocol ScaleGestureEvent: GestureEvent {
    /// Scale since the gesture began (1 at `.began`); never a delta.
    var scale: Double { get }
    /// Rate of change of the scale, per second.
    var scaleVelocity: Double { get }
}

extension MotionObservable where Value: GestureEvent {
    /// Passes on only the events whose state is one of `states`.
    public func whenRecognitionState(is states: RecognitionState...) -> MotionObservable<Value> {
        // A list, not a set: one to three states, and no table to make for each filter.
        return filter { states.contains($0.state) }
    }

    /// Emits `combine(start, event)` while the gesture is in progress and once more at
    /// `.ended` (a lift frame can carry the finger's last movement), where `start` is the
    /// property's value read at `.began`.
    ///
    /// The start is cleared when the gesture ends, so a stream joined mid-gesture emits
    /// nothing until the next `.began` rather than jumping. A cancelled gesture emits nothing
    /// more: its last value stands.
    public func _fromStart<Start, Output>(
        of property: ReactiveProperty<Start>,
        _ combine: @escaping (Start, Value) -> Output
    ) -> MotionObservable<Output> {
        _nextOperator {
            var start: Start?
            return { event, next in
                switch event.state {
                case .began:
                    let value = property.value
                    start = value
                    next(combine(value, event))
                case .changed:
                    if let start { next(combine(start, event)) }
                case .ended:
                    if let start { next(combine(start, event)) }
                    start = nil
                default:
                    start = nil
                }
            }
        }
    }
}

extension MotionObservable where Value: TranslationGestureEvent {
    /// The property's value at `.began` plus the gesture's translation.
    public func translated(from position: ReactiveProperty<Point>) -> MotionObservable<Point> {
        _fromStart(of: position) { start, event in start + event.translation }
    }

    /// Same as ``translated(from:)``; the name used by Material Motion's `translationAddedTo`.
    public func translationAdded(to position: ReactiveProperty<Point>) -> MotionObservable<Point> {
        translated(from: position)
    }

    /// The translation velocity, emitted once when the gesture ends.
    public func velocity() -> MotionObservable<Point> {
        whenRecognitionState(is: .ended).map { $0.translationVelocity }
    }
}

extension MotionObservable where Value: RotationGestureEvent {
    /// The property's value at `.began` plus the gesture's rotation.
    public func rotated(from rotation: ReactiveProperty<Double>) -> MotionObservable<Double> {
        _fromStart(of: rotation) { start, event in start + event.rotation }
    }

    /// The angular velocity, emitted once when the gesture ends.
    public func velocity() -> MotionObservable<Double> {
        whenRecognitionState(is: .ended).map { $0.rotationVelocity }
    }
}

extension MotionObservable where Value: ScaleGestureEvent {
    /// The property's value at `.began` multiplied by the gesture's scale.
    public func scaled(from scale: ReactiveProperty<Double>) -> MotionObservable<Double> {
        _fromStart(of: scale) { start, event in start * event.scale }
    }

    /// The scale velocity, emitted once when the gesture ends.
    public func velocity() -> MotionObservable<Double> {
        whenRecognitionState(is: .ended).map { $0.scaleVelocity }
    }
}
