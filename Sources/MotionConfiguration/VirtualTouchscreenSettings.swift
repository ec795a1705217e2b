import MotionCore
import TouchInput

/// One virtual touchscreen (`[[virtual_touchscreen]]`, or made for a `[[device]]` that names
/// one): the clean touchscreen motiond shows the apps on an output, carrying the panels whose
/// `[[device]]` entries name it (`virtual_touchscreen = "HDMI-A-1"`), which motiond grabs.
///
/// One device per output, since a compositor maps a touchscreen to one output: the output's
/// name names the device (`motiond virtual touchscreen HDMI-A-1`), and the area is the part of
/// motiond's screen that output shows.
public struct VirtualTouchscreenSettings: Sendable, Hashable {
    /// The compositor's name of the output (the DRM connector, `HDMI-A-1`): the device's name
    /// ends with it, and a udev rule can set `WL_OUTPUT` to it.
    public var output: String
    /// The part of the screen the output shows, in pixels; nil for the whole screen.
    public var area: Rect?
    /// The area's physical size, which gives the device its resolution; nil when unknown.
    public var sizeMillimetres: Size?
    /// Where it was defined, FILE:LINE, for `config check`; nil when a `[[device]]` made it.
    public var definedAt: String?
    /// How a touch the apps saw begin ends when motiond takes it away (`cancel`): withdrawn
    /// unless the table says the compositor passes cancels on.
    public var cancel: CancelledTouchEnding
    /// How the compositor turns the output (`transform`), which the device's axes turn back.
    public var transform: OutputTransform

    public init(output: String, area: Rect? = nil, sizeMillimetres: Size? = nil, definedAt: String? = nil, cancel: CancelledTouchEnding = .withdraw,
                transform: OutputTransform = .normal) {
        self.output = output
        self.area = area
        self.sizeMillimetres = sizeMillimetres
        self.definedAt = definedAt
        self.cancel = cancel
        self.transform = transform
    }

    /// The device's geometry on `screen`.
    public func geometry(on screen: Size) -> VirtualTouchscreenGeometry {
        VirtualTouchscreenGeometry(area: area ?? Rect(origin: Point(x: 0, y: 0), size: screen), sizeMillimetres: sizeMillimetres, transform: transform)
    }

    /// Why `size` cannot be an output area's size in millimetres, or nil: each side as long as
    /// a touchscreen's can be (``PanelGeometry/plausibleSide``), a watch's to a video wall's.
    /// The size gives the device its units per millimetre, which a compositor maps by; a
    /// size of 1e-300 mm is no display's, and made a resolution no integer holds.
    public static func sizeProblem(_ size: Size) -> String? {
        let sides = PanelGeometry.plausibleSide
        guard !sides.contains(size.width) || !sides.contains(size.height) else { return nil }
        return "size_mm is [width, height] of the output's area in millimetres, each between \(compactNumber(sides.lowerBound)) and \(compactNumber(sides.upperBound)) (a display's sides), not \(compactNumber(size.width)) × \(compactNumber(size.height))"
    }

    /// At most as many as a kiosk has outputs, with room to spare.
    public static let maximum = 16

    /// Why `name` cannot name an output, or nil: connector names are short ASCII words
    /// (`HDMI-A-1`, `DP-2`, `eDP-1`), and the name goes into a device name of 80 bytes and
    /// into udev rules, where quotes and spaces would break the line.
    public static func outputProblem(_ name: String) -> String? {
        if name.isEmpty { return "an output's name cannot be empty" }
        if name.utf8.count > 40 { return "an output's name is at most 40 bytes, not \(name.utf8.count)" }
        let allowed = name.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }
        return allowed ? nil : "an output's name is ASCII letters, digits, '-' and '_' (a connector's name such as HDMI-A-1), not \(OutsideText.quoted(name))"
    }
}

extension Configuration {
    /// The `[[virtual_touchscreen]]` tables, then one for each output a `[[device]]` names that
    /// no table defines, covering that entry's output. Every name a device gives must be one.
    static func readVirtualTouchscreens(_ root: inout TableReader, devices: [TableReader], into configuration: inout Configuration) throws(ConfigurationError) {
        var tables = try root.tables("virtual_touchscreen")
        for index in tables.indices {
            guard let output = try tables[index].string("output") else {
                throw tables[index].error(nil, "a [[virtual_touchscreen]] names its output: output = \"HDMI-A-1\"")
            }
            if let problem = VirtualTouchscreenSettings.outputProblem(output) { throw tables[index].error("output", problem) }
            if configuration.virtualTouchscreens.contains(where: { $0.output == output }) {
                throw tables[index].error("output", "the virtual touchscreen of \(output) is defined twice")
            }
            let area = try tables[index].output("area", screen: configuration.screen)
            let size = try tables[index].size("size_mm")
            if let size, let problem = VirtualTouchscreenSettings.sizeProblem(size) { throw tables[index].error("size_mm", problem) }
            var cancel = CancelledTouchEnding.withdraw
            if let text = try tables[index].string("cancel") {
                guard let ending = CancelledTouchEnding(rawValue: text) else {
                    throw tables[index].error("cancel", "cancel is \"withdraw\" (a lift no app takes for a tap: every compositor) or \"cancel\" (a touch cancel: for a compositor that passes it on, as sway 1.9 does), not \(OutsideText.quoted(text))")
                }
                cancel = ending
            }
            var transform = OutputTransform.normal
            if let text = try tables[index].string("transform") {
                guard let turn = OutputTransform(name: text) else {
                    throw tables[index].error("transform", "transform is the output's as the compositor turns it: \"normal\", \"90\", \"180\", \"270\", \"flipped\", \"flipped-90\", \"flipped-180\" or \"flipped-270\" (weston's \"rotate-90\" and \"flipped-rotate-90\" too), not \(OutsideText.quoted(text))")
                }
                transform = turn
            }
            configuration.virtualTouchscreens.append(VirtualTouchscreenSettings(output: output, area: area, sizeMillimetres: size, definedAt: tables[index].place("output"),
                                                                                cancel: cancel, transform: transform))
            try tables[index].finish()
        }
        if configuration.virtualTouchscreens.count > VirtualTouchscreenSettings.maximum {
            throw tables[VirtualTouchscreenSettings.maximum].error(nil, "at most \(VirtualTouchscreenSettings.maximum) virtual touchscreens")
        }
        for (index, device) in configuration.devices.enumerated() {
            guard let output = device.virtualTouchscreen else { continue }
            if let made = configuration.virtualTouchscreens.first(where: { $0.output == output }) {
                guard made.definedAt == nil, made.area != device.output else { continue }
                throw devices[index].error("virtual_touchscreen", "two [[device]] entries give the virtual touchscreen \(output) different outputs: define it once in a [[virtual_touchscreen]] table with its area")
            }
            configuration.virtualTouchscreens.append(VirtualTouchscreenSettings(output: output, area: device.output))
        }
    }

    /// A `[[device]]`'s `virtual_touchscreen`: the output whose virtual touchscreen carries it.
    static func readVirtualTouchscreenName(_ table: inout TableReader) throws(ConfigurationError) -> String? {
        guard let output = try table.string("virtual_touchscreen") else { return nil }
        if let problem = VirtualTouchscreenSettings.outputProblem(output) { throw table.error("virtual_touchscreen", problem) }
        return output
    }
}
