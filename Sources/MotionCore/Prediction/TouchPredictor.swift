/// Predicts where a contact will be a little ahead of its last sample, so that what is drawn
/// from it reaches the glass where the finger is by then (docs/prediction.md).
///
/// One predictor follows one contact, from its first sample to its last: each sample is
/// added as it comes, in time order, and ``predict(_:)`` may be asked after any of them.
/// Positions are in whatever units the caller uses (the daemon's screen pixels), times in
/// seconds. Predictors are values that allocate nothing per sample, so the daemon keeps one
/// per finger at no cost.
public protocol TouchPredictor {
    /// The predictor's name, as `motionctl predict --predictor` and `--json` say it.
    static var name: String { get }
    /// A predictor that has seen nothing.
    init()
    /// The contact was at `position` at `time` (seconds, after the previous sample's).
    mutating func add(_ position: Point, at time: Double)
    /// Where the contact will be `horizon` seconds after its last sample. Before any sample
    /// there is nothing to predict from: the origin.
    func predict(_ horizon: Double) -> Point
}

/// The predictors motiond has, by name: the default and the baselines it is measured
/// against.
public enum PredictorKind: String, CaseIterable, Sendable {
    /// No prediction: the last position, which lags the finger by the horizon.
    case none
    /// The last two samples' velocity, extrapolated.
    case linear
    /// A least-squares line through the last 40 ms.
    case leastSquares = "least_squares"
    /// Chromium's Kalman predictor (`ui/base/prediction`).
    case kalman
    /// motiond's: a damped velocity (``DampedPredictor``).
    case `default`

    /// Runs `body` with the predictor type of this kind.
    public func withType<Result>(_ body: (any TouchPredictor.Type) -> Result) -> Result {
        switch self {
        case .none: return body(NoPrediction.self)
        case .linear: return body(LinearPredictor.self)
        case .leastSquares: return body(LeastSquaresPredictor.self)
        case .kalman: return body(KalmanPredictor.self)
        case .default: return body(DampedPredictor.self)
        }
    }
}

/// No prediction: the contact is where it was last seen.
public struct NoPrediction: TouchPredictor {
    public static let name = "none"
    private var last = Point(x: 0, y: 0)
    public init() {}
    public mutating func add(_ position: Point, at time: Double) { last = position }
    public func predict(_ horizon: Double) -> Point { last }
}

/// The velocity of the last two samples, extrapolated: exact for a finger moving at a
/// constant velocity, and the noisiest of all on a real panel, which reports in whole units
/// at an uneven rate.
public struct LinearPredictor: TouchPredictor {
    public static let name = "linear"
    private var previous: (time: Double, position: Point)?
    private var last: (time: Double, position: Point)?
    public init() {}

    public mutating func add(_ position: Point, at time: Double) {
        if let last, time - last.time > PredictorLimits.resetGap {
            previous = nil
        } else {
            previous = last
        }
        last = (time, position)
    }

    public func predict(_ horizon: Double) -> Point {
        guard let last else { return Point(x: 0, y: 0) }
        guard let previous, last.time > previous.time else { return last.position }
        let scale = horizon / (last.time - previous.time)
        return Point(x: last.position.x + (last.position.x - previous.position.x) * scale,
                     y: last.position.y + (last.position.y - previous.position.y) * scale)
    }
}

/// Limits every predictor keeps.
public enum PredictorLimits {
    /// A gap longer than this between two samples starts the prediction afresh: the finger
    /// may have stopped (many panels send nothing while nothing changes), so what came
    /// before says nothing about now. Chromium uses 20 ms on 120 Hz input; panels of 60 Hz
    /// and less, common on kiosks, report every 14 to 17 ms and sometimes skip one.
    public static let resetGap = 0.04
}
