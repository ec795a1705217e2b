/// Estimates the rate of change of a gesture's value (a translation, a scale, an angle)
/// from its recent samples.
///
/// The estimate is the slope of a least-squares line through the samples of the last
/// ``window`` seconds, a time window rather than a count so that it does not depend on the
/// device's report rate. The window ends at the last sample that *changed*: a lift frame
/// that repeats the last position 8 ms later is not a stop. But when the value has not
/// changed for ``stoppedAfter`` seconds, the velocity is zero: a finger held still before
/// lifting tosses nothing. Samples live in a fixed ring, so estimating allocates nothing.
public struct VelocityEstimator<Value: MotionVector & Sendable>: Sendable {
    /// The stretch of samples the line is fitted to, in seconds.
    public var window: Double
    /// How long without change counts as stopped, in seconds.
    public var stoppedAfter: Double

    private var times: [Double]
    private var values: [Value]
    private var count = 0
    private var newest = -1
    private var lastChange: Double?

    /// Creates an estimator keeping up to `capacity` samples (enough for the window at
    /// 1 kHz by default).
    public init(window: Double = 0.1, stoppedAfter: Double = 0.05, capacity: Int = 128) {
        self.window = window
        self.stoppedAfter = stoppedAfter
        self.times = Array(repeating: 0, count: capacity)
        self.values = Array(repeating: .zero, count: capacity)
    }

    /// Forgets every sample.
    public mutating func reset() {
        count = 0
        newest = -1
        lastChange = nil
    }

    /// Adds the value at `time`; times must not decrease.
    public mutating func add(_ value: Value, at time: Double) {
        if count == 0 || values[newest] != value { lastChange = time }
        newest = (newest + 1) % times.count
        times[newest] = time
        values[newest] = value
        count = Swift.min(count + 1, times.count)
    }

    /// The velocity at `now`, in the value's units per second.
    public func velocity(at now: Double) -> Value {
        guard count >= 2, let end = lastChange, now - end <= stoppedAfter else { return .zero }
        // Least squares over the samples in [end − window, end], with times relative to `end`
        // so the sums stay well conditioned.
        var n = 0.0, sumT = 0.0, sumTT = 0.0
        var sumV = Value.zero, sumTV = Value.zero
        var index = newest
        for _ in 0..<count {
            let t = times[index] - end
            if t <= 0 && t >= -window - 1e-9 {
                n += 1
                sumT += t
                sumTT += t * t
                sumV = sumV + values[index]
                sumTV = sumTV + values[index] * t
            }
            if t < -window { break }
            index = (index - 1 + times.count) % times.count
        }
        let denominator = n * sumTT - sumT * sumT
        guard n >= 2, denominator > 1e-12 else { return .zero }
        return (sumTV * n - sumV * sumT) * (1 / denominator)
    }
}
