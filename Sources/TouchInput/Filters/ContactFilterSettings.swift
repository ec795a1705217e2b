import TouchModel

/// What a device's contact filters do: the `[[device]]` keys `stuck_after`, `palm_size_mm`,
/// `palm_size`, `jump_mm` and `hysteresis`.
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
    /// How far a contact must move to count as moving, for the stuck filter: the tap slop
    /// (millimetres where the device has a resolution, else pixels).
    public var stuckSlopMillimetres: Double
    public var stuckSlopPixels: Double
    /// When a contact is a palm.
    public var palmSize: PalmSize
    /// Millimetres a contact may move within one frame of at most ``jumpWindow`` seconds;
    /// 0 turns the filter off (it is off, too, on a device without a resolution).
    public var jumpMillimetres: Double
    /// Half the axis's fuzz of hysteresis on every contact.
    public var hysteresis: Bool

    /// The longest frame gap over which a long move is a jump: beyond it, a finger may
    /// simply have moved fast while the panel was slow to report.
    public static let jumpWindow = 0.030
    /// The palm size used by ``PalmSize/automatic``.
    public static let automaticPalmMillimetres = 30.0

    /// The defaults.
    public init(
        stuckAfter: Double = 30, stuckSlopMillimetres: Double = 3, stuckSlopPixels: Double = 16,
        palmSize: PalmSize = .automatic, jumpMillimetres: Double = 50, hysteresis: Bool = true
    ) {
        self.stuckAfter = stuckAfter
        self.stuckSlopMillimetres = stuckSlopMillimetres
        self.stuckSlopPixels = stuckSlopPixels
        self.palmSize = palmSize
        self.jumpMillimetres = jumpMillimetres
        self.hysteresis = hysteresis
    }

    /// Every filter off: what the device sent (`motionctl frames --raw`).
    public static let off = ContactFilterSettings(stuckAfter: 0, palmSize: .off, jumpMillimetres: 0, hysteresis: false)
}

/// The filters' settings as they apply to one device: thresholds in its units, and for
/// each filter that is off on it, why.
public struct ResolvedContactFilters: Hashable, Sendable {
    /// Seconds before a still contact is cancelled; nil when off.
    public var stuckAfter: Double?
    /// The stuck slop, in millimetres (when the device has a resolution) or pixels.
    public var stuckSlop: Double
    public var stuckSlopIsPhysical: Bool
    /// `ABS_MT_TOUCH_MAJOR` above which a contact is a palm, in device units; nil when off.
    public var palmUnits: Int32?
    /// The palm size in millimetres, when it is known in millimetres.
    public var palmMillimetres: Double?
    /// Millimetres within one frame that make a jump; nil when off.
    public var jumpMillimetres: Double?
    /// The hysteresis margin on each axis, in device units; nil when off.
    public var hysteresisMargin: Margin?
    /// Why a filter asked for is off on this device, one line each.
    public var notes: [String]

    /// Half-widths of an ellipse, in device units.
    public struct Margin: Hashable, Sendable {
        public var x: Int32
        public var y: Int32
    }

    /// Resolves `settings` for a device as its description has it: its position axes and,
    /// when it reports one, its `ABS_MT_TOUCH_MAJOR` axis.
    ///
    /// - Precondition: the device has position axes (``DeviceKind/isTouchscreen``).
    public init(_ settings: ContactFilterSettings, device: DeviceDescription) {
        let axes = device.positionAxes!
        let major = device.has(EventType.absolute, AbsoluteAxis.touchMajor) ? device.axes[AbsoluteAxis.touchMajor] : nil
        self.init(settings, xAxis: axes.x, yAxis: axes.y, touchMajor: major)
    }

    /// Resolves `settings` for a device with the given position axes and, when reported,
    /// its `ABS_MT_TOUCH_MAJOR` axis.
    public init(_ settings: ContactFilterSettings, xAxis: AxisInfo, yAxis: AxisInfo, touchMajor: AxisInfo?) {
        var notes: [String] = []
        let hasResolution = xAxis.resolution > 0 && yAxis.resolution > 0
        stuckAfter = settings.stuckAfter > 0 ? settings.stuckAfter : nil
        stuckSlopIsPhysical = hasResolution
        stuckSlop = hasResolution ? settings.stuckSlopMillimetres : settings.stuckSlopPixels

        // ABS_MT_TOUCH_MAJOR is in surface units (the kernel's multi-touch protocol): its
        // own resolution if it has one, else the finer of the position axes', so that a
        // contact is never measured larger than it is.
        let majorResolution = touchMajor.map { $0.resolution > 0 ? $0.resolution : Swift.max(xAxis.resolution, yAxis.resolution) } ?? 0
        let wantedPalm: (size: Double, explicit: Bool)?
        switch settings.palmSize {
        case .off, .units: wantedPalm = nil
        case .automatic: wantedPalm = (ContactFilterSettings.automaticPalmMillimetres, false)
        case .millimetres(let size): wantedPalm = (size, true)
        }
        if case .units(let units) = settings.palmSize {
            palmUnits = touchMajor == nil ? nil : units
            palmMillimetres = majorResolution > 0 ? Double(units) / Double(majorResolution) : nil
            if touchMajor == nil { notes.append("palm_size is set but the device does not report ABS_MT_TOUCH_MAJOR: palms are not detected by size") }
        } else if let wantedPalm, touchMajor != nil, majorResolution > 0 {
            palmUnits = Int32(clamping: Int64((wantedPalm.size * Double(majorResolution)).rounded()))
            palmMillimetres = wantedPalm.size
        } else {
            palmUnits = nil
            palmMillimetres = nil
            if let wantedPalm, touchMajor == nil, wantedPalm.explicit {
                notes.append("palm_size_mm is set but the device does not report ABS_MT_TOUCH_MAJOR: palms are not detected by size")
            } else if wantedPalm != nil, touchMajor != nil {
                notes.append("palms are not detected by size: the device reports ABS_MT_TOUCH_MAJOR without a resolution; set palm_size in its units")
            }
        }

        if settings.jumpMillimetres > 0 && hasResolution {
            jumpMillimetres = settings.jumpMillimetres
        } else {
            jumpMillimetres = nil
            if settings.jumpMillimetres > 0 { notes.append("jumps are not detected: the device reports no resolution, so distances in millimetres are unknown") }
        }

        if settings.hysteresis && (xAxis.fuzz > 0 || yAxis.fuzz > 0) {
            // Half the fuzz, as libinput does on touchscreens; an axis without fuzz (or with
            // fuzz 1) borrows the other's, so the ellipse never flattens to a line.
            var x = Swift.max(xAxis.fuzz / 2, 0), y = Swift.max(yAxis.fuzz / 2, 0)
            if x == 0 { x = y }
            if y == 0 { y = x }
            hysteresisMargin = x > 0 ? Margin(x: x, y: y) : Margin(x: 1, y: 1)
        } else {
            hysteresisMargin = nil
        }
        self.notes = notes
    }
}
