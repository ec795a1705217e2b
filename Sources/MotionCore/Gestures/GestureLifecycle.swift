/// The life of a continuous gesture (drag, pinch, rotation) over one touch sequence, from
/// the first finger down to the last finger up, as an explicit state machine.
///
/// | phase        | input                                   | next         | emits       |
/// |--------------|-----------------------------------------|--------------|-------------|
/// | possible     | enough fingers and past the threshold   | in progress  | `began`     |
/// | possible     | a contact cancelled                     | blocked      | `failed`    |
/// | possible     | blocked by another gesture              | blocked      | `failed`    |
/// | possible     | the last finger lifts                   | possible     | `failed`    |
/// | in progress  | the value changes                       | in progress  | `changed`   |
/// | in progress  | the last finger lifts                   | possible     | `ended`     |
/// | in progress  | a contact cancelled, a device lost      | blocked      | `cancelled` |
/// | in progress  | blocked by another gesture              | blocked      | `cancelled` |
/// | blocked      | the last finger lifts                   | possible     | —           |
///
/// `failed` is only emitted when the gesture had its minimum number of fingers: a pinch
/// does not fail on every one-finger tap. Fewer fingers than the minimum while in progress
/// (one finger of a pinch lifted) keep the gesture in progress, its value held, until the
/// last finger lifts or the finger comes back.
struct GestureLifecycle: Sendable {
    enum Phase: Sendable { case possible, inProgress, blocked }

    private(set) var phase = Phase.possible
    private var hadMinimum = false
    let minimumTouches: Int

    init(minimumTouches: Int) {
        self.minimumTouches = minimumTouches
    }

    /// Advances with one frame's facts; returns the state to emit, if any.
    mutating func step(down: Int, cancelled: Bool, beyondThreshold: Bool, changed: Bool) -> RecognitionState? {
        if down >= minimumTouches { hadMinimum = true }
        defer {
            if down == 0 {
                phase = .possible
                hadMinimum = false
            }
        }
        switch phase {
        case .possible:
            if cancelled {
                phase = .blocked
                return hadMinimum ? .failed : nil
            }
            if down >= minimumTouches && beyondThreshold {
                phase = .inProgress
                return .began
            }
            return down == 0 && hadMinimum ? .failed : nil
        case .inProgress:
            if cancelled {
                phase = .blocked
                return .cancelled
            }
            if down == 0 { return .ended }
            return changed ? .changed : nil
        case .blocked:
            return nil
        }
    }

    /// Stops the gesture for the rest of the touch sequence (another gesture won, or the
    /// device went away); returns the state to emit, if any.
    mutating func block() -> RecognitionState? {
        defer { phase = .blocked }
        switch phase {
        case .possible: return hadMinimum ? .failed : nil
        case .inProgress: return .cancelled
        case .blocked: return nil
        }
    }

    /// Whether the gesture is in progress.
    var isInProgress: Bool { phase == .inProgress }
}

/// What drag, pinch and rotation share: their contacts, their lifecycle, and the velocity
/// of their value. Each frame, a recognizer ``take(_:)``s it, measures its value from
/// ``tracker``, then ``report(_:at:beyondThreshold:changed:)``s the value; what comes back is
/// the event to emit, if any. The rules live here once: at the end, an event counts the
/// fingers that were down before the lift; a failed or cancelled gesture reports no
/// velocity; everything is forgotten when the last finger lifts.
struct ContinuousGesture<Value: MotionVector & Sendable>: Sendable {
    /// An event's common part.
    struct Report {
        var state: RecognitionState
        var time: Double
        var touches: Int
        var velocity: Value
        var centroid: Point
    }

    /// The contacts, to measure from.
    private(set) var tracker = ContactTracker()
    private var lifecycle: GestureLifecycle
    private var velocity: VelocityEstimator<Value>
    private var touchesBefore = 0

    init(minimumTouches: Int, thresholds: GestureThresholds) {
        lifecycle = GestureLifecycle(minimumTouches: minimumTouches)
        velocity = VelocityEstimator(window: thresholds.velocityWindow, stoppedAfter: thresholds.stoppedAfter)
    }

    /// Whether the gesture is in progress.
    var isInProgress: Bool { lifecycle.isInProgress }

    /// Whether no finger is down: the recognizer forgets its value.
    var isOver: Bool { tracker.active.isEmpty }

    /// Takes the next frame's contacts.
    mutating func take(_ frame: TouchFrame) {
        touchesBefore = tracker.active.count
        tracker.update(frame)
    }

    /// Records the value measured from this frame and advances the lifecycle.
    mutating func report(_ value: Value, at time: Double, beyondThreshold: Bool, changed: Bool) -> Report? {
        velocity.add(value, at: time)
        let state = lifecycle.step(down: tracker.active.count, cancelled: tracker.cancelled, beyondThreshold: beyondThreshold, changed: changed)
        // Not `state.map { self.report(...) }`: a closure over a mutating method's self
        // captures a copy of the whole gesture (its velocity samples and tracked fingers), and
        // this runs every frame.
        var report: Report?
        if let state { report = self.report(state, at: time, touches: isOver ? touchesBefore : tracker.active.count) }
        if isOver {
            velocity.reset()
            tracker.reset()
        }
        return report
    }

    /// Stops the gesture for the rest of the touch sequence; see ``GestureLifecycle/block()``.
    mutating func block(at time: Double) -> Report? {
        lifecycle.block().map { report($0, at: time, touches: tracker.active.count) }
    }

    private func report(_ state: RecognitionState, at time: Double, touches: Int) -> Report {
        let rate = state == .failed || state == .cancelled ? .zero : velocity.velocity(at: time)
        return Report(state: state, time: time, touches: touches, velocity: rate, centroid: tracker.centroid)
    }
}
