import TouchModel

/// A touch and the target it was meant for, both in libinput's normalised units: 0…1 across
/// the device's axis ranges, and 0…1 across the space the calibration matrix maps into (the
/// device's output rectangle, before rotation and flips; see ``OutputMapping``).
public struct CalibrationPair: Hashable, Sendable {
    /// Where the device said the touch was.
    public var device: Point
    /// Where the target was.
    public var screen: Point

    public init(device: Point, screen: Point) {
        self.device = device
        self.screen = screen
    }
}

/// The affine calibration matrix that best maps touches onto their targets, by least squares.
///
/// The matrix is libinput's `LIBINPUT_CALIBRATION_MATRIX`, `[a, b, c, d, e, f]` with
/// x′ = a·x + b·y + c and y′ = d·x + e·y + f, so it expresses rotation, skew, scale and
/// offset. Three pairs not in a line determine it; more are averaged, which is what makes a
/// five- or nine-point calibration steadier than weston's exact three.
public struct CalibrationFit: Hashable, Sendable {
    /// `[a, b, c, d, e, f]`.
    public var matrix: [Double]
    /// How far each pair's touch, mapped by the matrix, lands from its target (normalised units).
    public var residuals: [Double]
    /// The root mean square of the residuals.
    public var rms: Double

    /// Why pairs cannot be fitted.
    public enum Failure: Error, Hashable, Sendable, CustomStringConvertible {
        /// Fewer than three pairs.
        case tooFewPairs(Int)
        /// The touches lie on a line (or on one point), so the matrix is not determined
        /// across it. `spread` is their spread across their best line, `length` along it,
        /// both in normalised units.
        case collinear(spread: Double, length: Double)
        /// A pair holds a number that is not finite.
        case notFinite(index: Int)
        /// The matrix that fits, or a residual, is beyond what a `Double` holds: pairs whose
        /// numbers are this large, or this far apart, are not normalised units.
        case resultNotFinite

        public var description: String {
            switch self {
            case .tooFewPairs(let count):
                return "a calibration needs at least 3 touch/target pairs (rotation, skew and offset take six numbers), not \(count)"
            case .collinear(let spread, let length):
                return "the touches lie in a line (they spread \(Self.short(spread)) of the panel across it, \(Self.short(length)) along it): targets must not all be in one row or column"
            case .notFinite(let index):
                return "pair \(index + 1) holds a number that is not finite"
            case .resultNotFinite:
                return "the matrix that fits these pairs is not finite (its numbers or its residuals are beyond what a double holds): the pairs are not in normalised units, 0…1 of the device and of the output"
            }
        }

        /// A spread for a message: four decimals, or as it is when that would say 0 of a
        /// spread that is not.
        private static func short(_ value: Double) -> String {
            let rounded = (value * 10_000).rounded() / 10_000
            return rounded == 0 && value != 0 || Swift.abs(value) >= 1e6 ? "\(value)" : "\(rounded)"
        }
    }

    /// Touches closer to a line than this (a thousandth of the panel) do not determine a
    /// matrix: the fit across the line would be noise.
    public static let minimumSpread = 0.001

    /// Touches spread across their line by less than this fraction of their length along it
    /// do not determine a matrix either, however large they are: across the line there is
    /// nothing but the rounding of their numbers (about 1e-16 of them).
    public static let minimumSpreadRatio = 1e-9

