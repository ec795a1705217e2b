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
        /// across it. `spread` is their smallest spread, in normalised units.
        case collinear(spread: Double)
        /// A pair holds a number that is not finite.
        case notFinite(index: Int)

        public var description: String {
            switch self {
            case .tooFewPairs(let count):
                return "a calibration needs at least 3 touch/target pairs (rotation, skew and offset take six numbers), not \(count)"
            case .collinear(let spread):
                return "the touches lie in a line (they spread \((spread * 10_000).rounded() / 10_000) of the panel across it): targets must not all be in one row or column"
            case .notFinite(let index):
                return "pair \(index + 1) holds a number that is not finite"
            }
        }
    }

    /// Touches closer to a line than this (a thousandth of the panel) do not determine a
    /// matrix: the fit across the line would be noise.
    public static let minimumSpread = 0.001

    /// Fits the matrix to `pairs`.
    ///
    /// The two rows are independent least-squares problems with the same design: x′ from
    /// (x, y, 1), and y′ likewise. Solved on coordinates centred on the touches' mean, so
    /// the 2×2 normal equations stay well conditioned wherever the touches are.
    public init(_ pairs: [CalibrationPair]) throws(Failure) {
        guard pairs.count >= 3 else { throw .tooFewPairs(pairs.count) }
        for (index, pair) in pairs.enumerated()
        where ![pair.device.x, pair.device.y, pair.screen.x, pair.screen.y].allSatisfy(\.isFinite) {
            throw .notFinite(index: index)
        }
        let n = Double(pairs.count)
        let mean = pairs.reduce(Point(x: 0, y: 0)) { Point(x: $0.x + $1.device.x / n, y: $0.y + $1.device.y / n) }
        let target = pairs.reduce(Point(x: 0, y: 0)) { Point(x: $0.x + $1.screen.x / n, y: $0.y + $1.screen.y / n) }
        // Sums of the centred touches' products, and of touches against targets.
        var sxx = 0.0, sxy = 0.0, syy = 0.0, sxX = 0.0, syX = 0.0, sxY = 0.0, syY = 0.0
        for pair in pairs {
            let x = pair.device.x - mean.x, y = pair.device.y - mean.y
            let tx = pair.screen.x - target.x, ty = pair.screen.y - target.y
            sxx += x * x; sxy += x * y; syy += y * y
            sxX += x * tx; syX += y * tx; sxY += x * ty; syY += y * ty
        }
        // The smaller eigenvalue of the touches' covariance is their spread across their
        // best line, squared.
        let half = (sxx + syy) / 2, gap = (((sxx - syy) / 2) * ((sxx - syy) / 2) + sxy * sxy).squareRoot()
        let spread = Swift.max(half - gap, 0) / n
        guard spread.squareRoot() >= Self.minimumSpread else { throw .collinear(spread: spread.squareRoot()) }
        let determinant = sxx * syy - sxy * sxy
        let a = (syy * sxX - sxy * syX) / determinant, b = (sxx * syX - sxy * sxX) / determinant
        let d = (syy * sxY - sxy * syY) / determinant, e = (sxx * syY - sxy * sxY) / determinant
        let c = target.x - a * mean.x - b * mean.y, f = target.y - d * mean.x - e * mean.y
        matrix = [a, b, c, d, e, f]
        residuals = pairs.map { Self.apply([a, b, c, d, e, f], to: $0.device).distance(to: $0.screen) }
        rms = (residuals.reduce(0) { $0 + $1 * $1 } / n).squareRoot()
    }

    /// A point through a matrix `[a, b, c, d, e, f]`.
    public static func apply(_ matrix: [Double], to point: Point) -> Point {
        Point(x: matrix[0] * point.x + matrix[1] * point.y + matrix[2], y: matrix[3] * point.x + matrix[4] * point.y + matrix[5])
    }
}
