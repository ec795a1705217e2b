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
        var layers: [(table: [String: SettingsValue], context: ReadContext)] = []
        for (text, file) in sources {
            if let trap = TOMLParserTraps.first(in: text) {
                throw ConfigurationError(file: file, line: trap.line, message: "not valid TOML: \(trap.message)")
            }
            let table: [String: SettingsValue]
            do { table = try ParsedTOML.table(text) } catch let error as TOMLParseError {
                throw ConfigurationError(file: file, line: error.source.begin.line, message: "not valid TOML: \(error.description)")
            } catch {
                throw ConfigurationError(file: file, line: 0, message: "not valid TOML: \(error)")
            }
            layers.append((table, ReadContext(file: file, locator: TOMLLocator(text))))
        }
        let file = sources.first?.file ?? "-"
        var root = TableReader(merging: layers, path: [])
        var configuration = Configuration()
        configuration.file = file
        configuration.files = sources.map(\.file)

        if var daemon = try root.table("daemon") {
            configuration.daemon.socket = try daemon.string("socket") ?? configuration.daemon.socket
            configuration.daemon.frameRate = try daemon.number("frame_rate", in: 1...1000) ?? configuration.daemon.frameRate
            configuration.daemon.socketGroup = try daemon.string("socket_group")
            configuration.daemon.controlGroups = try daemon.strings("control_groups") ?? []
            try daemon.finish()
        }
        if var screen = try root.table("screen") {
            let width = try screen.number("width", in: 1...100_000) ?? configuration.screen.width
            let height = try screen.number("height", in: 1...100_000) ?? configuration.screen.height
            configuration.screen = Size(width: width, height: height)
            root.limits = ValueLimits(screen: configuration.screen)
            configuration.idleAfter = try screen.number("idle_after", in: Self.idleSeconds) ?? configuration.idleAfter
            try screen.finish()
        }
        if var websocket = try root.table("websocket") {
            configuration.websocket = try readWebSocket(&websocket, file: file)
        }
        if var gestures = try root.table("gestures") {
            configuration.gestures = try readGestures(&gestures)
        }
        for var device in try root.tables("device") {
            configuration.devices.append(try readDevice(&device, screen: configuration.screen))
        }
        for var calibration in try root.tables("calibration") {
            configuration.calibrations.append(try readCalibration(&calibration))
        }
        var elements = try root.tables("element")
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
        let ids = Set(definedAt.keys)
        var targets = try root.tables("tuio")
        if targets.count > TUIOSettings.maximumTargets {
            throw targets[TUIOSettings.maximumTargets].error(nil, "at most \(TUIOSettings.maximumTargets) [[tuio]] targets; each costs a datagram per frame")
        }
        for index in targets.indices {
            configuration.tuio.append(try readTUIO(&targets[index], elementIDs: configuration.elements.map(\.id)))
        }
        try root.finish()

        // References between elements, now that every id is known.
        for (index, element) in configuration.elements.enumerated() {
            if let problem = element.referenceProblem(among: ids) { throw elements[index].error(problem.keys, problem.message) }
        }
        return configuration
    }

    /// Attract mode's delays: from a tenth of a second (for tests and demonstrations) to a day.
    static let idleSeconds = 0.1...86_400.0

    private static func readGestures(_ table: inout TableReader) throws(ConfigurationError) -> GestureThresholds {
        var t = GestureThresholds()
        let distance = 0.0...100.0, seconds = 0.0...10.0
        t.dragSlop = try table.number("drag_slop_mm", in: distance) ?? t.dragSlop
        t.dragSlopPixels = try table.number("drag_slop_px", in: 0...1000) ?? t.dragSlopPixels
        t.tapSlop = try table.number("tap_slop_mm", in: distance) ?? t.tapSlop
        t.tapSlopPixels = try table.number("tap_slop_px", in: 0...1000) ?? t.tapSlopPixels
        t.tapMaximumDuration = try table.number("tap_max_duration", in: seconds) ?? t.tapMaximumDuration
        t.multipleTapInterval = try table.number("multiple_tap_interval", in: seconds) ?? t.multipleTapInterval
        t.multipleTapDistance = try table.number("multiple_tap_distance_mm", in: distance) ?? t.multipleTapDistance
        t.multipleTapDistancePixels = try table.number("multiple_tap_distance_px", in: 0...1000) ?? t.multipleTapDistancePixels
        t.pinchSlop = try table.number("pinch_slop_mm", in: distance) ?? t.pinchSlop
        t.pinchSlopPixels = try table.number("pinch_slop_px", in: 0...1000) ?? t.pinchSlopPixels
        t.minimumSpan = try table.number("minimum_span_mm", in: distance) ?? t.minimumSpan
        t.minimumSpanPixels = try table.number("minimum_span_px", in: 0...1000) ?? t.minimumSpanPixels
        t.rotationSlop = try table.number("rotation_slop_degrees", in: 0...180).map { $0 * .pi / 180 } ?? t.rotationSlop
        t.velocityWindow = try table.number("velocity_window", in: 0.005...1) ?? t.velocityWindow
        t.stoppedAfter = try table.number("stopped_after", in: 0.001...1) ?? t.stoppedAfter
        try table.finish()
        return t
    }

    /// `name`, `ids` and `node`: which devices a `[[device]]` or `[[calibration]]` is for.
    private static func readSelection(_ table: inout TableReader) throws(ConfigurationError) -> DeviceSelection {
        var rules: [DeviceSelection.Rule] = []
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
    /// any screen.
    private static func readMatrix(_ table: inout TableReader, _ key: String) throws(ConfigurationError) -> [Double]? {
        guard let matrix = try table.numbers(key) else { return nil }
        guard matrix.count == 6 else {
            throw table.error(key, "a calibration matrix has six numbers (a b c d e f, as in LIBINPUT_CALIBRATION_MATRIX), not \(matrix.count)")
        }
        guard matrix.allSatisfy({ $0.isFinite && Swift.abs($0) <= 100 }) else {
            throw table.error(key, "a calibration matrix's numbers lie within -100…100 (it maps 0…1 of the panel to 0…1 of its output)")
        }
        return matrix
    }

    private static func readCalibration(_ table: inout TableReader) throws(ConfigurationError) -> CalibrationSettings {
        let selection = try readSelection(&table)
        guard !selection.rules.isEmpty else {
            throw table.error("matrix", "a [[calibration]] names its device by ids, name or node")
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
        try table.finish()
        return device
    }

    static func readElement(_ table: inout TableReader) throws(ConfigurationError) -> ElementSettings {
        guard let id = try table.string("id") else { throw table.error(nil, "an element needs an id") }
        guard !id.isEmpty, id.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }) else {
            throw table.error("id", "an element id is letters, digits, '_' and '-' (it names streams such as \(id).position), not '\(id)'")
        }
        guard let center = try table.point("center") else { throw table.error(nil, "element '\(id)' needs a center, like center = [960, 540]") }
        guard let size = try table.size("size") else { throw table.error(nil, "element '\(id)' needs a size, like size = [400, 300]") }
        var element = ElementSettings(id: id, center: center, size: size)
        element.rotation = try table.number("rotation") ?? 0
        element.scale = try table.number("scale", in: 0.000_001...1_000_000) ?? 1
        element.z = try table.int("z") ?? 0
        element.resetAfter = try table.number("reset_after", in: Self.idleSeconds)

        if var draggable = try table.table("draggable") {
            element.interactions.append(.draggable(
                bounds: try draggable.rect("bounds"), maxLength: try draggable.number("max_length", in: 0...10_000) ?? 48,
                spring: try draggable.spring("spring")))
            try draggable.finish()
        }
        if var tossable = try table.table("tossable") {
            let destination = try tossable.destination("destination")
            let snaps = try tossable.points("snap_points") ?? [:]
            if destination == nil && snaps.isEmpty {
                throw tossable.error(nil, "a tossable needs a destination (a point or an element id) or snap_points")
            }
            if destination != nil && !snaps.isEmpty {
                throw tossable.error("snap_points", "give a destination or snap_points, not both: snap points choose the destination")
            }
            element.interactions.append(.tossable(destination: destination, snapPoints: snaps, spring: try tossable.spring("spring")))
            try tossable.finish()
        }
        if var attach = try table.table("attach") {
            if element.interactions.contains(where: { $0.name == "tossable" }) {
                // Both publish ID.destination and ID.spring, and both spring the position.
                throw attach.error(nil, "element '\(id)' has tossable and attach: both spring the element to a destination (and both publish \(id).destination); keep one")
            }
            guard let destination = try attach.destination("destination") else {
                throw attach.error(nil, "attach needs a destination: a point like [960, 540] or an element id")
            }
            element.interactions.append(.attach(destination: destination, spring: try attach.spring("spring")))
            try attach.finish()
        }
        if var rotatable = try table.table("rotatable") {
            element.interactions.append(.rotatable)
            try rotatable.finish()
        }
        if var scalable = try table.table("scalable") {
            let minimum = try scalable.number("minimum", in: 0.000_001...1_000_000)
            let maximum = try scalable.number("maximum", in: 0.000_001...1_000_000)
            if let minimum, let maximum, minimum > maximum {
                throw scalable.error("maximum", "maximum (\(compactNumber(maximum))) is below minimum (\(compactNumber(minimum)))")
            }
            element.interactions.append(.scalable(minimum: minimum, maximum: maximum, spring: try scalable.spring("spring")))
            try scalable.finish()
        }
        if var direct = try table.table("directly_manipulable") {
            element.interactions.append(.directlyManipulable)
            try direct.finish()
        }
        if var tap = try table.table("set_position_on_tap") {
            let name = try tap.string("target") ?? "position"
            guard let target = InteractionSettings.TapTarget(rawValue: name) else {
                throw tap.error("target", "target is \"position\", \"attach\" or \"tossable\", not \"\(name)\"")
            }
            element.interactions.append(.setPositionOnTap(target: target))
            try tap.finish()
        }
        if var direction = try table.table("change_direction") {
            let axisName = try direction.string("axis") ?? "vertical"
            guard let axis = ChangeDirection.Axis(rawValue: axisName) else {
                throw direction.error("axis", "axis is \"vertical\" or \"horizontal\", not \"\(axisName)\"")
            }
            element.interactions.append(.changeDirection(minimumVelocity: try direction.number("minimum_velocity", in: 0...100_000) ?? 100, axis: axis))
            try direction.finish()
        }
        let names = element.interactions.map(\.name)
        if names.contains("directly_manipulable"), let other = names.first(where: { ["draggable", "tossable", "rotatable", "scalable"].contains($0) }) {
            throw table.error("directly_manipulable", "directly_manipulable already drags, rotates and scales; it cannot be combined with \(other)")
        }
        if names.contains("draggable") && names.contains("tossable") {
            throw table.error("tossable", "tossable already drags; remove draggable")
        }
        try table.finish()
        return element
    }
}

