import Foundation
import MotionCore
import SeededRandom
import Testing
@testable import TouchInput

/// The calibration fit against matrices known in advance: rotation, skew and offset, exact and
/// with noisy touches, and the pairs it must refuse.
@Suite("Calibration fit")
struct CalibrationFitTests {
    /// A panel turned 3° with a 2 % skew and an offset, and one that is only offset and scaled.
    static let rotated: [Double] = {
        let angle = 3.0 * Double.pi / 180
        return [cos(angle), -sin(angle) + 0.02, 0.015, sin(angle), cos(angle), -0.02]
    }()
    static let shifted: [Double] = [0.96, 0, 0.03, 0, 1.04, -0.025]
    static let quarterTurn: [Double] = [0, -1, 1, 1, 0, 0]

    /// The touches a panel calibrated by `matrix` reports for `targets`: the inverse of the
    /// matrix applied to each target.
    static func pairs(_ matrix: [Double], _ targets: [Point], noise: (Int) -> Point = { _ in Point(x: 0, y: 0) }) -> [CalibrationPair] {
        let (a, b, c, d, e, f) = (matrix[0], matrix[1], matrix[2], matrix[3], matrix[4], matrix[5])
        let determinant = a * e - b * d
        return targets.enumerated().map { index, target in
            let x = target.x - c, y = target.y - f
            let device = Point(x: (e * x - b * y) / determinant, y: (a * y - d * x) / determinant)
            let jitter = noise(index)
            return CalibrationPair(device: Point(x: device.x + jitter.x, y: device.y + jitter.y), screen: target)
        }
    }

    static let five = [Point(x: 0.125, y: 0.125), Point(x: 0.875, y: 0.125), Point(x: 0.125, y: 0.875), Point(x: 0.875, y: 0.875), Point(x: 0.5, y: 0.5)]
    static let nine = [0.125, 0.5, 0.875].flatMap { y in [0.125, 0.5, 0.875].map { Point(x: $0, y: y) } }

