/// Recognizes a drag (pan) of one or more fingers: the translation of their centroid.
///
/// The translation is cumulative from the first finger down, so the element under the
/// finger follows it exactly, and includes the slop travelled before the drag began. When
/// a finger lands or lifts, the drag is re-based on the new set of fingers (only fingers
/// present in two consecutive frames move it), so the translation never jumps.
public struct DragRecognizer: Sendable {
    /// When the drag begins.
    public var thresholds: GestureThresholds
    private var lifecycle: GestureLifecycle
    private var tracker = ContactTracker()
    private var translation = Point.zero
    private var travel = Point.zero
    private var velocity: VelocityEstimator<Point>

    /// Creates a drag recognizer for `minimumTouches` or more fingers.
    public init(thresholds: GestureThresholds = GestureThresholds(), minimumTouches: Int = 1) {
        self.thresholds = thresholds
        self.lifecycle = GestureLifecycle(minimumTouches: minimumTouches)
        self.velocity = VelocityEstimator(window: thresholds.velocityWindow, stoppedAfter: thresholds.stoppedAfter)
    }

    /// Whether a drag is in progress.
    public var isInProgress: Bool { lifecycle.isInProgress }

    /// Takes the next frame of the contacts assigned to this recognizer.
    public mutating func update(_ frame: TouchFrame) -> DragEvent? {
        let touchesBefore = tracker.active.count
        tracker.update(frame)
        let movement = tracker.meanMovement
        translation = translation + movement.position
        travel = travel + movement.physical
        velocity.add(translation, at: frame.time)
        let slop = thresholds.distance(thresholds.dragSlop, thresholds.dragSlopPixels, physical: tracker.isPhysical)
        let state = lifecycle.step(
            down: tracker.active.count, cancelled: tracker.cancelled,
            beyondThreshold: travel.length > slop,
            changed: movement.position != .zero || tracker.landed > 0 || tracker.lifted > 0)
        defer { if tracker.active.isEmpty { reset() } }
        return state.map { event($0, at: frame.time, touches: tracker.active.isEmpty ? touchesBefore : tracker.active.count) }
    }

    /// Stops the drag for the rest of the touch sequence: another gesture won, or its
    /// contacts are gone. Emits `cancelled` (or `failed`) when there is something to stop.
    public mutating func block(at time: Double) -> DragEvent? {
        lifecycle.block().map { event($0, at: time, touches: tracker.active.count) }
    }

    private func event(_ state: RecognitionState, at time: Double, touches: Int) -> DragEvent {
        let moving = state == .failed || state == .cancelled ? .zero : velocity.velocity(at: time)
        return DragEvent(state: state, time: time, touches: touches, translation: translation, translationVelocity: moving, centroid: tracker.centroid)
    }

    private mutating func reset() {
        translation = .zero
        travel = .zero
        velocity.reset()
        tracker.reset()
    }
}
