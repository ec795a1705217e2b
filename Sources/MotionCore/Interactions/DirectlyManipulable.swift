import Glibc

/// Drag, rotate and scale an element at once, as if it were stuck to the fingers.
///
/// Each frame, the fingers present before and after it define a similarity (a translation,
/// a rotation and a scale about their centroid), which is applied to the element: its
/// centre moves as a point pinned under the fingers would, its rotation and scale change by
/// the same amounts. This is the anchor-point adjustment of the Material Motion
/// `DirectlyManipulable`, in closed form: the pivot is always the fingers' centroid, and
/// the position is compensated so that nothing jumps.
///
/// Being direct, it follows the fingers from their first movement, without the slop and the
/// rotation threshold the recognizers use to tell gestures apart: under a rigid two-finger
/// motion the element's points stay under the fingers all the way. A finger landing or
/// lifting moves nothing, because each frame only compares fingers present in both frames.
/// It is measured in screen pixels, where the element is drawn.
public final class DirectlyManipulable: Interaction, ReportsMotionState {
    /// Whether the interaction is moving its target.
    public let activity = ActivityTracker()
    /// Below this spread (mean distance from the centroid, pixels) fingers are too close to
    /// measure a rotation or scale; the element only follows their movement.
    public let minimumSpan: ReactiveProperty<Double>

    /// Creates a direct manipulation.
    public init(minimumSpan: Double = GestureThresholds().minimumSpan.pixels) {
        self.minimumSpan = ReactiveProperty(minimumSpan)
    }

    /// One frame's change of the fingers.
    struct Step: Equatable {
        var before: Point
        var after: Point
        var rotation: Double
        var scale: Double

        /// Where the step takes a point under the fingers: after + R·s·(x − before). An
        /// element's centre is one.
        func carry(_ point: Point) -> Point {
            let offset = point - before
            let c = cos(rotation), n = sin(rotation)
            return after + Point(x: offset.x * c - offset.y * n, y: offset.x * n + offset.y * c) * scale
        }
    }

    public func add(to element: Element, withRuntime runtime: MotionRuntime) {
        element.needs(.drag, .pinch, .rotate)
        let minimumSpan = self.minimumSpan
        let steps = MotionObservable<Step> { observer in
            var tracker = ContactTracker()
            var active = false
            return element.gestures.touches.stream.subscribe(next: { frame in
                tracker.update(frame)
                if !active && !tracker.active.isEmpty {
                    active = true
                    observer.state(.active)
                }
                if let step = Self.step(tracker, minimumSpan: minimumSpan.value) { observer.next(step) }
                if active && tracker.active.isEmpty {
                    active = false
                    tracker.reset()
                    observer.state(.atRest)
                }
            }).unsubscribe
        }
        runtime.connect(tracked(on: element, steps), next: { step in
            element.position.value = step.carry(element.position.value)
            if step.rotation != 0 { element.rotation.value += step.rotation }
            if step.scale != 1 { element.scale.value *= step.scale }
        })
    }

    /// The similarity taking the persistent fingers from before to after the frame, in
    /// screen pixels, or nil when nothing moved.
    static func step(_ tracker: ContactTracker, minimumSpan: Double) -> Step? {
        tracker.persistentMotion(in: .screen).flatMap { step($0, minimumSpan: minimumSpan) }
    }

    /// The similarity of `motion`: its turn and spread only when the fingers are at least
    /// `minimumSpan` apart before and after; nil when nothing moved.
    static func step(_ motion: ContactTracker.Motion, minimumSpan: Double) -> Step? {
        var rotation = 0.0, scale = 1.0
        if let turn = motion.rotation, motion.spanBefore >= minimumSpan && motion.spanAfter >= minimumSpan {
            rotation = turn
            scale = motion.spanAfter / motion.spanBefore
        }
        let step = Step(before: motion.before, after: motion.after, rotation: rotation, scale: scale)
        return step.before == step.after && rotation == 0 && scale == 1 ? nil : step
    }
}
