import Testing
import TouchModel
@testable import TouchInput

/// The virtual touchscreen on an output the compositor turns: its axes are the output's
/// unturned ones (the size swapped for a quarter turn), and every point of the picture lands
/// on one point of the device, the picture's corners on the device's corners.
@Suite("Output transforms: the virtual touchscreen's axes turned back")
struct OutputTransformTests {
    static let picture = Size(width: 800, height: 1280)

    @Test("names: Wayland's and sway's, and weston.ini's rotate-N; others are none")
    func names() {
        for transform in OutputTransform.allCases { #expect(OutputTransform(name: transform.rawValue) == transform) }
        #expect(OutputTransform(name: "rotate-90") == .rotated90 && OutputTransform(name: "rotate-270") == .rotated270)
        #expect(OutputTransform(name: "flipped-rotate-180") == .flipped180 && OutputTransform(name: "flipped") == .flipped)
        #expect(OutputTransform(name: "rotate-45") == nil && OutputTransform(name: "") == nil && OutputTransform(name: "Normal") == nil)
        #expect(OutputTransform(name: "rotate-normal") == nil && OutputTransform(name: "flipped-rotate-") == nil)
        for transform in OutputTransform.allCases {
            #expect(OutputTransform(name: transform.westonName) == transform, "weston's name \(transform.westonName)")
            let sway = OutputTransform(name: transform.swayName)
            #expect(sway?.swayName == transform.rawValue, "sway's name turns back: \(transform)")
            #expect(sway?.swapsAxes == transform.swapsAxes)
        }
        #expect(OutputTransform.rotated90.swayName == "270" && OutputTransform.rotated180.swayName == "180" && OutputTransform.flipped.swayName == "flipped")
    }

    @Test("the picture's corners go to the device's corners, every point to one point, the size swapped by a quarter turn", arguments: OutputTransform.allCases)
    func corners(transform: OutputTransform) {
        let device = transform.deviceSize(of: Self.picture)
        #expect(transform.swapsAxes == (device.width == Self.picture.height && device.width != Self.picture.width))
        let corners = [(0.0, 0.0), (800, 0), (0, 1280), (800, 1280)].map { transform.devicePoint(of: Point(x: $0.0, y: $0.1), in: Self.picture) }
        let deviceCorners = Set([Point(x: 0, y: 0), Point(x: device.width, y: 0), Point(x: 0, y: device.height), Point(x: device.width, y: device.height)])
        #expect(Set(corners) == deviceCorners, "\(corners)")
        var seen = Set<Point>()
        for x in stride(from: 0.0, through: 800, by: 100) {
            for y in stride(from: 0.0, through: 1280, by: 160) {
                let point = transform.devicePoint(of: Point(x: x, y: y), in: Self.picture)
                #expect((0...device.width).contains(point.x) && (0...device.height).contains(point.y))
                seen.insert(point)
            }
        }
        #expect(seen.count == 9 * 9, "two points of the picture on one of the device")
        // A turn keeps distances: a finger's slide is as long on the device.
        let a = transform.devicePoint(of: Point(x: 100, y: 200), in: Self.picture), b = transform.devicePoint(of: Point(x: 130, y: 240), in: Self.picture)
        #expect(abs(a.distance(to: b) - 50) < 1e-9)
    }

    @Test("a quarter turn swaps the device's axes, its range and its resolution; the area's corner is still the device's origin before the turn")
    func geometry() {
        let geometry = VirtualTouchscreenGeometry(area: Rect(x: 1920, y: 0, width: 800, height: 1280), sizeMillimetres: Size(width: 100, height: 160), transform: .rotated90)
        #expect(geometry.maximum == (5119, 3199))
        #expect(geometry.resolution == (32, 32))
        let plain = VirtualTouchscreenGeometry(area: geometry.area, sizeMillimetres: geometry.sizeMillimetres)
        #expect(plain.maximum == (3199, 5119) && plain.units(of: Point(x: 1920 + 10, y: 20)) == (40, 80))
        let turned = geometry.units(of: Point(x: 1920 + 10, y: 20))
        let expected = OutputTransform.rotated90.devicePoint(of: Point(x: 10, y: 20), in: Size(width: 800, height: 1280))
        #expect(turned == (Int32(expected.x * 4), Int32(expected.y * 4)))
    }
}