    /// Fits the matrix to `pairs`.
    ///
    /// The two rows are independent least-squares problems with the same design: x′ from
    /// (x, y, 1), and y′ likewise. They are solved on standardised coordinates, so that any
    /// finite pairs give the fit their numbers determine, or a reason:
    ///
    /// - each set of coordinates is centred on its mean and scaled by a power of two to
    ///   about −1…1 (``Standardised``), so no sum of products overflows or vanishes, and
    ///   touches a million units from the origin fit as well as touches near it;
    /// - the touches are then turned onto their principal axes, along their best line and
    ///   across it, where the normal equations are diagonal: their spread across the line
    ///   is a sum of squares rather than a difference of large sums, and the fit across it
    ///   keeps its precision however thin the spread;
    /// - the result is taken back to the pairs' units; a matrix or a residual that does not
    ///   fit in a `Double` is refused (``Failure/resultNotFinite``), never returned.
    public init(_ pairs: [CalibrationPair]) throws(Failure) {
        guard pairs.count >= 3 else { throw .tooFewPairs(pairs.count) }
        for (index, pair) in pairs.enumerated()
        where ![pair.device.x, pair.device.y, pair.screen.x, pair.screen.y].allSatisfy(\.isFinite) {
            throw .notFinite(index: index)
        }
        let n = Double(pairs.count)
        // One scale for both touch axes, so that their spread keeps its shape; each target
        // axis on its own, as each is its own problem.
        let touches = Standardised([{ pairs[$0].device.x }, { pairs[$0].device.y }], count: pairs.count)
        let targetX = Standardised([{ pairs[$0].screen.x }], count: pairs.count)
        let targetY = Standardised([{ pairs[$0].screen.y }], count: pairs.count)
        func standardised(_ pair: CalibrationPair) -> (u: Double, v: Double, x: Double, y: Double) {
            (touches.standardised(pair.device.x, axis: 0), touches.standardised(pair.device.y, axis: 1),
             targetX.standardised(pair.screen.x, axis: 0), targetY.standardised(pair.screen.y, axis: 0))
        }

        // The touches' principal axes: `along` their best line, and across it.
        let along = Self.principalAxis(pairs.map { pair in let (u, v, _, _) = standardised(pair); return (u, v) })
        // Sums on those axes: p along the line, q across it.
        var spp = 0.0, spq = 0.0, sqq = 0.0, spX = 0.0, sqX = 0.0, spY = 0.0, sqY = 0.0
        for pair in pairs {
            let (u, v, x, y) = standardised(pair)
            let p = along.x * u + along.y * v, q = along.x * v - along.y * u
            spp += p * p; spq += p * q; sqq += q * q
            spX += p * x; sqX += q * x; spY += p * y; sqY += q * y
        }
        let spread = (sqq / n).squareRoot(), length = (spp / n).squareRoot()
        let spreadInUnits = touches.unscaled(spread)
        guard spreadInUnits >= Self.minimumSpread, spread >= Self.minimumSpreadRatio * length else {
            throw .collinear(spread: spreadInUnits, length: touches.unscaled(length))
        }

        // Each row on the principal axes, then turned back onto the touches' axes: the
        // coefficients of the standardised coordinates.
        let determinant = spp * sqq - spq * spq
        func row(_ sp: Double, _ sq: Double) -> (u: Double, v: Double) {
            let alongLine = (sqq * sp - spq * sq) / determinant, acrossLine = (spp * sq - spq * sp) / determinant
            return (alongLine * along.x - acrossLine * along.y, alongLine * along.y + acrossLine * along.x)
        }
        let rowX = row(spX, sqX), rowY = row(spY, sqY)

        // Back to the pairs' units: x′ = oX + kX·(U·(x − ox) + V·(y − oy))/k.
        let toX = Standardised.power(targetX.exponent - touches.exponent), toY = Standardised.power(targetY.exponent - touches.exponent)
        let a = rowX.u * toX, b = rowX.v * toX, d = rowY.u * toY, e = rowY.v * toY
        let c = targetX.origins[0] - a * touches.origins[0] - b * touches.origins[1]
        let f = targetY.origins[0] - d * touches.origins[0] - e * touches.origins[1]
        matrix = [a, b, c, d, e, f]

        // Residuals from the standardised coordinates, where they lose no precision to the
        // offsets, each axis scaled back; a hypotenuse that does not square what it need not.
        residuals = pairs.map { pair in
            let (u, v, x, y) = standardised(pair)
            let dx = targetX.unscaled(x - rowX.u * u - rowX.v * v), dy = targetY.unscaled(y - rowY.u * u - rowY.v * v)
            return Self.hypotenuse(dx, dy)
        }
        rms = Self.rootMeanSquare(residuals)
        guard matrix.allSatisfy(\.isFinite), rms.isFinite else { throw .resultNotFinite }
    }

