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
    private var lifecycle = GestureLifecycle(minimumTouches: 2)
    private var tracker = ContactTracker()
    private var scale = 1.0
    private var spanChange = 0.0
    private var velocity: VelocityEstimator<Double>

    /// Creates a pinch recognizer.
    public init(thresholds: GestureThresholds = GestureThresholds()) {
        self.thresholds = thresholds
        self.velocity = VelocityEstimator(window: thresholds.velocityWindow, stoppedAfter: thresholds.stoppedAfter)
    }

    /// Whether a pinch is in progress.
    public var isInProgress: Bool { lifecycle.isInProgress }

    /// Takes the next frame of the contacts assigned to this recognizer.
    public mutating func update(_ frame: TouchFrame) -> PinchEvent? {
        let touchesBefore = tracker.active.count
        tracker.update(frame)
        let minimum = thresholds.distance(thresholds.minimumSpan, thresholds.minimumSpanPixels, physical: tracker.isPhysical)
        var changed = false
        if tracker.persistent.count >= 2, let motion = tracker.persistentMotion(in: .physical),
           motion.spanBefore >= minimum && motion.spanAfter >= minimum && motion.spanBefore != motion.spanAfter {
            scale *= motion.spanAfter / motion.spanBefore
            spanChange += motion.spanAfter - motion.spanBefore
            changed = true
        }
        velocity.add(scale, at: frame.time)
        let slop = thresholds.distance(thresholds.pinchSlop, thresholds.pinchSlopPixels, physical: tracker.isPhysical)
        let state = lifecycle.step(
            down: tracker.active.count, cancelled: tracker.cancelled,
            beyondThreshold: Swift.abs(spanChange) > slop, changed: changed)
        defer { if tracker.active.isEmpty { reset() } }
        return state.map { event($0, at: frame.time, touches: tracker.active.isEmpty ? touchesBefore : tracker.active.count) }
    }

    /// Stops the pinch for the rest of the touch sequence.
    public mutating func block(at time: Double) -> PinchEvent? {
        lifecycle.block().map { event($0, at: time, touches: tracker.active.count) }
    }

    private func event(_ state: RecognitionState, at time: Double, touches: Int) -> PinchEvent {
        let rate = state == .failed || state == .cancelled ? 0 : velocity.velocity(at: time)
        return PinchEvent(state: state, time: time, touches: touches, scale: scale, scaleVelocity: rate, centroid: tracker.centroid)
    }

    private mutating func reset() {
        scale = 1
        spanChange = 0
        velocity.reset()
        tracker.reset()
    }
}
