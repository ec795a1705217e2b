import MotionCore
import Testing
@testable import TouchInput

/// `OutputMapping.libinputMatrix`, checked the way it will be used: the exported matrix is
/// applied as libinput applies `LIBINPUT_CALIBRATION_MATRIX` (normalised coordinates in and
/// out, the output scaled on afterwards), and where that puts each device point must be
/// where motiond's own mapping (`CoordinateMapper.pixels`) puts it.
@Suite("The mapping as a libinput calibration matrix")
struct LibinputMatrixTests {
    /// A 4096 × 4096-unit panel starting at 0, and one with an offset, uneven range.
    static let panels = [
        (x: AxisInfo(minimum: 0, maximum: 4095), y: AxisInfo(minimum: 0, maximum: 4095)),
        (x: AxisInfo(minimum: 100, maximum: 32099), y: AxisInfo(minimum: -50, maximum: 17949)),
    ]

    /// Where libinput puts device point (`x`, `y`) with `matrix`, on an output the compositor
    /// maps the panel onto at `output`: libinput normalises by the range, max − min + 1 units
    /// (evdev_device_calibrate), applies the six numbers, and scales to the output's size
    /// (libinput_event_touch_get_x_transformed); the compositor adds the output's corner.
    /// Written from libinput's description, not from motiond's code.
    static func libinput(_ x: Int32, _ y: Int32, axes: (x: AxisInfo, y: AxisInfo), matrix m: [Double], output: Rect) -> Point {
        let u = (Double(x) - Double(axes.x.minimum)) / (Double(axes.x.maximum) - Double(axes.x.minimum) + 1)
        let v = (Double(y) - Double(axes.y.minimum)) / (Double(axes.y.maximum) - Double(axes.y.minimum) + 1)
        return Point(x: output.origin.x + (m[0] * u + m[1] * v + m[2]) * output.size.width,
                     y: output.origin.y + (m[3] * u + m[4] * v + m[5]) * output.size.height)
    }

    /// A 9 × 9 grid over each panel, corners included, compared within a thousandth of a pixel.
    static func expectLibinputAgrees(_ mapping: OutputMapping, sourceLocation: SourceLocation = #_sourceLocation) {
        let matrix = mapping.libinputMatrix
        for axes in panels {
            let mapper = CoordinateMapper(xAxis: axes.x, yAxis: axes.y, mapping: mapping)
            for i in 0...8 {
                for j in 0...8 {
                    let x = Int32(Double(axes.x.minimum) + Double(i) / 8 * Double(axes.x.maximum - axes.x.minimum))
                    let y = Int32(Double(axes.y.minimum) + Double(j) / 8 * Double(axes.y.maximum - axes.y.minimum))
                    let motiond = mapper.pixels(x: x, y: y)
                    let theirs = libinput(x, y, axes: axes, matrix: matrix, output: mapper.outputRect)
                    #expect(motiond.distance(to: theirs) < 1e-3, "(\(x), \(y)): motiond \(motiond), libinput \(theirs) with \(matrix)", sourceLocation: sourceLocation)
                }
            }
        }
    }

    static let landscape = Rect(x: 1920, y: 0, width: 1920, height: 1080)
    static let portrait = Rect(x: 0, y: 0, width: 1080, height: 1920)

    static func mapping(_ output: Rect, _ rotation: Rotation = .none, flipH: Bool = false, flipV: Bool = false,
                        calibration: [Double] = OutputMapping.identityCalibration) -> OutputMapping {
        OutputMapping(outputSize: output.size, outputOrigin: output.origin, rotation: rotation,
                      flipHorizontal: flipH, flipVertical: flipV, calibration: calibration)
    }

    @Test("identity: the matrix is 1 0 0 0 1 0, and libinput puts every point where motiond does")
    func identity() {
        let mapping = Self.mapping(Self.landscape)
        #expect(mapping.libinputMatrix == [1, 0, 0, 0, 1, 0])
        Self.expectLibinputAgrees(mapping)
    }

    @Test("the quarter turns are libinput's documented rotation matrices")
    func rotations() {
        #expect(Self.mapping(Self.portrait, .clockwise90).libinputMatrix == [0, -1, 1, 1, 0, 0])
        #expect(Self.mapping(Self.landscape, .upsideDown).libinputMatrix == [-1, 0, 1, 0, -1, 1])
        #expect(Self.mapping(Self.portrait, .clockwise270).libinputMatrix == [0, 1, 0, -1, 0, 1])
    }

    @Test("every rotation with every flip maps alike through libinput", arguments: Rotation.allCases, [(false, false), (true, false), (false, true), (true, true)])
    func rotationsAndFlips(rotation: Rotation, flips: (Bool, Bool)) {
        let turned = rotation == .clockwise90 || rotation == .clockwise270
        Self.expectLibinputAgrees(Self.mapping(turned ? Self.portrait : Self.landscape, rotation, flipH: flips.0, flipV: flips.1))
    }

    @Test("a fitted calibration, with a quarter turn and a flip: libinput puts the touches where motiond does, and on their targets")
    func fittedCalibration() throws {
        // A panel mounted a little off: touches at `device` were meant for `screen`.
        let error = [1.03, 0.02, -0.012, -0.015, 0.97, 0.02]
        let targets = [(0.125, 0.125), (0.875, 0.125), (0.125, 0.875), (0.875, 0.875), (0.5, 0.5)].map { Point(x: $0.0, y: $0.1) }
        let det = error[0] * error[4] - error[1] * error[3]
        let pairs = targets.map { target in
            let (u, v) = (target.x - error[2], target.y - error[5])
            return CalibrationPair(device: Point(x: (error[4] * u - error[1] * v) / det, y: (error[0] * v - error[3] * u) / det), screen: target)
        }
        let fit = try CalibrationFit(pairs)
        let mapping = Self.mapping(Self.portrait, .clockwise90, flipH: true, calibration: fit.matrix)
        Self.expectLibinputAgrees(mapping)

        // And the composite is not the calibration alone: a touch meant for a target lands
        // on it, as the picture shows it, only with the flip and the turn folded in.
        let pair = pairs[0]  // (0.125, 0.125), shown at (0.875, 0.875)
        let matrix = mapping.libinputMatrix
        let shown = Point(x: matrix[0] * pair.device.x + matrix[1] * pair.device.y + matrix[2],
                          y: matrix[3] * pair.device.x + matrix[4] * pair.device.y + matrix[5])
        #expect(mapping.calibrationSpace(shown).distance(to: pair.screen) < 1e-9)
        #expect(shown.distance(to: pair.screen) > 0.1)
    }
}
