import FoundationEssentials
import MotionCore
import TOMLKit
import TouchInput

extension Configuration {
    /// Reads and checks a configuration file.
    ///
    /// - Throws: ``ConfigurationError`` with the file, the line and the reason: a syntax
    ///   error, an unknown key, a value of the wrong type or out of range, a reference to an
    ///   element that does not exist. Nothing is half-loaded: a broken file changes nothing.
    public static func load(file: String) throws(ConfigurationError) -> Configuration {
        var sources = [(text: try readText(file), file: file)]
        for dropIn in try dropIns(beside: file) {
            sources.append((try readText(dropIn), dropIn))
        }
        return try parse(sources)
    }

    /// The drop-ins that go with `file`: `conf.d/*.toml` in its directory, in name order
    /// (bytewise, as systemd sorts them), hidden files left out. None when there is no
    /// `conf.d`.
    public static func dropIns(beside file: String) throws(ConfigurationError) -> [String] {
        let slash = file.lastIndex(of: "/")
        let directory = (slash.map { String(file[..<$0]) } ?? ".") + "/conf.d"
        return try ConfigurationFile.names(in: directory, endingIn: ".toml").get()?.map { directory + "/" + $0 } ?? []
    }

    private static func readText(_ file: String) throws(ConfigurationError) -> String {
        try ConfigurationFile.read(file).get()
    }

    /// Parses and checks configuration text; `file` names it in errors.
    public static func parse(_ text: String, file: String) throws(ConfigurationError) -> Configuration {
        try parse([(text, file)])
    }

    /// Parses the main file and its drop-ins, in order, as one configuration: tables merged
    /// key by key (a later file's value wins), arrays of tables (`[[element]]`, `[[device]]`,
    /// `[[tuio]]`) appended. Errors name the file and line the problem is on.
    public static func parse(_ sources: [(text: String, file: String)]) throws(ConfigurationError) -> Configuration {
        let file = sources.first?.file ?? "-"
        var root = TableReader(merging: try sources.map(layer), path: [])
        var configuration = Configuration()
        configuration.file = file
        configuration.files = sources.map(\.file)
        try readDaemonAndScreen(&root, into: &configuration)
        if var websocket = try root.table("websocket") {
            configuration.websocket = try readWebSocket(&websocket, file: file)
        }
        if var gestures = try root.table("gestures") {
            configuration.gestures = try readGestures(&gestures)
        }
        var devices = try root.tables("device")
        for index in devices.indices {
            configuration.devices.append(try readDevice(&devices[index], screen: configuration.screen))
        }
        try readVirtualTouchscreens(&root, devices: devices, into: &configuration)
        for var calibration in try root.tables("calibration") {
            configuration.calibrations.append(try readCalibration(&calibration))
        }
        var elements = try root.tables("element")
        let ids = try readElements(&elements, into: &configuration)
        try readOutputsAndScreenGestures(&root, into: &configuration)
        try root.finish()

        // References between elements, now that every id is known.
        for (index, element) in configuration.elements.enumerated() {
            if let problem = element.referenceProblem(among: ids) { throw elements[index].error(problem.keys, problem.message) }
        }
        return configuration
    }

    /// One file's text as a table to merge, with where its keys are for errors.
    private static func layer(_ source: (text: String, file: String)) throws(ConfigurationError) -> (table: SettingsTable, context: ReadContext) {
        if let trap = TOMLParserTraps.first(in: source.text) {
            throw ConfigurationError(file: source.file, line: trap.line, message: "not valid TOML: \(trap.message)")
        }
        let table: SettingsTable
        do { table = try ParsedTOML.table(source.text) } catch let error as TOMLParseError {
            throw ConfigurationError(file: source.file, line: error.source.begin.line, message: "not valid TOML: \(error.description)")
        } catch {
            throw ConfigurationError(file: source.file, line: 0, message: "not valid TOML: \(error)")
        }
        return (table, ReadContext(file: source.file, locator: TOMLLocator(source.text)))
    }

