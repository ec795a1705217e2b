import TouchModel

/// How a touchscreen's panel is mounted relative to the picture: a quarter-turn rotation.
public enum Rotation: Int, Hashable, Sendable, Codable, CaseIterable {
    case none = 0
    case clockwise90 = 90
    case upsideDown = 180
    case clockwise270 = 270
}

/// How a device's coordinates become screen pixels, configured per device.
///
/// The steps, in order, on coordinates normalised to 0…1 across the axis range:
/// 1. the calibration matrix (libinput's `LIBINPUT_CALIBRATION_MATRIX`, a 2×3 matrix
///    `a b c d e f`: x′ = a·x + b·y + c, y′ = d·x + e·y + f);
/// 2. the horizontal and vertical flips;
/// 3. the rotation, clockwise: at 90°, the panel's top edge runs down the screen's right side,
///    so (x, y) → (1 − y, x), as libinput's matrix `0 -1 1 1 0 0`;
/// 4. scaling to the output's size in pixels, then moving to the output's origin: a panel
///    mounted on the right-hand display of a 3840 × 1080 screen has its output at
///    (1920, 0), 1920 × 1080.
///
/// This is the order `motiond.toml(5)` documents; every consumer of frames (the daemon,
/// motionctl's commands, TUIO, the live page) gets positions from here.
public struct OutputMapping: Hashable, Sendable {
    /// The output's size, in pixels; nil means one pixel per device unit.
    public var outputSize: Size?
    /// Where the output's top-left corner is on the screen, in pixels.
    public var outputOrigin: Point
    /// The rotation, clockwise.
    public var rotation: Rotation
    /// Mirror left and right.
    public var flipHorizontal: Bool
    /// Mirror top and bottom.
    public var flipVertical: Bool
    /// The six numbers of a 2×3 calibration matrix, row by row.
    public var calibration: [Double]

    /// The identity calibration.
    public static let identityCalibration: [Double] = [1, 0, 0, 0, 1, 0]

    /// Creates a mapping; by default one pixel per device unit, unrotated.
    public init(
        outputSize: Size? = nil,
        outputOrigin: Point = Point(x: 0, y: 0),
        rotation: Rotation = .none,
        flipHorizontal: Bool = false,
        flipVertical: Bool = false,
        calibration: [Double] = OutputMapping.identityCalibration
    ) {
        precondition(calibration.count == 6, "a calibration matrix has six numbers")
        self.outputSize = outputSize
        self.outputOrigin = outputOrigin
        self.rotation = rotation
        self.flipHorizontal = flipHorizontal
        self.flipVertical = flipVertical
        self.calibration = calibration
    }

    /// A point in normalised device units (0…1 of the axes' ranges) on the screen, in pixels,
    /// through every step above; `outputSize` is the output's size in pixels.
    public func place(_ point: Point, outputSize: Size) -> Point {
        let m = calibration
        let (u, v) = orient(m[0] * point.x + m[1] * point.y + m[2], m[3] * point.x + m[4] * point.y + m[5], width: 1, height: 1)
        return Point(x: outputOrigin.x + u * outputSize.width, y: outputOrigin.y + v * outputSize.height)
    }

    /// Flips, then rotates clockwise, a point in a `width` × `height` box.
    func orient(_ x: Double, _ y: Double, width: Double, height: Double) -> (Double, Double) {
        let x = flipHorizontal ? width - x : x
        let y = flipVertical ? height - y : y
        switch rotation {
        case .none: return (x, y)
        case .clockwise90: return (height - y, x)
        case .upsideDown: return (width - x, height - y)
        case .clockwise270: return (y, width - x)
        }
    }

    /// The calibration, flips and rotation as one libinput calibration matrix (six numbers,
    /// `a b c d e f`, on normalised coordinates in and out): what `LIBINPUT_CALIBRATION_MATRIX`
    /// must say for a libinput compositor to put a touch where this mapping puts it within
    /// its output, with motiond out of the path. The output's rectangle is not in it: libinput
    /// gives 0…1 of whatever output the compositor maps the device to.
    ///
    /// Every step is affine, so the composite is read off where ``place(_:outputSize:)``'s own
    /// steps take three points, (0, 0), (1, 0) and (0, 1), on a unit output at the origin:
    /// the maths is not written a second time, and cannot drift from the mapping's.
    public var libinputMatrix: [Double] {
        var unit = self
        unit.outputOrigin = Point(x: 0, y: 0)
        let size = Size(width: 1, height: 1)
        let origin = unit.place(Point(x: 0, y: 0), outputSize: size)
        let alongX = unit.place(Point(x: 1, y: 0), outputSize: size)
        let alongY = unit.place(Point(x: 0, y: 1), outputSize: size)
        return [alongX.x - origin.x, alongY.x - origin.x, origin.x,
                alongX.y - origin.y, alongY.y - origin.y, origin.y]
    }

