import Glibc

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
    private var gesture: ContinuousGesture<Double>
    private var rotation = 0.0

    /// Creates a rotation recognizer.
    public init(thresholds: GestureThresholds = GestureThresholds()) {
        self.thresholds = thresholds
        self.gesture = ContinuousGesture(minimumTouches: 2, thresholds: thresholds)
    }

    /// Whether a rotation is in progress.
    public var isInProgress: Bool { gesture.isInProgress }

    /// Takes the next frame of the contacts assigned to this recognizer.
    public mutating func update(_ frame: TouchFrame) -> RotationEvent? {
        gesture.take(frame)
        var changed = false
        if gesture.tracker.persistent.count >= 2, let step = frameRotation() {
            rotation += step
            changed = step != 0
        }
        let emitted = gesture.report(rotation, at: frame.time, beyondThreshold: Swift.abs(rotation) > thresholds.rotationSlop, changed: changed).map(event)
        if gesture.isOver { rotation = 0 }
        return emitted
    }

    /// Stops the rotation for the rest of the touch sequence.
    public mutating func block(at time: Double) -> RotationEvent? {
        gesture.block(at: time).map(event)
    }

    /// The persistent fingers' turn in this frame, or nil when they are too close to measure.
    private func frameRotation() -> Double? {
        let tracker = gesture.tracker
        let minimum = thresholds.minimumSpan[tracker.unit]
        guard let motion = tracker.persistentMotion(in: .physical), motion.spanBefore >= minimum, motion.spanAfter >= minimum else { return nil }
        return motion.rotation
    }

    private func event(_ report: ContinuousGesture<Double>.Report) -> RotationEvent {
        RotationEvent(state: report.state, time: report.time, touches: report.touches, rotation: rotation,
                      rotationVelocity: report.velocity, centroid: report.centroid)
    }
}