    /// `[daemon]` and `[screen]`; the screen's size sets the limits values are read within.
    private static func readDaemonAndScreen(_ root: inout TableReader, into configuration: inout Configuration) throws(ConfigurationError) {
        if var daemon = try root.table("daemon") {
            configuration.daemon.socket = try daemon.string("socket") ?? configuration.daemon.socket
            configuration.daemon.frameRate = try daemon.number("frame_rate", in: 1...1000) ?? configuration.daemon.frameRate
            configuration.daemon.socketGroup = try daemon.string("socket_group")
            configuration.daemon.controlGroups = try daemon.strings("control_groups") ?? []
            configuration.daemon.state = try daemon.absolutePath("state")
            configuration.daemon.stateInterval = try daemon.number("state_interval", in: DaemonSettings.stateIntervals) ?? configuration.daemon.stateInterval
            try daemon.finish()
        }
        if var screen = try root.table("screen") {
            let width = try screen.number("width", in: 1...100_000) ?? configuration.screen.width
            let height = try screen.number("height", in: 1...100_000) ?? configuration.screen.height
            configuration.screen = Size(width: width, height: height)
            root.limits = configuration.valueLimits
            configuration.idleAfter = try screen.number("idle_after", in: Self.idleSeconds) ?? configuration.idleAfter
            configuration.prediction = try screen.number("prediction", in: 0...0.05) ?? configuration.prediction
            try screen.finish()
        }
    }

    /// The `[[element]]` tables, each id once; returns the ids.
    private static func readElements(_ elements: inout [TableReader], into configuration: inout Configuration) throws(ConfigurationError) -> Set<String> {
        // Where each id was defined (FILE:LINE), to name both places when one comes again.
        var definedAt: [String: String] = [:]
        for index in elements.indices {
            let element = try readElement(&elements[index])
            if element.id == "screen" { throw elements[index].error("id", "'screen' is the name of the screen itself; choose another id") }
            if let first = definedAt[element.id] {
                throw elements[index].error("id", "element '\(element.id)' is defined twice: first at \(first), again here")
            }
            definedAt[element.id] = elements[index].place("id")
            configuration.elements.append(element)
        }
        return Set(definedAt.keys)
    }

    /// The `[[tuio]]` targets (of the elements read before) and the `[[screen_gesture]]`
    /// tables, each list within its limit.
    private static func readOutputsAndScreenGestures(_ root: inout TableReader, into configuration: inout Configuration) throws(ConfigurationError) {
        var targets = try root.tables("tuio")
        if targets.count > TUIOSettings.maximumTargets {
            throw targets[TUIOSettings.maximumTargets].error(nil, "at most \(TUIOSettings.maximumTargets) [[tuio]] targets; each costs a datagram per frame")
        }
        for index in targets.indices {
            configuration.tuio.append(try readTUIO(&targets[index], elementIDs: configuration.elements.map(\.id)))
        }
        var screenGestures = try root.tables("screen_gesture")
        if screenGestures.count > ScreenGestureSettings.maximum {
            throw screenGestures[ScreenGestureSettings.maximum].error(nil, "at most \(ScreenGestureSettings.maximum) [[screen_gesture]] tables")
        }
        var gestureNames: [String: String] = [:]
        for index in screenGestures.indices {
            configuration.screenGestures.append(try ScreenGestureSettings.read(&screenGestures[index], names: &gestureNames))
        }
    }

    /// Attract mode's delays: from a tenth of a second (for tests and demonstrations) to a day.
    static let idleSeconds = 0.1...86_400.0

    /// The smallest |a·e − b·d| a calibration matrix may have (see `readMatrix`).
    public static let smallestCalibrationDeterminant = 0.01

    /// A distance given both ways, as `NAME_mm` and `NAME_px`: each key that is absent keeps
    /// its default.
    private static func readDistance(_ name: String, from table: inout TableReader, default given: PanelDistance,
                                     millimetres: ClosedRange<Double>, pixels: ClosedRange<Double>) throws(ConfigurationError) -> PanelDistance {
        PanelDistance(millimetres: try table.number("\(name)_mm", in: millimetres) ?? given.millimetres,
                      pixels: try table.number("\(name)_px", in: pixels) ?? given.pixels)
    }

