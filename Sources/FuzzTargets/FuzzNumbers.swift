import MotionConfiguration
import MotionCore
import TouchInput

/// The conversions of floating values that a configuration, a recording or a device can
/// reach, on any doubles (the input read as 8-byte values, NaNs, infinities and subnormals
/// among them): none may trap, as `Int(_:)` of 1e-300 mm's resolution did.
///
/// - a virtual touchscreen's geometry from any area and size: its axes' maxima, its
///   resolution (both 0 or both at least 1) and a point's units, within the axes;
/// - ``PanelClock`` on any stamps read at any times: a frame is never put after it was read;
/// - ``FixedWidthInteger/init(saturating:)``: the nearest value of the type, 0 for NaN.
func fuzzNumbers(_ bytes: [UInt8]) throws {
    var numbers: [Double] = stride(from: 0, to: bytes.count - 7, by: 8).map { start in
        Double(bitPattern: bytes[start..<start + 8].enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) })
    }
    guard numbers.count >= 8 else { return }
    func next() -> Double { numbers.isEmpty ? 0 : numbers.removeFirst() }

    let geometry = VirtualTouchscreenGeometry(area: Rect(x: next(), y: next(), width: next(), height: next()),
                                              sizeMillimetres: Size(width: next(), height: next()))
    let maximum = geometry.maximum, resolution = geometry.resolution
    try fuzzCheck(maximum.x >= 0 && maximum.y >= 0, "maximum \(maximum) of \(geometry)")
    try fuzzCheck((resolution.x == 0) == (resolution.y == 0) && resolution.x >= 0 && resolution.y >= 0, "resolution \(resolution) of \(geometry)")
    let units = geometry.units(of: Point(x: next(), y: next()))
    try fuzzCheck((0...maximum.x).contains(units.x) && (0...maximum.y).contains(units.y), "units \(units) outside \(maximum)")
    let problem = VirtualTouchscreenSettings.sizeProblem(geometry.sizeMillimetres!)
    try fuzzCheck(problem == nil || !(geometry.sizeMillimetres!.width >= 20 && geometry.sizeMillimetres!.width <= 5000
        && geometry.sizeMillimetres!.height >= 20 && geometry.sizeMillimetres!.height <= 5000), "a plausible size refused")

    var clock = PanelClock()
    while numbers.count >= 2 {
        let stamp = next(), now = next()
        let time = clock.time(of: stamp, readAt: now)
        if now.isFinite { try fuzzCheck(time <= now, "stamp \(stamp) read at \(now) put at \(time), after it was read") }
    }
    for value in [geometry.area.size.width, geometry.area.origin.x, Double(units.x)] {
        let converted = Int32(saturating: value)
        if value.isNaN { try fuzzCheck(converted == 0, "NaN is \(converted)") }
        else if value >= Double(Int32.max) { try fuzzCheck(converted == .max, "\(value) is \(converted)") }
        else if value <= Double(Int32.min) { try fuzzCheck(converted == .min, "\(value) is \(converted)") }
        else { try fuzzCheck(Double(converted) == value.rounded(.towardZero), "\(value) is \(converted)") }
    }
}
