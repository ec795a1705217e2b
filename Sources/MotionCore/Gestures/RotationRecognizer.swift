import Foundation

/// Recognizes a rotation of two or more fingers about their centroid.
///
/// Each frame, every finger present in both frames turns by some angle about the centroid
/// (measured in physical units, so a panel with different X and Y resolutions measures true
/// angles); the frame's rotation is their weighted mean (``ContactTracker/persistentMotion(in:)``). Summing these small steps
/// makes the rotation continuous past ±π and right when fingers swap sides, where comparing
/// absolute angles, or sorting fingers by position, goes wrong. Positive is clockwise on
/// screen, where y grows downward.
public struct RotationRecognizer: Sendable {
    /// When the rotation begins.
    public var thresholds: GestureThresholds
    private var lifecycle = GestureLifecycle(minimumTouches: 2)
    private var tracker = ContactTracker()
    private var rotation = 0.0
    private var velocity: VelocityEstimator<Double>

    /// Creates a rotation recognizer.
    public init(thresholds: GestureThresholds = GestureThresholds()) {
        self.thresholds = thresholds
        self.velocity = VelocityEstimator(window: thresholds.velocityWindow, stoppedAfter: thresholds.stoppedAfter)
    }

    /// Whether a rotation is in progress.
    public var isInProgress: Bool { lifecycle.isInProgress }

    /// Takes the next frame of the contacts assigned to this recognizer.
    public mutating func update(_ frame: TouchFrame) -> RotationEvent? {
        let touchesBefore = tracker.active.count
        tracker.update(frame)
        var changed = false
        if tracker.persistent.count >= 2, let step = frameRotation() {
            rotation += step
            changed = step != 0
        }
        velocity.add(rotation, at: frame.time)
        let state = lifecycle.step(
            down: tracker.active.count, cancelled: tracker.cancelled,
            beyondThreshold: Swift.abs(rotation) > thresholds.rotationSlop, changed: changed)
        defer { if tracker.active.isEmpty { reset() } }
        return state.map { event($0, at: frame.time, touches: tracker.active.isEmpty ? touchesBefore : tracker.active.count) }
    }

    /// Stops the rotation for the rest of the touch sequence.
    public mutating func block(at time: Double) -> RotationEvent? {
        lifecycle.block().map { event($0, at: time, touches: tracker.active.count) }
    }

    /// The persistent fingers' turn in this frame, or nil when they are too close to measure.
    private func frameRotation() -> Double? {
        let minimum = thresholds.distance(thresholds.minimumSpan, thresholds.minimumSpanPixels, physical: tracker.isPhysical)
        guard let motion = tracker.persistentMotion(in: .physical), motion.spanBefore >= minimum, motion.spanAfter >= minimum else { return nil }
        return motion.rotation
    }

    private func event(_ state: RecognitionState, at time: Double, touches: Int) -> RotationEvent {
        let rate = state == .failed || state == .cancelled ? 0 : velocity.velocity(at: time)
        return RotationEvent(state: state, time: time, touches: touches, rotation: rotation, rotationVelocity: rate, centroid: tracker.centroid)
    }

    private mutating func reset() {
        rotation = 0
        velocity.reset()
        tracker.reset()
    }
}