extension ElementSettings {
    /// Reads one element as the configuration file's `[[element]]` gives it, from a table
    /// of another origin (what `add_element` reads from the client's JSON). Errors have no
    /// line.
    static func read(_ table: [String: SettingsValue], source: String, limits: ValueLimits) throws(ConfigurationError) -> ElementSettings {
        var reader = TableReader(table, path: ["element"], context: ReadContext(file: source, locator: TOMLLocator("")))
        reader.limits = limits
        return try Configuration.readElement(&reader)
    }

    /// What is wrong with the element's references to other elements, given the ids of
    /// every element (its own included); nil when nothing is. The configuration file and
    /// `add_element` both ask this, so they agree.
    func referenceProblem(among ids: Set<String>) -> (keys: [String], message: String)? {
        for interaction in interactions {
            if case .element(let other)? = interaction.destination, !ids.contains(other) || other == id {
                return ([interaction.name, "destination"],
                        other == id ? "an element cannot be its own destination" : "no element is called '\(other)' (the elements are: \(ids.sorted().joined(separator: ", ")))")
            }
            if case .setPositionOnTap(let target) = interaction, target != .position,
               !interactions.contains(where: { $0.name == target.rawValue }) {
                return (["set_position_on_tap", "target"], "target = \"\(target.rawValue)\" needs the element to have \(target.rawValue) too")
            }
        }
        return nil
    }
}

