import Foundation
import MotionCore
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

    @Test("touches with 0.2 % noise (2–4 px on a 1920 × 1080 output) give the matrix to within 0.01, and the residuals say how noisy they were")
    func noisy() throws {
        // A fixed sequence of offsets, so the test is the same on every run.
        var generator = SplitMix64(seed: 24)
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