    private static func readGestures(_ table: inout TableReader) throws(ConfigurationError) -> GestureThresholds {
        var t = GestureThresholds()
        let distance = 0.0...100.0, seconds = 0.0...10.0
        t.dragSlop = try readDistance("drag_slop", from: &table, default: t.dragSlop, millimetres: distance, pixels: 0...1000)
        t.tapSlop = try readDistance("tap_slop", from: &table, default: t.tapSlop, millimetres: distance, pixels: 0...1000)
        t.tapMaximumDuration = try table.number("tap_max_duration", in: seconds) ?? t.tapMaximumDuration
        t.multipleTapInterval = try table.number("multiple_tap_interval", in: seconds) ?? t.multipleTapInterval
        t.multipleTapDistance = try readDistance("multiple_tap_distance", from: &table, default: t.multipleTapDistance,
                                                 millimetres: distance, pixels: 0...1000)
        t.pinchSlop = try readDistance("pinch_slop", from: &table, default: t.pinchSlop, millimetres: distance, pixels: 0...1000)
        t.minimumSpan = try readDistance("minimum_span", from: &table, default: t.minimumSpan, millimetres: distance, pixels: 0...1000)
        t.rotationSlop = try table.number("rotation_slop_degrees", in: 0...180).map { $0 * .pi / 180 } ?? t.rotationSlop
        t.velocityWindow = try table.number("velocity_window", in: 0.005...1) ?? t.velocityWindow
        t.stoppedAfter = try table.number("stopped_after", in: 0.001...1) ?? t.stoppedAfter
        t.longPressDuration = try table.number("long_press_duration", in: 0.05...10) ?? t.longPressDuration
        t.longPressSlop = try readDistance("long_press_slop", from: &table, default: t.longPressSlop, millimetres: distance, pixels: 0...1000)
        t.swipeDistance = try readDistance("swipe_distance", from: &table, default: t.swipeDistance, millimetres: 1...1000, pixels: 1...10_000)
        t.swipeMinimumSpeed = try readDistance("swipe_speed", from: &table, default: t.swipeMinimumSpeed,
                                               millimetres: 1...100_000, pixels: 1...1_000_000)
        t.swipeAngle = try table.number("swipe_angle_degrees", in: 1...44).map { $0 * .pi / 180 } ?? t.swipeAngle
        t.edgeBand = try readDistance("edge_band", from: &table, default: t.edgeBand, millimetres: 0.1...100, pixels: 1...1000)
        t.edgeSwipeDistance = try readDistance("edge_swipe_distance", from: &table, default: t.edgeSwipeDistance,
                                               millimetres: 1...1000, pixels: 1...10_000)
        try table.finish()
        return t
    }

    /// `path`, `node`, `ids` and `name`: which devices a `[[device]]` or `[[calibration]]` is for.
    private static func readSelection(_ table: inout TableReader) throws(ConfigurationError) -> DeviceSelection {
        var rules: [DeviceSelection.Rule] = []
        if let path = try table.string("path") {
            guard !path.isEmpty else { throw table.error("path", "path is udev's ID_PATH of the device (udevadm info -q property /dev/input/eventN shows it), not empty") }
            rules.append(.path(path))
        }
        if let name = try table.string("name") { rules.append(.name(name)) }
        if let ids = try table.string("ids") {
            guard let rule = DeviceSelection.parseIDs(ids) else {
                throw table.error("ids", "ids takes VENDOR:PRODUCT in hexadecimal, like \"04f3:010c\"; '\(ids)' is not")
            }
            rules.append(rule)
        }
        if let node = try table.string("node") { rules.append(.node(node)) }
        return DeviceSelection(rules)
    }

    /// A calibration matrix: six finite numbers, none so large that it throws touches past
    /// any screen, that map the panel onto an area of its output. A matrix whose linear part
    /// has a determinant near 0 (all zeros, or one axis copied to the other) puts every touch
    /// on one point or one line: the kiosk would look dead. A real fit of a panel over its
    /// output is near 1; the loader refuses under 0.01, a panel whose touches all land within
    /// a tenth of its output's width and height.
    private static func readMatrix(_ table: inout TableReader, _ key: String) throws(ConfigurationError) -> [Double]? {
        guard let matrix = try table.numbers(key) else { return nil }
        if let refusal = calibrationMatrixRefusal(matrix) { throw table.error(key, refusal) }
        return matrix
    }