/// Where errors point.
struct ReadContext {
    let file: String
    let locator: TOMLLocator
}

/// Reads one table of settings along a key path, remembering which keys were read so that
/// ``finish()`` can refuse the others: an unknown key is an error, never ignored.
///
/// A table may come in layers, one per file that has it (the main file, then each drop-in):
/// a key is read from the last layer that sets it, and an error about it points at that file
/// and line.
struct TableReader {
    /// One file's part of the table.
    private struct Layer {
        let table: [String: SettingsValue]
        let context: ReadContext

        /// An error on the line of `keys` in this file.
        func error(_ keys: [String], _ message: String) -> ConfigurationError {
            ConfigurationError(file: context.file, line: context.locator.line(keys), message: message)
        }
    }

    private let layers: [Layer]
    let path: [String]
    private var read: Set<String> = []
    /// The positions and sizes allowed, relative to the screen; tables below inherit them.
    var limits = ValueLimits(screen: Configuration().screen)

    init(_ table: [String: SettingsValue], path: [String], context: ReadContext) {
        self.init(layers: [Layer(table: table, context: context)], path: path)
    }

    /// The same table from several files, later ones overriding earlier ones key by key.
    init(merging tables: [(table: [String: SettingsValue], context: ReadContext)], path: [String]) {
        self.init(layers: tables.map { Layer(table: $0.table, context: $0.context) }, path: path)
    }

