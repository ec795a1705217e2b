import TouchModel

/// What the configuration or a quirk says of a panel's size, where its firmware cannot be
/// believed: libinput's `AttrResolutionHint` and `AttrSizeHint`, systemd's `EVDEV_ABS_*`
/// resolutions. One given is believed exactly, fractions of a unit per millimetre too, as
/// long as the panel it describes is a touchscreen's size (``PanelGeometry/plausibleSide``).
public struct GeometryHints: Hashable, Sendable {
    /// Units per millimetre of the position axes (`resolution = [x, y]`).
    public var resolution: AxisPair?
    /// The touch area's width and height in millimetres as the device's axes run
    /// (`size_mm = [width, height]`); ignored when ``resolution`` is given.
    public var size: Size?
    /// Units per millimetre of `ABS_MT_TOUCH_MAJOR` (`touch_resolution`).
    public var touchResolution: Double?
    /// Who said so, for `devices` and the log: "the configuration", "quirk NAME".
    public var source: String

    /// Two numbers, one per position axis.
    public struct AxisPair: Hashable, Sendable {
        public var x: Double
        public var y: Double
        public init(x: Double, y: Double) { self.x = x; self.y = y }
    }

    /// Hints from `source`.
    public init(resolution: AxisPair? = nil, size: Size? = nil, touchResolution: Double? = nil, source: String = "the configuration") {
        self.resolution = resolution
        self.size = size
        self.touchResolution = touchResolution
        self.source = source
    }

    /// No hints: the firmware's word, checked.
    public static let none = GeometryHints()

    /// Whether any hint is given.
    public var isEmpty: Bool { resolution == nil && size == nil && touchResolution == nil }
}

/// Whether motiond believes what a touchscreen says of its own size, decided once per device.
///
/// Firmware lies: panels declare 1 unit per millimetre on axes 30,000 units long (a panel
/// 30 metres wide), or a touch-size axis whose resolution disagrees tenfold with the
/// positions'. Every millimetre motiond measures (the jump and palm filters, the stuck slop,
/// the gestures' slop and angles, `millimetres` in `screen.contacts`) would carry the lie, and
/// a filter on by default would drop real fingers. So a declared size is used only where it
/// is plausible for a touchscreen; elsewhere the device is treated as one that declares no
/// resolution (distances in screen pixels), and the filters say what they do instead.
///
/// The checks, each a property of touchscreens, not of any one panel:
/// - each side between ``plausibleSide`` (a watch to a video wall);
/// - both axes declare a resolution, within ``largestResolutionRatio`` of each other;
/// - the panel's shape agrees with the output it is mapped to, within ``largestAspectMismatch``
///   (a panel covers its display);
/// - `ABS_MT_TOUCH_MAJOR` is in the positions' units (the kernel's multitouch protocol): its
///   own resolution, if any, within ``largestTouchResolutionRatio`` of theirs, and its range no
///   longer than the panel's diagonal.
public struct PanelGeometry: Hashable, Sendable {
    /// Why a size is believed or not.
    public enum Verdict: Hashable, Sendable {
        /// The device's own, checked.
        case declared
        /// From a hint (``GeometryHints/source``).
        case hinted(String)
        /// Declared, but not believed: why.
        case implausible(String)
        /// Not declared (or, for the touch size, no `ABS_MT_TOUCH_MAJOR`): why.
        case unknown(String)

        /// Whether millimetres are known.
        public var isTrusted: Bool {
            switch self {
            case .declared, .hinted: return true
            case .implausible, .unknown: return false
            }
        }

        /// `declared`, `hinted`, `implausible` or `unknown`, for JSON and metrics.
        public var name: String {
            switch self {
            case .declared: return "declared"
            case .hinted: return "hinted"
            case .implausible: return "implausible"
            case .unknown: return "unknown"
            }
        }

        /// The reason, or the hint's source; empty for `declared`.
        public var reason: String {
            switch self {
            case .declared: return ""
            case .hinted(let source): return "from \(source)"
            case .implausible(let reason), .unknown(let reason): return reason
            }
        }
    }

    /// Millimetres a side of a touchscreen can measure: a smartwatch's to a 200-inch wall's.
    public static let plausibleSide = 20.0...5000.0
    /// How far apart the axes' resolutions may be: a 32:9 panel with as many units across
    /// as down is 3.6.
    public static let largestResolutionRatio = 4.0
    /// How far the panel's shape may be from its output's: a 4:3 panel stretched over 16:9
    /// is 1.33; a panel declaring a square on a 16:9 display is 1.78.
    public static let largestAspectMismatch = 1.5
    /// How far `ABS_MT_TOUCH_MAJOR`'s own resolution may be from the positions'.
    public static let largestTouchResolutionRatio = 2.0

