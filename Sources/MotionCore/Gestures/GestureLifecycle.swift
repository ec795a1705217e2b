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
