/// motiond's predictor, the default: the contact's velocity now, from a least-squares fit
/// of its last 60 ms, carried on for the horizon and damped where a prediction would do more
/// harm than good (docs/prediction.md).
///
/// - **Velocity**, not acceleration: a parabola through the window gives the velocity at
///   the last sample (a line's slope would lag an accelerating finger by half the window);
///   its curvature is not extrapolated, since on real panels it is mostly noise.
/// - **Anchored at the last sample**, so a finger at rest is predicted exactly where it is.
/// - **Damped** by three factors, each from 0 (no prediction) to 1:
///   - *speed*: below 30 px/s nothing is predicted, from 300 px/s all is: a slow finger
///     gains little, and its noise would be magnified;
///   - *turn*: the last step's velocity, projected on the fitted one, as a fraction of it;
///     at 0 or less (a stop, a reversal) nothing is predicted, from 0.9 all is;
///   - *jerk*: how much the last sample changed the fitted velocity, as a fraction of it;
///     up to 0.5 all is predicted, from 1.0 nothing (a finger starting from rest, a contact
///     whose centre jumps as it settles or lifts).
/// - Nothing is predicted before 4 samples, or after a gap of 40 ms (``PredictorLimits``).
///
/// So a stop is never overshot by more than the last frame's prediction, the velocity times
/// the horizon, and once a still sample comes the prediction is the position.
public struct DampedPredictor: TouchPredictor {
    public static let name = "default"
    static let window = 0.060
    static let minimumSamples = 4
    static let speed = (none: 30.0, full: 300.0)
    static let turn = (none: 0.0, full: 0.9)
    static let jerk = (full: 0.5, none: 1.0)

    private var samples = SampleWindow()
    public init() {}

    public mutating func add(_ position: Point, at time: Double) {
        samples.add(position, at: time, keeping: Self.window)
    }

    public func predict(_ horizon: Double) -> Point {
        guard let last = samples.last else { return Point(x: 0, y: 0) }
        let move = displacement(horizon)
        return Point(x: last.position.x + move.x, y: last.position.y + move.y)
    }

    /// The last sample's position, if any.
    public var lastPosition: Point? { samples.last?.position }

    /// How far the contact is predicted to move in `horizon`.
    func displacement(_ horizon: Double) -> Point {
        let zero = Point(x: 0, y: 0)
        guard samples.count >= Self.minimumSamples, let now = samples.fit(quadratic: true),
              let before = samples.fit(quadratic: true, dropping: 1) else { return zero }
        let velocity = now.velocity
        let speed = (velocity.x * velocity.x + velocity.y * velocity.y).squareRoot()
        guard speed > 0 else { return zero }

        let last = samples[samples.count - 1], previous = samples[samples.count - 2]
        let step = last.time - previous.time
        guard step > 0 else { return zero }
        let recent = Point(x: (last.position.x - previous.position.x) / step, y: (last.position.y - previous.position.y) / step)
        let along = (recent.x * velocity.x + recent.y * velocity.y) / (speed * speed)
        let change = Point(x: velocity.x - before.velocity.x, y: velocity.y - before.velocity.y)
        let jerk = (change.x * change.x + change.y * change.y).squareRoot() / speed

        let damping = Self.ramp(speed, from: Self.speed.none, to: Self.speed.full)
            * Self.ramp(along, from: Self.turn.none, to: Self.turn.full)
            * (1 - Self.ramp(jerk, from: Self.jerk.full, to: Self.jerk.none))
        return Point(x: velocity.x * horizon * damping, y: velocity.y * horizon * damping)
    }

    /// 0 at `from` and below, 1 at `to` and above, linear between.
    static func ramp(_ value: Double, from: Double, to: Double) -> Double {
        guard value.isFinite else { return 0 }
        return min(max((value - from) / (to - from), 0), 1)
    }
}
