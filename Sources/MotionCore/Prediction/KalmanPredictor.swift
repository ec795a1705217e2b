/// Chromium's Kalman predictor (`ui/base/prediction/kalman_predictor.cc`), as the baseline
/// motiond's own is measured against: per axis, a Kalman filter of position, velocity and
/// acceleration, in pixels and milliseconds as Chromium keeps them.
///
/// - The time step is the mean interval between samples since the last reset.
/// - Process noise is 0.01 times g gᵀ, g = (dt²/2, dt, 1); measurement noise is 1.0.
/// - A gap over 20 ms starts afresh; nothing is predicted before 4 samples.
/// - The prediction starts from the last sample as measured: p + v t + a t²/2, with t at
///   most 25 ms.
public struct KalmanPredictor: TouchPredictor {
    public static let name = "kalman"
    static let processNoise = 0.01
    static let measurementNoise = 1.0
    static let resetGap = 0.020
    static let stableSamples = 4
    static let maximumHorizon = 0.025

    private var x = KalmanAxis(), y = KalmanAxis()
    private var last: (time: Double, position: Point)?
    private var intervals = 0.0, intervalCount = 0

    public init() {}

    public mutating func add(_ position: Point, at time: Double) {
        if let last {
            let interval = (time - last.time) * 1000
            if interval > Self.resetGap * 1000 {
                self = KalmanPredictor()
            } else {
                intervals += interval
                intervalCount += 1
            }
        }
        let dt = intervalCount > 0 ? intervals / Double(intervalCount) : 8
        x.update(position.x, dt: dt)
        y.update(position.y, dt: dt)
        last = (time, position)
    }

    public func predict(_ horizon: Double) -> Point {
        guard let last else { return Point(x: 0, y: 0) }
        guard x.updates >= Self.stableSamples else { return last.position }
        let t = min(horizon, Self.maximumHorizon) * 1000
        return Point(x: last.position.x + x.velocity * t + 0.5 * x.acceleration * t * t,
                     y: last.position.y + y.velocity * t + 0.5 * y.acceleration * t * t)
    }
}

/// One axis of ``KalmanPredictor``: state (position, velocity, acceleration) per millisecond,
/// its covariance, and the Joseph-form update Chromium uses. 3 × 3 matrices are three SIMD
/// rows, so an update allocates nothing.
struct KalmanAxis {
    private typealias Row = SIMD3<Double>
    private typealias Matrix = (Row, Row, Row)
    private var state = Row(0, 0, 0)
    private var p: Matrix = (Row(1, 0, 0), Row(0, 1, 0), Row(0, 0, 1))
    private(set) var updates = 0

    var velocity: Double { state[1] }
    var acceleration: Double { state[2] }

    private static func multiply(_ a: Matrix, _ b: Matrix) -> Matrix {
        func row(_ r: Row) -> Row { r[0] * b.0 + r[1] * b.1 + r[2] * b.2 }
        return (row(a.0), row(a.1), row(a.2))
    }

    /// `a` times `b` transposed.
    private static func multiplyTransposed(_ a: Matrix, _ b: Matrix) -> Matrix {
        func row(_ r: Row) -> Row { Row((r * b.0).sum(), (r * b.1).sum(), (r * b.2).sum()) }
        return (row(a.0), row(a.1), row(a.2))
    }

    mutating func update(_ measured: Double, dt: Double) {
        defer { updates += 1 }
        guard updates > 0 else {
            state = Row(measured, 0, 0)
            return
        }
        // Predict: x = F x, P = F P Fᵀ + Q, Q = σp g gᵀ.
        let f: Matrix = (Row(1, dt, 0.5 * dt * dt), Row(0, 1, dt), Row(0, 0, 1))
        let g = Row(0.5 * dt * dt, dt, 1)
        state = Row((f.0 * state).sum(), (f.1 * state).sum(), (f.2 * state).sum())
        var predicted = Self.multiplyTransposed(Self.multiply(f, p), f)
        let q = KalmanPredictor.processNoise * g
        predicted = (predicted.0 + q[0] * g, predicted.1 + q[1] * g, predicted.2 + q[2] * g)
        // Update with the measured position.
        let innovation = measured - state[0]
        let s = predicted.0[0] + KalmanPredictor.measurementNoise
        let gain = Row(predicted.0[0], predicted.1[0], predicted.2[0]) / s
        state += gain * innovation
        // Joseph form: P = (I - K H) P (I - K H)ᵀ + K R Kᵀ.
        let ikh: Matrix = (Row(1 - gain[0], 0, 0), Row(-gain[1], 1, 0), Row(-gain[2], 0, 1))
        let joseph = Self.multiplyTransposed(Self.multiply(ikh, predicted), ikh)
        let r = KalmanPredictor.measurementNoise * gain
        p = (joseph.0 + r[0] * gain, joseph.1 + r[1] * gain, joseph.2 + r[2] * gain)
    }
}
