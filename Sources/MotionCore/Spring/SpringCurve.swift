import Glibc

/// The exact trajectory of a spring from a starting position and velocity toward a fixed
/// destination, as a function of the time since it started.
///
/// The equation is linear, so the displacement u = x − destination is a combination of two
/// scalar responses that depend only on the configuration:
///
///     u(t) = u₀·f(t) + v₀·g(t)        (f: released from 1 at rest; g: kicked from 0 at speed 1)
///
/// Evaluating the closed form at each frame's real timestamp makes the curve independent of
/// the frame rate: a 144 Hz display and a 30 Hz one show the same motion, sampled
/// differently. (Rebound and POP integrate numerically and drift behind real time.)
public struct SpringCurve<Value: MotionVector> {
    /// Where the spring started.
    public let origin: Value
    /// The velocity it started with, in units per second.
    public let initialVelocity: Value
    /// Where it is going.
    public let destination: Value
    /// Its constants.
    public let configuration: SpringConfiguration

    private let response: SpringResponse
    private let displacement: Value

    /// Creates the curve from `origin`, moving at `initialVelocity`, toward `destination`.
    public init(from origin: Value, velocity initialVelocity: Value, to destination: Value, configuration: SpringConfiguration) {
        self.origin = origin
        self.initialVelocity = initialVelocity
        self.destination = destination
        self.configuration = configuration
        self.response = SpringResponse(configuration)
        self.displacement = origin - destination
    }

    /// The position `t` seconds after the start.
    public func value(at t: Double) -> Value {
        let r = response.position(at: t)
        return destination + displacement * r.f + initialVelocity * r.g
    }

    /// The velocity `t` seconds after the start, in units per second.
    public func velocity(at t: Double) -> Value {
        let r = response.velocity(at: t)
        return displacement * r.f + initialVelocity * r.g
    }

    /// Whether the spring is at rest `t` seconds after the start: from then on, it stays
    /// within `threshold` of the destination and moves slower than `threshold·ω₀` per second.
    ///
    /// The test uses decaying envelopes of the motion, not the current sample, so a spring
    /// that passes through its destination at speed is never taken for one at rest: the
    /// overshoot always plays out first. The speed bound is the peak speed of an oscillation
    /// whose amplitude is `threshold`, which is what "matching" the displacement means here.
    public func isAtRest(at t: Double, threshold: Double) -> Bool {
        let u0 = displacement.length
        let v0 = initialVelocity.length
        if u0 == 0 && v0 == 0 { return true }
        let bound = response.envelopes(at: t)
        let position = u0 * bound.f + v0 * bound.g
        let speed = u0 * bound.df + v0 * bound.dg
        return position <= threshold && speed <= threshold * configuration.naturalFrequency
    }
}

/// The scalar responses f, g of a spring configuration, their derivatives and bounds.
struct SpringResponse {
    private enum Regime {
        /// ζ < 1: oscillates at ω_d inside an envelope that decays at rate α.
        case underdamped(alpha: Double, omegaD: Double)
        /// ζ = 1: the fastest return without overshoot.
        case critical(omega0: Double)
        /// ζ > 1: two real decay rates, r1 closer to zero than r2.
        case overdamped(r1: Double, r2: Double)
    }

    private let regime: Regime
    private let omega0: Double

    init(_ configuration: SpringConfiguration) {
        let alpha = configuration.friction / (2 * configuration.mass)
        let omega0 = configuration.naturalFrequency
        self.omega0 = omega0
        let discriminant = alpha * alpha - omega0 * omega0
        // Within rounding of ζ = 1 the over-damped form would cancel catastrophically;
        // the critical form is exact there.
        if Swift.abs(discriminant) <= 1e-12 * omega0 * omega0 {
            regime = .critical(omega0: omega0)
        } else if discriminant < 0 {
            regime = .underdamped(alpha: alpha, omegaD: (-discriminant).squareRoot())
        } else {
            let beta = discriminant.squareRoot()
            regime = .overdamped(r1: -alpha + beta, r2: -alpha - beta)
        }
    }

    /// f(t) and g(t).
    func position(at t: Double) -> (f: Double, g: Double) {
        switch regime {
        case let .underdamped(alpha, omegaD):
            let decay = exp(-alpha * t), s = sin(omegaD * t), c = cos(omegaD * t)
            return (decay * (c + alpha / omegaD * s), decay * s / omegaD)
        case let .critical(w):
            let decay = exp(-w * t)
            return ((1 + w * t) * decay, t * decay)
        case let .overdamped(r1, r2):
            let e1 = exp(r1 * t), e2 = exp(r2 * t), span = r1 - r2
            return ((r1 * e2 - r2 * e1) / span, (e1 - e2) / span)
        }
    }

    /// f′(t) and g′(t).
    func velocity(at t: Double) -> (f: Double, g: Double) {
        switch regime {
        case let .underdamped(alpha, omegaD):
            let decay = exp(-alpha * t), s = sin(omegaD * t), c = cos(omegaD * t)
            return (-decay * omega0 * omega0 / omegaD * s, decay * (c - alpha / omegaD * s))
        case let .critical(w):
            let decay = exp(-w * t)
            return (-w * w * t * decay, (1 - w * t) * decay)
        case let .overdamped(r1, r2):
            let e1 = exp(r1 * t), e2 = exp(r2 * t), span = r1 - r2
            return (r1 * r2 * (e2 - e1) / span, (r1 * e1 - r2 * e2) / span)
        }
    }

    /// Upper bounds of |f|, |g|, |f′| and |g′| over `t` and every later time.
    ///
    /// Each bound is non-increasing in `t`, so a spring within its thresholds by these bounds
    /// stays within them. Under-damped, the oscillating factors are bounded by the smaller of
    /// the amplitude (tight when ω_d is large) and a ramp from |sin(ω_d t)/ω_d| ≤ t (tight
    /// near ζ = 1, where the amplitude grows without limit).
    func envelopes(at t: Double) -> (f: Double, g: Double, df: Double, dg: Double) {
        switch regime {
        case let .underdamped(alpha, omegaD):
            let decay = exp(-alpha * t)
            let cosine = decay * Swift.min(omega0 / omegaD, 1 + alpha * t)
            let sine = Swift.min(decay / omegaD, Self.decayingRamp(t, rate: alpha))
            return (cosine, sine, omega0 * omega0 * sine, cosine)
        case let .critical(w):
            let decay = exp(-w * t)
            let ramp = Self.decayingRamp(t, rate: w)
            return ((1 + w * t) * decay, ramp, w * w * ramp, (1 + w * t) * decay)
        case let .overdamped(r1, r2):
            let e1 = exp(r1 * t), e2 = exp(r2 * t), span = r1 - r2
            return (
                (-r2 * e1 - r1 * e2) / span,
                (e1 + e2) / span,
                r1 * r2 * (e1 + e2) / span,
                (-r1 * e1 - r2 * e2) / span
            )
        }
    }

    /// The largest value of s·e^(−rate·s) for s ≥ t: it rises until s = 1/rate, then decays.
    private static func decayingRamp(_ t: Double, rate: Double) -> Double {
        let peak = 1 / rate
        return t < peak ? peak * exp(-1) : t * exp(-rate * t)
    }
}
