/// Recognizes a pinch of two or more fingers: the scale of their spread.
///
/// The spread (span) is the mean distance of the fingers from their centroid, in physical
/// units. The scale is cumulative from touch-down, the product of each frame's span ratio
/// over the fingers present in both frames, so it is absolute, never a delta, and does not
/// jump when a finger lands late or lifts early. Below the minimum span the fingers are too
/// close to measure, and the scale holds.
public struct PinchRecognizer: Sendable {
    /// When the pinch begins.
    public var thresholds: GestureThresholds
    private var gesture: ContinuousGesture<Double>
    private var scale = 1.0
    private var spanChange = 0.0

    /// Creates a pinch recognizer.
    public init(thresholds: GestureThresholds = GestureThresholds()) {
        self.thresholds = thresholds
        self.gesture = ContinuousGesture(minimumTouches: 2, thresholds: thresholds)
    }

    /// Whether a pinch is in progress.
    public var isInProgress: Bool { gesture.isInProgress }

    /// Takes the next frame of the contacts assigned to this recognizer.
    public mutating func update(_ frame: TouchFrame) -> PinchEvent? {
        gesture.take(frame)
        let tracker = gesture.tracker
        let minimum = thresholds.minimumSpan[tracker.unit]
        var changed = false
        if tracker.persistent.count >= 2, let motion = tracker.persistentMotion(in: .physical),
           motion.spanBefore >= minimum && motion.spanAfter >= minimum && motion.spanBefore != motion.spanAfter {
            scale *= motion.spanAfter / motion.spanBefore
            spanChange += motion.spanAfter - motion.spanBefore
            changed = true
        }
        let slop = thresholds.pinchSlop[tracker.unit]
        let emitted = gesture.report(scale, at: frame.time, beyondThreshold: Swift.abs(spanChange) > slop, changed: changed).map(event)
        if gesture.isOver {
            scale = 1
            spanChange = 0
        }
        return emitted
    }

    /// Stops the pinch for the rest of the touch sequence.
    public mutating func block(at time: Double) -> PinchEvent? {
        gesture.block(at: time).map(event)
    }

    private func event(_ report: ContinuousGesture<Double>.Report) -> PinchEvent {
        PinchEvent(state: report.state, time: report.time, touches: report.touches, scale: scale,
                   scaleVelocity: report.velocity, centroid: report.centroid)
    }
}