    private init(layers: [Layer], path: [String]) {
        precondition(!layers.isEmpty, "a table comes from at least one file")
        self.layers = layers
        self.path = path
    }

    /// The file that sets `key` (the last one that does), else the first file.
    private func layer(for key: String?) -> Layer {
        key.flatMap { key in layers.last { $0.table[key] != nil } } ?? layers[0]
    }

    /// An error about `key` (or the table itself), on its line.
    func error(_ key: String?, _ message: String) -> ConfigurationError {
        error(key.map { [$0] } ?? [], message)
    }

    /// An error about a key path below this table.
    func error(_ keys: [String], _ message: String) -> ConfigurationError {
        layer(for: keys.first).error(path + keys, message)
    }

    /// A reader for an inline table set at `key`, in the file that sets it.
    private func inner(_ table: [String: SettingsValue], below key: String) -> TableReader {
        var reader = TableReader(table, path: path + [key], context: layer(for: key).context)
        reader.limits = limits
        return reader
    }

    /// Where `key` is set: FILE:LINE, for messages that name two places.
    func place(_ key: String?) -> String {
        let context = layer(for: key).context
        return "\(context.file):\(context.locator.line(path + (key.map { [$0] } ?? [])))"
    }

    private var name: String { path.isEmpty ? "the top level" : "[\(path.joined(separator: "."))]" }

    /// Refuses any key that was not read.
    func finish() throws(ConfigurationError) {
        for layer in layers {
            for key in layer.table.keys.sorted() where !read.contains(key) {
                throw layer.error(path + [key], "unknown key '\(key)' in \(name)")
            }
        }
    }

    /// A key's value without marking it read.
    private func peek(_ key: String) -> SettingsValue? { layer(for: key).table[key] }

    private mutating func value(_ key: String) -> SettingsValue? {
        read.insert(key)
        return layer(for: key).table[key]
    }

    private func wrongType(_ key: String, _ expected: String, _ value: SettingsValue) -> ConfigurationError {
        error(key, "\(key) must be \(expected), not \(value.description)")
    }

    mutating func string(_ key: String) throws(ConfigurationError) -> String? {
        guard let value = value(key) else { return nil }
        guard let string = value.string else { throw wrongType(key, "a string", value) }
        return string
    }

    mutating func bool(_ key: String) throws(ConfigurationError) -> Bool? {
        guard let value = value(key) else { return nil }
        guard let bool = value.bool else { throw wrongType(key, "true or false", value) }
        return bool
    }

    mutating func int(_ key: String) throws(ConfigurationError) -> Int? {
        guard let value = value(key) else { return nil }
        guard let int = value.int else { throw wrongType(key, "an integer", value) }
        return int
    }

    /// A number, integer or not, optionally within `range`.
    mutating func number(_ key: String, in range: ClosedRange<Double>? = nil) throws(ConfigurationError) -> Double? {
        guard let value = value(key) else { return nil }
        guard let number = value.number else { throw wrongType(key, "a number", value) }
        if let range, !range.contains(number) {
            throw error(key, "\(key) must be between \(compactNumber(range.lowerBound)) and \(compactNumber(range.upperBound)), not \(compactNumber(number))")
        }
        return number
    }

    mutating func numbers(_ key: String) throws(ConfigurationError) -> [Double]? {
        guard let value = value(key) else { return nil }
        guard let array = value.array else { throw wrongType(key, "an array of numbers", value) }
        var numbers: [Double] = []
        for element in array {
            guard let number = element.number else { throw wrongType(key, "an array of numbers", value) }
            numbers.append(number)
        }
        return numbers
    }