    /// The unit vector along the best line through `points` (standardised, centred on 0):
    /// the principal axis of their spread, from the 2 × 2 sums of squares in closed form.
    static func principalAxis(_ points: [(u: Double, v: Double)]) -> (x: Double, y: Double) {
        var suu = 0.0, suv = 0.0, svv = 0.0
        for (u, v) in points {
            suu += u * u; suv += u * v; svv += v * v
        }
        let gap = (((suu - svv) / 2) * ((suu - svv) / 2) + suv * suv).squareRoot()
        let along = suu >= svv ? (x: (suu - svv) / 2 + gap, y: suv) : (x: suv, y: (svv - suu) / 2 + gap)
        let norm = (along.x * along.x + along.y * along.y).squareRoot()
        return norm > 0 ? (along.x / norm, along.y / norm) : (1, 0)
    }

    /// √(mean of the squares), scaled by the largest so that no square overflows.
    static func rootMeanSquare(_ values: [Double]) -> Double {
        let largest = values.max() ?? 0
        guard largest > 0 && largest.isFinite else { return largest }
        return largest * (values.reduce(0) { $0 + ($1 / largest) * ($1 / largest) } / Double(values.count)).squareRoot()
    }

    /// √(x² + y²), without overflowing where the result does not.
    static func hypotenuse(_ x: Double, _ y: Double) -> Double {
        let large = Swift.max(Swift.abs(x), Swift.abs(y)), small = Swift.min(Swift.abs(x), Swift.abs(y))
        guard large > 0, large.isFinite else { return large }
        let ratio = small / large
        return large * (1 + ratio * ratio).squareRoot()
    }

    /// A point through a matrix `[a, b, c, d, e, f]`.
    public static func apply(_ matrix: [Double], to point: Point) -> Point {
        Point(x: matrix[0] * point.x + matrix[1] * point.y + matrix[2], y: matrix[3] * point.x + matrix[4] * point.y + matrix[5])
    }
}

/// How coordinates are centred on their mean and scaled by a power of two to about −1…1,
/// and taken back: `origin + standardised · 2^exponent`. Powers of two scale exactly, and the
/// centring is done on values already scaled, so numbers up to `Double`'s largest neither
/// overflow nor lose more than their own rounding. Only the parameters are kept: the
/// standardised coordinates are computed as they are needed, so a fit of a million pairs
/// holds no copy of them.
struct Standardised {
    /// Each axis's mean, in the original units.
    let origins: [Double]
    /// Each axis's mean, after the first scaling.
    private let means: [Double]
    /// The two scalings, as powers of two: by the largest magnitude, then by the largest
    /// difference from the mean.
    private let first: Int, second: Int

    /// The scale shared by all the axes, as a power of two.
    var exponent: Int { first + second }

    /// The standardisation of `axes`, each giving its coordinate of `count` points by index,
    /// with one scale for all.
    init(_ axes: [(Int) -> Double], count: Int) {
        // First into −2…2 by the largest magnitude, so the mean and the differences from it
        // cannot overflow; then centred, and scaled again by the largest difference.
        var largest = 0.0
        for axis in axes { for index in 0..<count { largest = Swift.max(largest, Swift.abs(axis(index))) } }
        let first = Self.exponent(of: largest)
        let means = axes.map { axis in (0..<count).reduce(0.0) { $0 + Self.scale(axis($1), by: -first) / Double(count) } }
        var spread = 0.0
        for (axis, mean) in zip(axes, means) {
            for index in 0..<count { spread = Swift.max(spread, Swift.abs(Self.scale(axis(index), by: -first) - mean)) }
        }
        self.first = first
        self.means = means
        second = Self.exponent(of: spread)
        origins = means.map { Self.scale($0, by: first) }
    }

    /// `value`, a coordinate on `axis`, standardised.
    func standardised(_ value: Double, axis: Int) -> Double {
        Self.scale(Self.scale(value, by: -first) - means[axis], by: -second)
    }

    /// A standardised length in the original units.
    func unscaled(_ value: Double) -> Double { Self.scale(value, by: exponent) }

    /// The exponent of `magnitude`'s leading bit, or 0 for 0 (nothing to scale).
    static func exponent(of magnitude: Double) -> Int {
        magnitude > 0 ? Int(magnitude.exponent) : 0
    }

    /// `value` · 2^`exponent`, exactly unless it leaves `Double`'s range.
    static func scale(_ value: Double, by exponent: Int) -> Double {
        Double(sign: .plus, exponent: exponent, significand: value)
    }

    /// 2^`exponent` (infinite or 0 beyond `Double`'s range).
    static func power(_ exponent: Int) -> Double { scale(1, by: exponent) }
}