    /// Why the configuration refuses `matrix` as a calibration (see `readMatrix`), or nil when
    /// it takes it: `motionctl calibrate --fit` says so before suggesting a matrix.
    public static func calibrationMatrixRefusal(_ matrix: [Double]) -> String? {
        guard matrix.count == 6 else {
            return "a calibration matrix has six numbers (a b c d e f, as in LIBINPUT_CALIBRATION_MATRIX), not \(matrix.count)"
        }
        guard matrix.allSatisfy({ $0.isFinite && Swift.abs($0) <= 100 }) else {
            return "a calibration matrix's numbers lie within -100…100 (it maps 0…1 of the panel to 0…1 of its output)"
        }
        let determinant = matrix[0] * matrix[4] - matrix[1] * matrix[3]
        guard Swift.abs(determinant) >= Self.smallestCalibrationDeterminant else {
            return "this calibration matrix maps the whole panel onto \(determinant == 0 ? "a point or a line" : "less than a hundredth of its output") (a·e − b·d = \(compactNumber(determinant)), at least 0.01 in size): every touch would land in one place"
        }
        return nil
    }

    private static func readCalibration(_ table: inout TableReader) throws(ConfigurationError) -> CalibrationSettings {
        let selection = try readSelection(&table)
        guard !selection.rules.isEmpty else {
            throw table.error("matrix", "a [[calibration]] names its device by path, node, ids or name")
        }
        guard let matrix = try readMatrix(&table, "matrix") else {
            throw table.error("matrix", "a [[calibration]] needs matrix = [a, b, c, d, e, f]")
        }
        try table.finish()
        return CalibrationSettings(selection: selection, matrix: matrix)
    }

    private static func readDevice(_ table: inout TableReader, screen: Size) throws(ConfigurationError) -> DeviceSettings {
        var device = DeviceSettings()
        device.selection = try readSelection(&table)
        device.output = try table.output("output", screen: screen)
        if let degrees = try table.int("rotation") {
            guard let rotation = Rotation(rawValue: degrees) else {
                throw table.error("rotation", "rotation is 0, 90, 180 or 270 (degrees clockwise), not \(degrees)")
            }
            device.rotation = rotation
        }
        device.flipHorizontal = try table.bool("flip_horizontal") ?? false
        device.flipVertical = try table.bool("flip_vertical") ?? false
        device.grab = try table.bool("grab") ?? false
        device.virtualTouchscreen = try readVirtualTouchscreenName(&table)
        device.calibration = try readMatrix(&table, "calibration")
        device.filters.stuckAfter = try table.number("stuck_after", in: 0...86_400) ?? device.filters.stuckAfter
        let palmMillimetres = try table.number("palm_size_mm", in: 0...1000)
        let palmUnits = try table.int("palm_size")
        switch (palmMillimetres, palmUnits) {
        case (.some, .some): throw table.error("palm_size", "give palm_size_mm or palm_size (in device units), not both")
        case (.some(let size), nil): device.filters.palmSize = size == 0 ? .off : .millimetres(size)
        case (nil, .some(let units)):
            guard (0...Int(Int32.max)).contains(units) else { throw table.error("palm_size", "palm_size is in the device's units of ABS_MT_TOUCH_MAJOR, 0 (off) or more, not \(units)") }
            device.filters.palmSize = units == 0 ? .off : .units(Int32(units))
        case (nil, nil): break
        }
        device.filters.jumpMillimetres = try table.number("jump_mm", in: 0...10_000) ?? device.filters.jumpMillimetres
        device.filters.hysteresis = try table.bool("hysteresis") ?? device.filters.hysteresis
        device.filters.phantoms = try readPhantomSettings(&table, defaults: device.filters.phantoms)
        device.filters.panel = try readGeometryHints(&table)
        device.explicit = Set(DeviceSettings.quirkKeys.filter { table.has($0) })
        try table.finish()
        return device
    }

    /// The phantom-touch filters' keys of a `[[device]]` or `[[quirk]]` table.
    private static func readPhantomSettings(_ table: inout TableReader, defaults: PhantomTouchSettings) throws(ConfigurationError) -> PhantomTouchSettings {
        var phantoms = defaults
        phantoms.repeatingTaps = try table.bool("phantom_taps") ?? phantoms.repeatingTaps
        phantoms.wakeBursts = try table.bool("wake_bursts") ?? phantoms.wakeBursts
        if let contacts = try table.int("storm_contacts") {
            guard (0...100_000).contains(contacts) else {
                throw table.error("storm_contacts", "storm_contacts is flood contacts (lifting within 70 ms where they landed) a second, 0 (off) to 100000, not \(contacts)")
            }
            phantoms.stormContacts = contacts
        }
        phantoms.stormQuiet = try table.number("storm_quiet", in: 0.1...3600) ?? phantoms.stormQuiet
        phantoms.infrared = try table.bool("infrared") ?? phantoms.infrared
        phantoms.deadZones = try table.rectangles("dead_zones", limit: PhantomTouchSettings.maximumDeadZones) ?? phantoms.deadZones
        return phantoms
    }