    /// Whether the position axes' millimetres are believed, and why.
    public var positions: Verdict
    /// Whether `ABS_MT_TOUCH_MAJOR`'s millimetres are believed, and why.
    public var touchSize: Verdict
    /// The position axes as the device declares them.
    public var xAxis: AxisInfo
    public var yAxis: AxisInfo
    /// Units per millimetre of the position axes where millimetres are believed: the
    /// declared resolutions, or a hint's exactly as given; nil where they are not believed.
    /// Fractional, unlike the kernel's: a size hint divides an axis into fractions of a
    /// unit per millimetre, and rounding them to whole units made a 1500-mm side 799 mm.
    public var unitsPerMillimetre: GeometryHints.AxisPair?
    /// Units per millimetre of `ABS_MT_TOUCH_MAJOR`; 0 when its millimetres are not believed.
    public var touchResolution: Double
    /// Where a size not believed came from: a hint's source, or nil for the device's own.
    private var refusedHint: String?

    /// Decides for a device's position axes and, when it reports one, its touch-size axis,
    /// mapped by `mapping` (whose output size and rotation give the shape it should have).
    public init(xAxis: AxisInfo, yAxis: AxisInfo, touchMajor: AxisInfo?, mapping: OutputMapping, hints: GeometryHints = .none) {
        self.xAxis = xAxis
        self.yAxis = yAxis
        touchResolution = 0

        // A size is from the first unit to the last, as libinput's size hint is: the panel
        // then measures exactly what the hint says.
        if let hinted = hints.resolution ?? hints.size.map({ size in
            GeometryHints.AxisPair(x: Self.length(xAxis) / size.width, y: Self.length(yAxis) / size.height)
        }) {
            // The configuration refuses a size outside the plausible sides; a resolution it
            // cannot judge alone, since the sides depend on the axes it is given for.
            let width = Self.length(xAxis) / hinted.x, height = Self.length(yAxis) / hinted.y
            if [width, height].allSatisfy(Self.plausibleSide.contains) {
                unitsPerMillimetre = hinted
                positions = .hinted(hints.source)
            } else {
                positions = .implausible("the resolution from \(hints.source) makes it \(Self.smallDimensions(width, height)), not a touchscreen's size")
                refusedHint = hints.source
            }
        } else {
            positions = Self.judge(xAxis, yAxis, mapping: mapping)
            if positions.isTrusted { unitsPerMillimetre = GeometryHints.AxisPair(x: Double(xAxis.resolution), y: Double(yAxis.resolution)) }
        }

        guard let touchMajor else {
            touchSize = .unknown("the device reports no ABS_MT_TOUCH_MAJOR")
            return
        }
        if let hinted = hints.touchResolution {
            touchResolution = hinted
            touchSize = .hinted(hints.source)
            return
        }
        guard let surfaceResolution = unitsPerMillimetre else {
            touchSize = .unknown("its units are the positions', whose millimetres are not believed")
            return
        }
        let surface = Swift.max(surfaceResolution.x, surfaceResolution.y)
        let own = Double(touchMajor.resolution)
        if own > 0, Swift.max(own, surface) / Swift.min(own, surface) > Self.largestTouchResolutionRatio {
            touchSize = .implausible("ABS_MT_TOUCH_MAJOR declares \(compactNumber(own)) units/mm where the positions' are \(compactNumber(surface))")
            return
        }
        let resolution = own > 0 ? own : surface
        let longest = Double(touchMajor.maximum) / resolution
        let diagonal = (xAxis.span / surfaceResolution.x).hypot(yAxis.span / surfaceResolution.y)
        if longest > diagonal {
            touchSize = .implausible("ABS_MT_TOUCH_MAJOR reaches \(compactNumber(longest.rounded())) mm, more than the panel's diagonal (\(compactNumber(diagonal.rounded())) mm)")
            return
        }
        touchResolution = resolution
        touchSize = .declared
    }

    /// Decides for a device as its description has it.
    ///
    /// - Precondition: the device has position axes.
    public init(device: DeviceDescription, mapping: OutputMapping, hints: GeometryHints = .none) {
        let axes = device.positionAxes!
        self.init(xAxis: axes.x, yAxis: axes.y, touchMajor: device.touchMajorAxis, mapping: mapping, hints: hints)
    }

