import TouchModel

/// What a device's contact filters do: the `[[device]]` keys `stuck_after`, `palm_size_mm`,
/// `palm_size`, `jump_mm` and `hysteresis`, and what the filters measure in (`resolution`,
/// `size_mm`, `touch_resolution`, from the entry or a quirk).
///
/// Each default is safe on an ordinary panel: it never touches a finger that taps, drags or
/// rests for a while, and acts only on what no finger does (a contact that stays put for half
/// a minute, one larger than a palm's width, one that crosses 5 cm between two frames, jitter
/// within the firmware's own fuzz).
public struct ContactFilterSettings: Hashable, Sendable {
    /// How big a contact may be before it is a palm.
    public enum PalmSize: Hashable, Sendable {
        /// 30 mm where the device reports `ABS_MT_TOUCH_MAJOR` and a resolution to measure
        /// it in; off elsewhere.
        case automatic
        /// Larger than this many millimetres (needs a resolution).
        case millimetres(Double)
        /// Larger than this many device units of `ABS_MT_TOUCH_MAJOR`.
        case units(Int32)
        /// Never.
        case off
    }

    /// Seconds a contact may stay within the stuck slop before it is cancelled; 0 turns the
    /// filter off.
    public var stuckAfter: Double
    /// How far a contact must move to count as moving, for the stuck filter: the tap slop.
    public var stuckSlop: PanelDistance
    /// When a contact is a palm.
    public var palmSize: PalmSize
    /// Millimetres a contact may move between two of its reports within the jump window
    /// (``jumpWindow(frameInterval:)``);
    /// 0 turns the filter off (it is off, too, on a device without a resolution). Contacts
    /// whose positions the panel exchanged are re-paired with their fingers rather than
    /// cancelled (``ContactFilters``).
    public var jumpMillimetres: Double
    /// Half the axis's fuzz of hysteresis on every contact.
    public var hysteresis: Bool
    /// The filters of touches no finger made (``PhantomTouchSettings``).
    public var phantoms = PhantomTouchSettings()
    /// What the configuration or a quirk says of the panel's size, for a panel whose own word
    /// is not believed (``PanelGeometry``).
    public var panel = GeometryHints.none
    /// The quirk (motiond's data on misdescribed panels) that set any of these, for `devices`.
    public var quirk: String?

    /// The shortest jump window, and the time the jump limit is per: on a panel whose frames
    /// are 10 ms apart or less, a move farther than the limit within 30 ms is a jump; beyond
    /// the window, a finger may simply have moved fast while the panel was slow to report.
    public static let jumpWindow = 0.030
    /// The jump window in the panel's frames: on a slower panel than 100 Hz the window is
    /// this many of its frames, so that its jumps are seen at all (a 20 Hz infrared frame
    /// reports every 50 ms), and a move over a gap longer than ``jumpWindow`` is a jump only
    /// beyond the limit per ``jumpWindow`` (the same speed), so that its fast fingers are not.
    public static let jumpFrames = 3.0

    /// The longest gap between a contact's reports over which a long move is a jump, given
    /// the panel's measured frame interval (nil until measured).
    public static func jumpWindow(frameInterval: Double?) -> Double {
        Swift.max(jumpWindow, jumpFrames * (frameInterval ?? 0))
    }
    /// The palm size used by ``PalmSize/automatic``.
    public static let automaticPalmMillimetres = 30.0
    /// On a panel whose size is not believed, a jump is a move farther than this fraction of
    /// its output's diagonal within one frame: a quarter of the screen in at most 30 ms is
    /// 8 m/s on a 15-inch panel, faster than any finger, and no ordinary drag comes near it
    /// on a larger one.
    public static let relativeJump = 0.25
    /// A hysteresis margin wider than this fraction of an axis would hold fingers still:
    /// such a fuzz is not the firmware's noise.
    public static let largestHysteresisFraction = 0.01
    /// How long after landing a contact's palm verdict stays open: a contact palm-sized in
    /// its first samples and finger-sized within this time is a finger (some firmware reports
    /// a landing finger's first size several times too large). A palm that shrinks later, as
    /// a lifting palm does, stays a palm.
    public static let palmVerdictWindow = 0.1

