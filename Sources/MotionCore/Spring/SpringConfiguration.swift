/// The constants of a damped spring: x'' = (tension·(destination − x) − friction·x') / mass.
///
/// Tension is the stiffness and friction the damping, in the units Facebook's Rebound and
/// POP use, so values tuned there carry over. The default, 342/30 with mass 1, is the
/// Material Motion default: quick, with a small overshoot (damping ratio 0.81).
public struct SpringConfiguration: Hashable, Sendable, Codable, CustomStringConvertible {
    /// Stiffness, per second squared (for mass 1).
    public var tension: Double
    /// Damping, per second (for mass 1).
    public var friction: Double
    /// Mass; 1 unless there is a reason to change it.
    public var mass: Double

    /// Creates a configuration; see ``validated()`` for which values can run.
    public init(tension: Double = 342, friction: Double = 30, mass: Double = 1) {
        self.tension = tension
        self.friction = friction
        self.mass = mass
    }

    /// Tension 342, friction 30, mass 1.
    public static let standard = SpringConfiguration()

    /// The undamped angular frequency ω₀ = √(tension / mass), in radians per second.
    public var naturalFrequency: Double { (tension / mass).squareRoot() }

    /// ζ = friction / (2·√(tension·mass)): below 1 the spring overshoots, at 1 or above it does not.
    public var dampingRatio: Double { friction / (2 * (tension * mass).squareRoot()) }

    /// The masses a spring may have. With the other two ranges, ω₀ = √(tension/mass) stays
    /// below 10⁴ rad/s and ζ finite, where the closed form (``SpringCurve``) is exact to
    /// within rounding; beyond them a configuration from outside could make it overflow.
    public static let masses: ClosedRange<Double> = 0.001...1000
    /// The tensions a spring may have (the default is 342).
    public static let tensions: ClosedRange<Double> = 0.001...100_000
    /// The frictions a spring may have (the default is 30).
    public static let frictions: ClosedRange<Double> = 0.001...100_000

    /// The configuration if it describes a spring that reaches its destination and comes to
    /// rest, and stays finite on the way; otherwise an error saying which value is wrong and
    /// why. The configuration file and `set` both ask this.
    public func validated() throws(SpringConfigurationError) -> SpringConfiguration {
        guard mass.isFinite, mass > 0 else { throw .mass(mass) }
        guard tension.isFinite, tension > 0 else { throw .tension(tension) }
        guard friction.isFinite, friction > 0 else { throw .friction(friction) }
        guard Self.masses.contains(mass) else { throw .outOfRange("mass", mass, Self.masses) }
        guard Self.tensions.contains(tension) else { throw .outOfRange("tension", tension, Self.tensions) }
        guard Self.frictions.contains(friction) else { throw .outOfRange("friction", friction, Self.frictions) }
        return self
    }

    public var description: String { "tension \(tension), friction \(friction), mass \(mass)" }
}

/// Why a ``SpringConfiguration`` cannot run.
public enum SpringConfigurationError: Error, Equatable, CustomStringConvertible {
    case mass(Double)
    case tension(Double)
    case friction(Double)
    /// Positive, but outside the range where the spring stays finite.
    case outOfRange(String, Double, ClosedRange<Double>)

    public var description: String {
        switch self {
        case .outOfRange(let name, let value, let range):
            return "\(name) must be within \(range.lowerBound)…\(Int(range.upperBound)), not \(value)"
        case .mass(let value):
            return "mass must be a positive number, not \(value)"
        case .tension(let value):
            return "tension must be a positive number, not \(value) (with no tension the spring never pulls toward its destination)"
        case .friction(let value):
            return "friction must be a positive number, not \(value) (with no friction the spring oscillates forever and never comes to rest)"
        }
    }
}

// MARK: - Designers' units

extension SpringConfiguration {
    /// Converts Origami's (Quartz Composer's) tension and friction to Rebound units:
    /// tension = (o − 30)·3.62 + 194, friction = (o − 8)·3 + 25, and 0 stays 0.
    public init(origamiTension: Double, origamiFriction: Double) {
        self.init(
            tension: origamiTension == 0 ? 0 : (origamiTension - 30) * 3.62 + 194,
            friction: origamiFriction == 0 ? 0 : (origamiFriction - 8) * 3 + 25
        )
    }

    /// Converts POP's and Rebound's `bounciness` and `speed` (both 0…20 in their UIs; POP's
    /// defaults are 4 and 12) to tension and friction.
    ///
    /// Speed chooses an Origami tension; bounciness moves the Origami friction from the value
    /// that just avoids overshoot at that tension (bounciness 0) toward almost none. The
    /// no-overshoot friction is Rebound's cubic fit, in three pieces over the tension.
    /// Speed 12 with bounciness 4 gives about 342.1 / 30.5, the Material Motion default.
    public init(bounciness: Double, speed: Double) {
        let bounce = 0.8 * (bounciness / 1.7) / 20  // normalised to 0…1, then to 0…0.8
        let pace = (speed / 1.7) / 20
        let origamiTension = 0.5 + pace * (200 - 0.5)
        let eased = 2 * bounce - bounce * bounce  // quadratic ease-out
        let origamiFriction = eased * 0.01 + (1 - eased) * Self.origamiFrictionWithoutBounce(origamiTension)
        self.init(origamiTension: origamiTension, origamiFriction: origamiFriction)
    }

    /// Rebound's fit of the Origami friction that just avoids overshoot at a given Origami tension.
    private static func origamiFrictionWithoutBounce(_ tension: Double) -> Double {
        func cubic(_ a: Double, _ b: Double, _ c: Double, _ d: Double) -> Double {
            a * tension * tension * tension + b * tension * tension + c * tension + d
        }
        if tension <= 18 { return cubic(0.0007, -0.031, 0.64, 1.28) }
        if tension <= 44 { return cubic(0.000044, -0.006, 0.36, 2) }
        return cubic(0.00000045, -0.000332, 0.1078, 5.84)
    }
}