    mutating func strings(_ key: String) throws(ConfigurationError) -> [String]? {
        guard let value = value(key) else { return nil }
        guard let array = value.array else { throw wrongType(key, "an array of strings", value) }
        var strings: [String] = []
        for element in array {
            guard let string = element.string else { throw wrongType(key, "an array of strings", value) }
            strings.append(string)
        }
        return strings
    }

    /// `[x, y]` or `{ x = …, y = … }`.
    mutating func point(_ key: String) throws(ConfigurationError) -> Point? {
        guard let value = value(key) else { return nil }
        guard let point = try pair(value, key: key, names: ("x", "y")) else {
            throw wrongType(key, "a point, [x, y] or { x = …, y = … }", value)
        }
        let position = Point(x: point.0, y: point.1)
        if let problem = limits.problem(position: position) { throw error(key, "\(key): \(problem)") }
        return position
    }

    /// `[width, height]` or `{ width = …, height = … }`, both positive and within the limits.
    mutating func size(_ key: String) throws(ConfigurationError) -> Size? {
        guard let value = value(key) else { return nil }
        guard let size = try pair(value, key: key, names: ("width", "height")) else {
            throw wrongType(key, "a size, [width, height] or { width = …, height = … }", value)
        }
        guard size.0 > 0 && size.1 > 0 else { throw error(key, "\(key) must be positive, not \(compactNumber(size.0)) × \(compactNumber(size.1))") }
        if let problem = limits.problem(size: Size(width: size.0, height: size.1)) { throw error(key, "\(key): \(problem)") }
        return Size(width: size.0, height: size.1)
    }

    /// A device's output: `[width, height]` at the screen's top-left corner, or `[x, y,
    /// width, height]` (or the same as inline tables), positive and within the screen: a
    /// rectangle past the screen's edge would put touches where nothing is drawn.
    mutating func output(_ key: String, screen: Size) throws(ConfigurationError) -> Rect? {
        guard let value = peek(key) else { return nil }
        let output: Rect
        let isRectangle = value.array?.count == 4 || value.table?["x"] != nil || value.table?["y"] != nil
        if isRectangle {
            guard let rect = try rect(key) else { return nil }
            output = rect
        } else {
            guard let size = try size(key) else { return nil }
            output = Rect(origin: Point(x: 0, y: 0), size: size)
        }
        let formatted = [output.origin.x, output.origin.y, output.size.width, output.size.height].map(compactNumber).joined(separator: ", ")
        guard output.size.width > 0 && output.size.height > 0 else {
            throw error(key, "\(key) needs a positive width and height, not [\(formatted)]")
        }
        guard output.origin.x >= 0, output.origin.y >= 0,
              output.origin.x + output.size.width <= screen.width, output.origin.y + output.size.height <= screen.height else {
            throw error(key, "\(key) [\(formatted)] reaches past the screen (\(compactNumber(screen.width)) × \(compactNumber(screen.height)) in [screen]): the screen is every display together, and each device's output lies within it")
        }
        return output
    }

    /// `[x, y, width, height]` or `{ x, y, width, height }`.
    mutating func rect(_ key: String) throws(ConfigurationError) -> Rect? {
        guard let value = value(key) else { return nil }
        let expected = "a rectangle, [x, y, width, height] or { x = …, y = …, width = …, height = … }"
        var numbers: [Double] = []
        if let array = value.array {
            for element in array { if let n = element.number { numbers.append(n) } }
            guard numbers.count == 4, array.count == 4 else { throw wrongType(key, expected, value) }
        } else if let table = value.table {
            var inner = inner(table, below: key)
            for name in ["x", "y", "width", "height"] {
                guard let n = try inner.number(name) else { throw inner.error(nil, "\(key) needs \(name)") }
                numbers.append(n)
            }
            try inner.finish()
        } else {
            throw wrongType(key, expected, value)
        }
        guard numbers[2] >= 0 && numbers[3] >= 0 else { throw error(key, "\(key) needs a width and height of zero or more") }
        return Rect(x: numbers[0], y: numbers[1], width: numbers[2], height: numbers[3])
    }

