/// Whether something is currently moving a value.
///
/// Every stream, interaction and spring reports one of these, so that the runtime can
/// tell when the whole scene is at rest and stop waking up for frames.
public enum MotionState: String, Sendable, Hashable, Codable {
    /// Something is changing the value: a finger is down or a spring is moving.
    case active
    /// Nothing will change the value until new input arrives.
    case atRest
}

/// The life cycle of a gesture recognizer, as in UIKit and the Material Motion specs.
///
/// Continuous gestures go `possible → began → changed… → ended` (or `cancelled`, or
/// `failed` before they began); a discrete gesture such as a tap goes
/// `possible → recognized` or `possible → failed`.
public enum RecognitionState: String, Sendable, Hashable, Codable {
    case possible
    case began
    case changed
    case ended
    case cancelled
    case failed
    case recognized

    /// True while a continuous gesture is in progress (`began` or `changed`).
    public var isInProgress: Bool { self == .began || self == .changed }

    /// True for the states that end a gesture: nothing more follows until `possible`.
    public var isFinal: Bool {
        switch self {
        case .ended, .cancelled, .failed, .recognized: return true
        case .possible, .began, .changed: return false
        }
    }
}