    /// A point of the output, in 0…1 of its rectangle as the picture shows it, taken back
    /// through the rotation and flips into the space the calibration matrix maps into: where
    /// a calibration target is, for ``CalibrationFit``.
    public func calibrationSpace(_ point: Point) -> Point {
        var (x, y) = (point.x, point.y)
        switch rotation {
        case .none: break
        case .clockwise90: (x, y) = (y, 1 - x)
        case .upsideDown: (x, y) = (1 - x, 1 - y)
        case .clockwise270: (x, y) = (1 - y, x)
        }
        if flipHorizontal { x = 1 - x }
        if flipVertical { y = 1 - y }
        return Point(x: x, y: y)
    }

    /// Parses a calibration matrix as udev and libinput write it: six numbers separated by
    /// spaces. Nil when the text is not six finite numbers.
    public static func parseCalibration(_ text: String) -> [Double]? {
        let numbers = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map { Double($0) }
        guard numbers.count == 6, numbers.allSatisfy({ $0?.isFinite == true }) else { return nil }
        return numbers.map { $0! }
    }
}

/// Converts one device's units to screen pixels and to millimetres.
public struct CoordinateMapper: Hashable, Sendable {
    /// The x axis positions come from.
    public let xAxis: AxisInfo
    /// The y axis positions come from.
    public let yAxis: AxisInfo
    /// The configured mapping.
    public let mapping: OutputMapping
    /// Units per millimetre on each axis; nil when millimetres are unknown.
    public let unitsPerMillimetre: GeometryHints.AxisPair?
    private let output: Size

    /// Creates a mapper for a device's position axes, measuring millimetres by the
    /// resolutions they declare.
    public init(xAxis: AxisInfo, yAxis: AxisInfo, mapping: OutputMapping = OutputMapping()) {
        let declared = xAxis.resolution > 0 && yAxis.resolution > 0
        self.init(xAxis: xAxis, yAxis: yAxis, unitsPerMillimetre: declared ? .init(x: Double(xAxis.resolution), y: Double(yAxis.resolution)) : nil, mapping: mapping)
    }

    /// Creates a mapper measuring millimetres only as far as `geometry` believes them: by
    /// the declared resolutions, a hint's, or not at all.
    public init(geometry: PanelGeometry, mapping: OutputMapping = OutputMapping()) {
        self.init(xAxis: geometry.xAxis, yAxis: geometry.yAxis, unitsPerMillimetre: geometry.unitsPerMillimetre, mapping: mapping)
    }

    private init(xAxis: AxisInfo, yAxis: AxisInfo, unitsPerMillimetre: GeometryHints.AxisPair?, mapping: OutputMapping) {
        self.xAxis = xAxis
        self.yAxis = yAxis
        self.unitsPerMillimetre = unitsPerMillimetre
        self.mapping = mapping
        // One pixel per unit by default; a quarter turn swaps which axis spans the width.
        let units = Size(width: xAxis.span, height: yAxis.span)
        let turned = mapping.rotation == .clockwise90 || mapping.rotation == .clockwise270
        self.output = mapping.outputSize ?? (turned ? Size(width: units.height, height: units.width) : units)
    }

    /// The output size in pixels.
    public var outputSize: Size { output }

    /// The output's rectangle on the screen, in pixels: where this device's touches land.
    public var outputRect: Rect { Rect(origin: mapping.outputOrigin, size: output) }

    /// Whether millimetres are known.
    public var hasMillimetres: Bool { unitsPerMillimetre != nil }

    /// A device position in screen pixels. Values outside the axis range are clamped to it,
    /// so a panel that reports a little past its edge never puts a finger off screen.
    public func pixels(x: Int32, y: Int32) -> Point {
        let (u, v) = normalised(x: x, y: y)
        return mapping.place(Point(x: u, y: v), outputSize: output)
    }

    /// A device position in libinput's normalised units, 0…1 across each axis's range: what
    /// the calibration matrix is applied to.
    public func normalised(x: Int32, y: Int32) -> (x: Double, y: Double) {
        // libinput's normalisation: the range is max − min + 1 units, so on a panel with as
        // many units as pixels, unit n lands on pixel n.
        ((Double(Self.clamp(x, xAxis)) - Double(xAxis.minimum)) / xAxis.span,
         (Double(Self.clamp(y, yAxis)) - Double(yAxis.minimum)) / yAxis.span)
    }

    /// A device position in millimetres from the panel's top-left corner as seen on screen
    /// (flipped and rotated like the picture, but not calibrated, which would distort
    /// lengths), or nil when the device does not report its resolution.
    ///
    /// Distances and angles between fingers are computed from these, so that a 45° path
    /// is 45° even when the X and Y resolutions differ.
    public func millimetres(x: Int32, y: Int32) -> Point? {
        guard let resolution = unitsPerMillimetre else { return nil }
        let mx = (Double(Self.clamp(x, xAxis)) - Double(xAxis.minimum)) / resolution.x
        let my = (Double(Self.clamp(y, yAxis)) - Double(yAxis.minimum)) / resolution.y
        let width = (Double(xAxis.maximum) - Double(xAxis.minimum)) / resolution.x
        let height = (Double(yAxis.maximum) - Double(yAxis.minimum)) / resolution.y
        let (u, v) = mapping.orient(mx, my, width: width, height: height)
        return Point(x: u, y: v)
    }


    private static func clamp(_ value: Int32, _ axis: AxisInfo) -> Int32 {
        Swift.min(Swift.max(value, axis.minimum), axis.maximum)
    }
}