    /// Reads a quirks file: `[[quirk]]` tables, each a `[[device]]` entry's selectors and
    /// keys with `quirk` (its name) and `evidence` (where its values come from).
    static func readQuirks(_ text: String, file: String) throws(ConfigurationError) -> [Quirk] {
        let table: SettingsTable
        do { table = try ParsedTOML.table(text) } catch let error as TOMLParseError {
            throw ConfigurationError(file: file, line: error.source.begin.line, message: "not valid TOML: \(error.description)")
        } catch {
            throw ConfigurationError(file: file, line: 0, message: "not valid TOML: \(error)")
        }
        var root = TableReader(table, path: [], context: ReadContext(file: file, locator: TOMLLocator(text)))
        var quirks: [Quirk] = []
        for var entry in try root.tables("quirk") {
            guard let name = try entry.string("quirk"), !name.isEmpty else { throw entry.error("quirk", "a [[quirk]] has a name: quirk = \"…\"") }
            guard let evidence = try entry.string("evidence"), !evidence.isEmpty else {
                throw entry.error("evidence", "quirk \(OutsideText.quoted(name)) says where its values come from: evidence = \"URL\"")
            }
            let settings = try readDevice(&entry, screen: Configuration.defaultScreen)
            guard settings.selection.rules.contains(where: { if case .ids = $0 { true } else if case .name = $0 { true } else { false } }) else {
                throw entry.error("quirk", "quirk \(OutsideText.quoted(name)) selects its panels by ids or name")
            }
            guard !settings.explicit.isEmpty else { throw entry.error("quirk", "quirk \(OutsideText.quoted(name)) sets nothing") }
            quirks.append(Quirk(name: name, evidence: evidence, selection: settings.selection, settings: settings))
        }
        try root.finish()
        return quirks
    }

    /// `resolution = [x, y]`, `size_mm = [width, height]` and `touch_resolution`: what to
    /// believe of a panel whose own word is not believed.
    ///
    /// A hint is believed exactly as given, so one that no touchscreen could have is refused
    /// here, by the limits a panel's declared size is judged by (``PanelGeometry``): a size
    /// outside its plausible sides, resolutions further apart than its axes' may be. How
    /// large a panel a resolution makes depends on the axes, so that is judged per device.
    private static func readGeometryHints(_ table: inout TableReader) throws(ConfigurationError) -> GeometryHints {
        var hints = GeometryHints.none
        if let resolution = try table.numbers("resolution") {
            guard resolution.count == 2, resolution.allSatisfy({ (0.01...100_000).contains($0) }) else {
                throw table.error("resolution", "resolution is [x, y], the position axes' units per millimetre, each between 0.01 and 100000")
            }
            let ratio = resolution.max()! / resolution.min()!
            guard ratio <= PanelGeometry.largestResolutionRatio else {
                throw table.error("resolution", "resolution [\(compactNumber(resolution[0])), \(compactNumber(resolution[1]))] makes a unit \(compactNumber((ratio * 10).rounded() / 10)) times longer on one axis than on the other; no touchscreen's differ by more than \(compactNumber(PanelGeometry.largestResolutionRatio)) times")
            }
            hints.resolution = .init(x: resolution[0], y: resolution[1])
        }
        if let size = try table.numbers("size_mm") {
            let sides = PanelGeometry.plausibleSide
            guard size.count == 2, size.allSatisfy(sides.contains) else {
                throw table.error("size_mm", "size_mm is [width, height] of the touch area in millimetres, as the device's x and y axes run, each between \(compactNumber(sides.lowerBound)) and \(compactNumber(sides.upperBound)) (a touchscreen's sides)")
            }
            if hints.resolution != nil { throw table.error("size_mm", "give resolution or size_mm, not both: each says how long a unit is") }
            hints.size = Size(width: size[0], height: size[1])
        }
        hints.touchResolution = try table.number("touch_resolution", in: 0.01...100_000)
        return hints
    }
}