    /// The defaults.
    public init(
        stuckAfter: Double = 30, stuckSlop: PanelDistance = PanelDistance(millimetres: 3, pixels: 16),
        palmSize: PalmSize = .automatic, jumpMillimetres: Double = 50, hysteresis: Bool = true
    ) {
        self.stuckAfter = stuckAfter
        self.stuckSlop = stuckSlop
        self.palmSize = palmSize
        self.jumpMillimetres = jumpMillimetres
        self.hysteresis = hysteresis
    }

    /// Every filter off: what the device sent (`motionctl frames --raw`).
    public static let off: ContactFilterSettings = {
        var off = ContactFilterSettings(stuckAfter: 0, palmSize: .off, jumpMillimetres: 0, hysteresis: false)
        off.phantoms = .off
        return off
    }()
}

/// The filters' settings as they apply to one device: thresholds in its units, what they are
/// measured in, and for each filter that is off on it, why.
public struct ResolvedContactFilters: Hashable, Sendable {
    /// What the device's size is believed to be, and why: the filters measure in it.
    public var geometry: PanelGeometry
    /// The quirk that set any of the settings, if one did.
    public var quirk: String?
    /// Seconds before a still contact is cancelled; nil when off.
    public var stuckAfter: Double?
    /// What the filters measure distances in: millimetres where the device's size is
    /// believed, else pixels.
    public var unit: DistanceUnit
    /// The stuck slop, in ``unit``.
    public var stuckSlop: Length
    /// `ABS_MT_TOUCH_MAJOR` above which a contact is a palm, in device units; nil when off.
    public var palmUnits: Int32?
    /// The palm size in millimetres, when it is known in millimetres.
    public var palmMillimetres: Double?
    /// How far within one frame makes a jump, in ``unit``: where the device's size is not
    /// believed, a fraction of the output's diagonal; nil when off.
    public var jump: Length?
    /// The hysteresis margin on each axis, in device units; nil when off.
    public var hysteresisMargin: Margin?
    /// The phantom-touch filters' settings.
    public var phantoms: PhantomTouchSettings
    /// Whether the panel is taken for an infrared or optical frame (its ghosts are filtered).
    public var infrared: Bool
    /// Why a filter asked for is off on this device, or measures differently, one line each.
    public var notes: [String]

    /// Millimetres within one frame that make a jump; nil when off or measured in pixels.
    public var jumpMillimetres: Double? { jump?.unit == .millimetres ? jump?.value : nil }

    /// Pixels within one frame that make a jump, on a panel whose size is not believed.
    public var jumpPixels: Double? { jump?.unit == .pixels ? jump?.value : nil }

    /// Half-widths of an ellipse, in device units.
    public struct Margin: Hashable, Sendable {
        public var x: Int32
        public var y: Int32
    }

    /// Resolves `settings` for a device as its description has it, mapped by `mapping`.
    ///
    /// - Precondition: the device has position axes (``DeviceKind/isTouchscreen``).
    public init(_ settings: ContactFilterSettings, device: DeviceDescription, mapping: OutputMapping = OutputMapping()) {
        let axes = device.positionAxes!
        self.init(settings, xAxis: axes.x, yAxis: axes.y, touchMajor: device.touchMajorAxis, mapping: mapping, name: device.name)
    }

    /// Resolves `settings` for a device with the given position axes and, when reported,
    /// its `ABS_MT_TOUCH_MAJOR` axis, mapped by `mapping`.
    /// `name` is the device's, which may say it is an infrared frame.
    public init(_ settings: ContactFilterSettings, xAxis declaredX: AxisInfo, yAxis declaredY: AxisInfo, touchMajor: AxisInfo?,
                mapping: OutputMapping = OutputMapping(), name: String = "") {
        geometry = PanelGeometry(xAxis: declaredX, yAxis: declaredY, touchMajor: touchMajor, mapping: mapping, hints: settings.panel)
        quirk = settings.quirk
        let (xAxis, yAxis) = (geometry.xAxis, geometry.yAxis)
        var notes: [String] = []
        let hasResolution = geometry.positions.isTrusted
        stuckAfter = settings.stuckAfter > 0 ? settings.stuckAfter : nil
        unit = DistanceUnit(physical: hasResolution)
        stuckSlop = settings.stuckSlop.length(in: unit)

        (palmUnits, palmMillimetres) = Self.palm(settings.palmSize, touchMajor: touchMajor, geometry: geometry, notes: &notes)
        jump = Self.jump(settings.jumpMillimetres, trusted: hasResolution, xAxis: xAxis, yAxis: yAxis, mapping: mapping, notes: &notes)
        hysteresisMargin = settings.hysteresis ? Self.hysteresis(xAxis: xAxis, yAxis: yAxis, notes: &notes) : nil
        phantoms = settings.phantoms
        infrared = settings.phantoms.infrared ?? InfraredFrame.declares(name: name)
        if settings.phantoms.infrared == nil && infrared {
            notes.append("an infrared or optical frame, by its name: two fingers' ghost corners are not fingers (infrared = false turns this off)")
        }
        self.notes = notes
    }