    /// A table of named points, `{ name = [x, y], … }`.
    mutating func points(_ key: String) throws(ConfigurationError) -> [String: Point]? {
        guard let value = value(key) else { return nil }
        guard let table = value.table else { throw wrongType(key, "a table of named points, { name = [x, y], … }", value) }
        var inner = inner(table, below: key)
        var points: [String: Point] = [:]
        for name in table.keys.sorted() { points[name] = try inner.point(name) }
        return points
    }

    /// A point, or the id of another element whose position to follow.
    mutating func destination(_ key: String) throws(ConfigurationError) -> DestinationSettings? {
        guard let value = value(key) else { return nil }
        if let id = value.string { return .element(id) }
        guard let point = try pair(value, key: key, names: ("x", "y")) else {
            throw wrongType(key, "a point, [x, y], or an element id", value)
        }
        let position = Point(x: point.0, y: point.1)
        if let problem = limits.problem(position: position) { throw error(key, "\(key): \(problem)") }
        return .point(position)
    }

    /// `{ tension, friction [, mass] }`, `{ origami_tension, origami_friction }` or
    /// `{ bounciness, speed }`; the default spring when absent. Checked to come to rest.
    mutating func spring(_ key: String) throws(ConfigurationError) -> SpringConfiguration {
        guard let value = value(key) else { return .standard }
        guard let table = value.table else {
            throw wrongType(key, "a table: { tension = 342, friction = 30 }, { origami_tension = …, origami_friction = … } or { bounciness = …, speed = … }", value)
        }
        var inner = inner(table, below: key)
        let keys = Set(table.keys)
        var configuration: SpringConfiguration
        if keys.contains("origami_tension") || keys.contains("origami_friction") {
            guard let t = try inner.number("origami_tension"), let f = try inner.number("origami_friction") else {
                throw inner.error(nil, "origami_tension and origami_friction go together")
            }
            configuration = SpringConfiguration(origamiTension: t, origamiFriction: f)
        } else if keys.contains("bounciness") || keys.contains("speed") {
            guard let b = try inner.number("bounciness"), let s = try inner.number("speed") else {
                throw inner.error(nil, "bounciness and speed go together")
            }
            configuration = SpringConfiguration(bounciness: b, speed: s)
        } else {
            configuration = SpringConfiguration(tension: try inner.number("tension") ?? 342, friction: try inner.number("friction") ?? 30)
        }
        configuration.mass = try inner.number("mass") ?? 1
        try inner.finish()
        do { return try configuration.validated() } catch {
            throw self.error(key, "this spring cannot run: \(error)")
        }
    }

    /// A table below this one, if present: merged key by key across the files that have it.
    mutating func table(_ key: String) throws(ConfigurationError) -> TableReader? {
        read.insert(key)
        var found: [Layer] = []
        for layer in layers {
            guard let value = layer.table[key] else { continue }
            guard let table = value.table else {
                throw layer.error(path + [key], "\(key) must be a table ([\((path + [key]).joined(separator: "."))]), not \(value.description)")
            }
            found.append(Layer(table: table, context: layer.context))
        }
        guard !found.isEmpty else { return nil }
        var reader = TableReader(layers: found, path: path + [key])
        reader.limits = limits
        return reader
    }

    /// An array of tables (`[[key]]`), each with its index in the path: every file's, in
    /// the order the files were read.
    mutating func tables(_ key: String) throws(ConfigurationError) -> [TableReader] {
        read.insert(key)
        var tables: [TableReader] = []
        for layer in layers {
            guard let value = layer.table[key] else { continue }
            let wrong = layer.error(path + [key], "\(key) must be an array of tables ([[\(key)]]), not \(value.description)")
            guard let array = value.array else { throw wrong }
            for (index, element) in array.enumerated() {
                guard let table = element.table else { throw wrong }
                var reader = TableReader(table, path: path + ["\(key)[\(index)]"], context: layer.context)
                reader.limits = limits
                tables.append(reader)
            }
        }
        return tables
    }

    private func pair(_ value: SettingsValue, key: String, names: (String, String)) throws(ConfigurationError) -> (Double, Double)? {
        if let array = value.array {
            let numbers = array.compactMap(\.number)
            return numbers.count == 2 && array.count == 2 ? (numbers[0], numbers[1]) : nil
        }
        if let table = value.table {
            var inner = inner(table, below: key)
            guard let a = try inner.number(names.0), let b = try inner.number(names.1) else { return nil }
            try inner.finish()
            return (a, b)
        }
        return nil
    }
}
