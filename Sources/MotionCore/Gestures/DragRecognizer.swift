/// Recognizes a drag (pan) of one or more fingers: the translation of their centroid.
///
/// The translation is cumulative from the first finger down, so the element under the
/// finger follows it exactly, and includes the slop travelled before the drag began. When
/// a finger lands or lifts, the drag is re-based on the new set of fingers (only fingers
/// present in two consecutive frames move it), so the translation never jumps.
public struct DragRecognizer: Sendable {
    /// When the drag begins.
    public var thresholds: GestureThresholds
    private var gesture: ContinuousGesture<Point>
    private var translation = Point.zero
    private var travel = Point.zero

    /// Creates a drag recognizer for `minimumTouches` or more fingers.
    public init(thresholds: GestureThresholds = GestureThresholds(), minimumTouches: Int = 1) {
        self.thresholds = thresholds
        self.gesture = ContinuousGesture(minimumTouches: minimumTouches, thresholds: thresholds)
    }

    /// Whether a drag is in progress.
    public var isInProgress: Bool { gesture.isInProgress }

    /// Takes the next frame of the contacts assigned to this recognizer.
    public mutating func update(_ frame: TouchFrame) -> DragEvent? {
        gesture.take(frame)
        let tracker = gesture.tracker
        let movement = tracker.meanMovement
        translation = translation + movement.position
        travel = travel + movement.physical
        let slop = thresholds.dragSlop[tracker.unit]
        let report = gesture.report(
            translation, at: frame.time, beyondThreshold: travel.length > slop,
            changed: movement.position != .zero || tracker.landed > 0 || tracker.lifted > 0)
        let emitted = report.map(event)
        if gesture.isOver {
            translation = .zero
            travel = .zero
        }
        return emitted
    }

    /// Stops the drag for the rest of the touch sequence: another gesture won, or its
    /// contacts are gone. Emits `cancelled` (or `failed`) when there is something to stop.
    public mutating func block(at time: Double) -> DragEvent? {
        gesture.block(at: time).map(event)
    }

    private func event(_ report: ContinuousGesture<Point>.Report) -> DragEvent {
        DragEvent(state: report.state, time: report.time, touches: report.touches, translation: translation,
                  translationVelocity: report.velocity, centroid: report.centroid)
    }
}
