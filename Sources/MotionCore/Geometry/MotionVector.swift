/// A value a spring can move: anything with a zero, addition, scaling and a length.
///
/// The spring's equation is linear and the same along every axis, so one closed-form
/// solution serves scalars, points and any other vector-like value.
public protocol MotionVector: Equatable {
    /// The additive identity.
    static var zero: Self { get }
    /// Component-wise sum.
    static func + (lhs: Self, rhs: Self) -> Self
    /// Component-wise difference.
    static func - (lhs: Self, rhs: Self) -> Self
    /// Every component multiplied by `rhs`.
    static func * (lhs: Self, rhs: Double) -> Self
    /// The Euclidean length, used to decide when a spring is at rest.
    var length: Double { get }
}

extension Double: MotionVector {
    /// The absolute value.
    public var length: Double { Swift.abs(self) }
}

/// Points are what springs move most: positions, translations and their velocities.
extension Point: MotionVector {}