    /// The palm size in `ABS_MT_TOUCH_MAJOR`'s units and in millimetres, or nil for none.
    /// The axis is in surface units (the kernel's multi-touch protocol); its millimetres are
    /// believed only where PanelGeometry checked them.
    private static func palm(_ size: ContactFilterSettings.PalmSize, touchMajor: AxisInfo?, geometry: PanelGeometry,
                             notes: inout [String]) -> (units: Int32?, millimetres: Double?) {
        let majorResolution = geometry.touchResolution
        let wanted: (size: Double, explicit: Bool)?
        switch size {
        case .off, .units: wanted = nil
        case .automatic: wanted = (ContactFilterSettings.automaticPalmMillimetres, false)
        case .millimetres(let size): wanted = (size, true)
        }
        if case .units(let units) = size {
            if touchMajor == nil { notes.append("palm_size is set but the device does not report ABS_MT_TOUCH_MAJOR: palms are not detected by size") }
            return (touchMajor == nil ? nil : units, majorResolution > 0 ? Double(units) / majorResolution : nil)
        }
        if let wanted, touchMajor != nil, majorResolution > 0 {
            return (Int32(clamping: Int64((wanted.size * majorResolution).rounded())), wanted.size)
        }
        if let wanted, touchMajor == nil, wanted.explicit {
            notes.append("palm_size_mm is set but the device does not report ABS_MT_TOUCH_MAJOR: palms are not detected by size")
        } else if wanted != nil, touchMajor != nil {
            notes.append("palms are not detected by size: \(geometry.touchSize.reason) (set touch_resolution, or palm_size in its units); a palm the device marks as one (MT_TOOL_PALM) still is")
        }
        return (nil, nil)
    }

    /// How far a finger may move within a frame: in millimetres where the device's size is
    /// believed, else a part of the output's diagonal; nil when jumps are not filtered.
    private static func jump(_ millimetres: Double, trusted: Bool, xAxis: AxisInfo, yAxis: AxisInfo, mapping: OutputMapping,
                             notes: inout [String]) -> Length? {
        guard millimetres > 0 else { return nil }
        if trusted { return .millimetres(millimetres) }
        let output = CoordinateMapper(xAxis: xAxis, yAxis: yAxis, mapping: mapping).outputSize
        let diagonal = (output.width * output.width + output.height * output.height).squareRoot()
        notes.append("jumps are measured in pixels, farther than \(compactNumber(ContactFilterSettings.relativeJump * 100))% of the output's diagonal (\(compactNumber((diagonal * ContactFilterSettings.relativeJump).rounded())) px) within one frame: the device's size is not believed")
        return .pixels(diagonal * ContactFilterSettings.relativeJump)
    }

    /// The hysteresis margin: half the fuzz, as libinput does on touchscreens; an axis
    /// without fuzz (or with fuzz 1) borrows the other's, so the ellipse never flattens to a
    /// line. Nil without fuzz, or when the fuzz is too large a part of the axes to be noise.
    private static func hysteresis(xAxis: AxisInfo, yAxis: AxisInfo, notes: inout [String]) -> Margin? {
        guard xAxis.fuzz > 0 || yAxis.fuzz > 0 else { return nil }
        var x = Swift.max(xAxis.fuzz / 2, 0), y = Swift.max(yAxis.fuzz / 2, 0)
        if x == 0 { x = y }
        if y == 0 { y = x }
        let margin = x > 0 ? Margin(x: x, y: y) : Margin(x: 1, y: 1)
        let fraction = Swift.max(Double(margin.x) / xAxis.span, Double(margin.y) / yAxis.span)
        if fraction > ContactFilterSettings.largestHysteresisFraction {
            notes.append("no hysteresis: the device's fuzz (x \(xAxis.fuzz), y \(yAxis.fuzz)) is too large a part of its axes to be noise")
            return nil
        }
        return margin
    }
}