    @Test("exact touches give the matrix back, to 1e-12, from 3, 5 and 9 targets", arguments: [rotated, shifted, quarterTurn])
    func exact(matrix: [Double]) throws {
        for targets in [Array(Self.five.prefix(3)), Self.five, Self.nine] {
            let fit = try CalibrationFit(Self.pairs(matrix, targets))
            for (found, expected) in zip(fit.matrix, matrix) { #expect(Swift.abs(found - expected) < 1e-12, "\(fit.matrix) for \(matrix)") }
            #expect(fit.rms < 1e-12 && fit.residuals.count == targets.count)
        }
    }

    @Test("touches with 0.2 % noise (2–4 px on a 1920 × 1080 output) give the matrix to within 0.01, and the residuals say how noisy they were", .seeded)
    func noisy() throws {
        // Offsets drawn from the suite's seed, the same on every run unless it is changed.
        var generator = TestSeed.generator()
        let offsets = (0..<9).map { _ in Point(x: Double.random(in: -0.002...0.002, using: &generator), y: Double.random(in: -0.002...0.002, using: &generator)) }
        let fit = try CalibrationFit(Self.pairs(Self.rotated, Self.nine) { offsets[$0] })
        for (found, expected) in zip(fit.matrix, Self.rotated) { #expect(Swift.abs(found - expected) < 0.01, "\(fit.matrix)") }
        #expect(fit.rms > 0.0002 && fit.rms < 0.003, "rms \(fit.rms)")
        // Exact touches would fit better than noisy ones: the residuals are the noise's.
        #expect(fit.rms > (try CalibrationFit(Self.pairs(Self.rotated, Self.nine))).rms)
    }

    @Test("fewer than three pairs, touches in a line, and numbers that are not finite are refused with the reason")
    func refused() {
        #expect(throws: CalibrationFit.Failure.tooFewPairs(2)) { try CalibrationFit(Self.pairs(Self.shifted, Array(Self.five.prefix(2)))) }
        let line = [Point(x: 0.1, y: 0.5), Point(x: 0.5, y: 0.5), Point(x: 0.9, y: 0.5), Point(x: 0.3, y: 0.5)]
        #expect { try CalibrationFit(Self.pairs(Self.shifted, line)) } throws: { error in
            guard case .collinear = error as? CalibrationFit.Failure else { return false }
            return "\(error)".contains("lie in a line")
        }
        var pairs = Self.pairs(Self.shifted, Self.five)
        pairs[3].device.x = .nan
        #expect(throws: CalibrationFit.Failure.notFinite(index: 3)) { try CalibrationFit(pairs) }
    }

    /// The pairs of `matrix` on the nine targets, with each touch moved to `scale` times
    /// itself plus `offset`; and the matrix that maps those touches onto the targets.
    static func moved(_ matrix: [Double], scale: Double, offset: Double) -> (pairs: [CalibrationPair], matrix: [Double]) {
        let pairs = Self.pairs(matrix, Self.nine).map { pair in
            CalibrationPair(device: Point(x: pair.device.x * scale + offset, y: pair.device.y * scale + offset), screen: pair.screen)
        }
        // x′ = a·(X − o)/s + b·(Y − o)/s + c, for touches X = s·x + o.
        let (a, b, d, e) = (matrix[0] / scale, matrix[1] / scale, matrix[3] / scale, matrix[4] / scale)
        return (pairs, [a, b, matrix[2] - (matrix[0] + matrix[1]) * offset / scale, d, e, matrix[5] - (matrix[3] + matrix[4]) * offset / scale])
    }

    @Test("touches a million units from the origin, or so large that their squares overflow, fit their matrix",
          arguments: [(1.0, 1e6), (1.0, -1e6), (1e6, 1e6), (1e160, 1e166), (1e200, -1e203)])
    func farAndLarge(scale: Double, offset: Double) throws {
        let (pairs, expected) = Self.moved(Self.rotated, scale: scale, offset: offset)
        let fit = try CalibrationFit(pairs)
        // The linear part to a billionth of its size (the touches' own rounding is about
        // 1e-10 of it a million units out); the whole by where it puts the touches.
        for index in [0, 1, 3, 4] {
            #expect(Swift.abs(fit.matrix[index] - expected[index]) <= 1e-9 / scale, "\(fit.matrix) for \(expected)")
        }
        #expect(fit.rms < 1e-9, "rms \(fit.rms)")
        for pair in pairs { #expect(CalibrationFit.apply(fit.matrix, to: pair.device).distance(to: pair.screen) < 1e-8, "\(fit.matrix)") }
    }

    @Test("a fit beyond what a double holds is refused, never returned with infinities or NaN")
    func notFiniteResult() {
        // Targets near the largest double, 3e308 apart, for touches across the panel: the
        // matrix would be about 1e308 times that.
        let far = [Point(x: 0, y: 0), Point(x: 1, y: 0), Point(x: 0, y: 1), Point(x: 1, y: 1)].enumerated().map { index, touch in
            CalibrationPair(device: touch, screen: Point(x: index % 2 == 0 ? 1.7e308 : -1.7e308, y: 0))
        }
        #expect(throws: CalibrationFit.Failure.resultNotFinite) { try CalibrationFit(far) }
        // Finite sums, but a slope of 1.7e310: touches a hundredth apart, targets 1.7e308.
        let steep = [Point(x: 0, y: 0), Point(x: 0.01, y: 0), Point(x: 0, y: 0.01)].map { touch in
            CalibrationPair(device: touch, screen: Point(x: touch.x == 0 ? 0 : 1.7e308, y: 0))
        }
        #expect(throws: CalibrationFit.Failure.resultNotFinite) { try CalibrationFit(steep) }
        #expect("\(CalibrationFit.Failure.resultNotFinite)".contains("not finite"))
    }

    @Test("touches on one line are refused with their finite spread, at any scale: the rounding across a long line is no spread")
    func collinearAtAnyScale() {
        for scale in [1.0, 1e6, 1e300] {
            // Exactly on y = 3x in decimal, not quite in binary: rounding is all that is across.
            let line = (1...5).map { Point(x: Double($0) * 0.1 * scale, y: Double($0) * 0.3 * scale) }
            let pairs = line.map { CalibrationPair(device: $0, screen: Point(x: $0.x / scale, y: 0.5)) }
            #expect { try CalibrationFit(pairs) } throws: { error in
                guard case .collinear(let spread, let length) = error as? CalibrationFit.Failure else { return false }
                return spread.isFinite && length.isFinite && spread < 1e-9 * length && !"\(error)".contains("nan")
            }
        }
    }

    @Test("a target on the output, taken back through rotation and flips, comes out where it was", arguments: Rotation.allCases)
    func calibrationSpaceRoundTrip(rotation: Rotation) {
        for (horizontal, vertical) in [(false, false), (true, false), (false, true), (true, true)] {
            let mapping = OutputMapping(outputSize: Size(width: 1920, height: 1080), outputOrigin: Point(x: 1920, y: 0),
                                        rotation: rotation, flipHorizontal: horizontal, flipVertical: vertical)
            for target in Self.five + [Point(x: 0.7, y: 0.75)] {
                let placed = mapping.place(mapping.calibrationSpace(target), outputSize: Size(width: 1920, height: 1080))
                #expect(placed.distance(to: Point(x: 1920 + target.x * 1920, y: target.y * 1080)) < 1e-9, "\(rotation) \(horizontal) \(vertical)")
            }
        }
    }
}