    /// The touch area in millimetres, when believed (from the first unit to the last, as
    /// ``AxisInfo/lengthInMillimetres`` measures it).
    public var size: Size? {
        guard let unitsPerMillimetre else { return nil }
        return Size(width: Self.length(xAxis) / unitsPerMillimetre.x, height: Self.length(yAxis) / unitsPerMillimetre.y)
    }

    /// An axis's units from the first to the last (one fewer than ``AxisInfo/span``).
    private static func length(_ axis: AxisInfo) -> Double { Double(axis.maximum) - Double(axis.minimum) }

    /// One line each for the positions and the touch size: what `devices` and the log say.
    public var explanation: [String] {
        var lines: [String] = []
        switch positions {
        case .declared:
            if let size { lines.append("size \(compactNumber((size.width * 10).rounded() / 10)) × \(compactNumber((size.height * 10).rounded() / 10)) mm as the device declares it, believed") }
        case .hinted(let source):
            if let size { lines.append("size \(compactNumber((size.width * 10).rounded() / 10)) × \(compactNumber((size.height * 10).rounded() / 10)) mm from \(source)") }
        case .implausible(let reason):
            let whose = refusedHint.map { "the size from \($0)" } ?? "the size the device declares"
            lines.append("\(whose) is not believed: \(reason); distances are measured in screen pixels")
        case .unknown(let reason):
            lines.append("size unknown: \(reason); distances are measured in screen pixels")
        }
        switch touchSize {
        case .declared: lines.append("contact sizes (ABS_MT_TOUCH_MAJOR) in millimetres, \(compactNumber(touchResolution)) units/mm")
        case .hinted(let source): lines.append("contact sizes (ABS_MT_TOUCH_MAJOR) at \(compactNumber(touchResolution)) units/mm from \(source)")
        case .implausible(let reason): lines.append("contact sizes are not believed: \(reason)")
        case .unknown: break
        }
        return lines
    }

    /// The verdict on declared position axes.
    private static func judge(_ x: AxisInfo, _ y: AxisInfo, mapping: OutputMapping) -> Verdict {
        switch (x.resolution > 0, y.resolution > 0) {
        case (false, false): return .unknown("the device declares no resolution")
        case (true, false), (false, true): return .implausible("only one axis declares a resolution (x \(x.resolution), y \(y.resolution) units/mm)")
        case (true, true): break
        }
        let (rx, ry) = (Double(x.resolution), Double(y.resolution))
        if Swift.max(rx, ry) / Swift.min(rx, ry) > largestResolutionRatio {
            return .implausible("its axes' resolutions disagree (x \(x.resolution), y \(y.resolution) units/mm)")
        }
        let width = x.span / rx, height = y.span / ry
        for side in [width, height] where !plausibleSide.contains(side) {
            return .implausible("it declares \(dimensions(width, height)), not a touchscreen's size")
        }
        if let output = mapping.outputSize, output.width > 0, output.height > 0 {
            // The output in the panel's own orientation.
            let turned = mapping.rotation == .clockwise90 || mapping.rotation == .clockwise270
            let outputAspect = turned ? output.height / output.width : output.width / output.height
            let mismatch = Swift.max(width / height, outputAspect) / Swift.min(width / height, outputAspect)
            if mismatch > largestAspectMismatch {
                return .implausible("it declares \(dimensions(width, height)), a shape unlike its output's (\(compactNumber(output.width)) × \(compactNumber(output.height)) px)")
            }
        }
        return .declared
    }

    private static func dimensions(_ width: Double, _ height: Double) -> String {
        "\(compactNumber(width.rounded())) × \(compactNumber(height.rounded())) mm"
    }

    /// "W × H mm" to three significant digits, so that a panel a hint makes a fraction of
    /// a millimetre wide does not read as 0 mm.
    private static func smallDimensions(_ width: Double, _ height: Double) -> String {
        func significant(_ value: Double) -> String {
            var scale = 1.0
            while value > 0, value * scale < 100, scale < 1e6 { scale *= 10 }
            return compactNumber((value * scale).rounded() / scale)
        }
        return "\(significant(width)) × \(significant(height)) mm"
    }
}

private extension Double {
    func hypot(_ other: Double) -> Double { (self * self + other * other).squareRoot() }
}
