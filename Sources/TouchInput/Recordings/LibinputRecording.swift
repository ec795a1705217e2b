import TouchModel

/// Reads `libinput record`'s YAML (file version 1), the format attached to libinput bug
/// reports, into the same ``EvemuRecording`` an evemu file gives.
///
/// What is read, of one device in `devices`:
///
///     devices:
///     - node: /dev/input/event5
///       evdev:
///         name: "Atmel maXTouch Touchscreen"
///         id: [24, 0, 0, 0]                 # bus, vendor, product, version
///         codes: {0: [0, 1, 3], 1: [330], 3: [0, 1, 47, 53, 54, 57]}
///         absinfo: {0: [0, 799, 0, 0, 0]}   # minimum, maximum, fuzz, flat, resolution
///         properties: [1]
///       events:
///       - evdev:
///         - [0, 0, 3, 57, 0]                # seconds, microseconds, type, code, value
///
/// Everything else (`system`, `udev`, `quirks`, `hid`, libinput's own events) is left
/// alone. Numbers may be written in decimal or hexadecimal (`0x39`); lists in flow or block
/// style; comments anywhere.
enum LibinputRecording {
    /// Whether `text` is YAML rather than evemu: its first line that is neither blank nor a
    /// comment is not an evemu `X:` line.
    static func looksLikeYAML(_ text: Substring) -> Bool {
        for line in text.split(separator: "\n", maxSplits: 200, omittingEmptySubsequences: true).prefix(200) {
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            if trimmed.isEmpty || trimmed.hasPrefix("#") || trimmed == "\r" { continue }
            let isEvemu = trimmed.count >= 2 && trimmed.first!.isLetter && trimmed.dropFirst().first == ":"
            return !isEvemu
        }
        return false
    }

    /// The most events read from one file. An alias repeated in a list multiplies what a
    /// small file holds; past this, the file is refused instead of filling memory.
    static let maximumEvents = 10_000_000

    /// Parses the recording of device `index` in `devices`, or with nil, of the first
    /// touchscreen (else the first device).
    static func parse(_ text: String, device index: Int?, validatingDevice: Bool, eventLimit: Int = maximumEvents) throws(EvemuParseError) -> EvemuRecording {
        let (root, devices) = try described(text)
        let reader = NodeReader()
        let chosen: Int
        if let index {
            guard devices.indices.contains(index) else {
                throw reader.error(root["devices"], "--device \(index) is not in the recording: it holds \(devices.count) device\(devices.count == 1 ? "" : "s"), numbered from 0")
            }
            chosen = index
        } else {
            chosen = devices.firstIndex { $0.device.kind.isTouchscreen } ?? 0
        }
        let (node, device) = devices[chosen]
        if validatingDevice, let problem = device.problems.first {
            throw reader.error(node["evdev"], "the device is invalid: \(problem)")
        }
        var count = 0
        return EvemuRecording(device: device, events: try events(of: node, counted: &count, limit: eventLimit), formatVersion: nil)
    }

    /// Parses the recording of every device in `devices`, in file order, their descriptions
    /// as the file has them (valid or not), with at most `eventLimit` events in all.
    static func parseEvery(_ text: String, eventLimit: Int = maximumEvents) throws(EvemuParseError) -> [EvemuRecording] {
        var count = 0
        var recordings: [EvemuRecording] = []
        for (node, device) in try described(text).devices {
            recordings.append(EvemuRecording(device: device, events: try events(of: node, counted: &count, limit: eventLimit), formatVersion: nil))
        }
        return recordings
    }

    /// The document's root and each entry of its `devices` with the device it describes.
    private static func described(_ text: String) throws(EvemuParseError) -> (root: YAMLNode, devices: [(node: YAMLNode, device: DeviceDescription)]) {
        let composed: YAMLNode?
        do throws(YAMLDocument.Failure) { composed = try YAMLDocument.compose(text) } catch {
            throw EvemuParseError(line: error.line, message: "not valid YAML: \(error.problem)")
        }
        guard let root = composed else { throw EvemuParseError(line: 1, message: "the file is empty") }
        let reader = NodeReader()
        let version = try reader.integer(try reader.member("version", of: root, "a libinput recording"), "version", in: 1...Int64.max)
        guard version == 1 else {
            throw EvemuParseError(line: root["version"]?.line ?? 1, message: "libinput recording version \(version) is not supported; version 1 is")
        }
        let devices = try reader.sequence(try reader.member("devices", of: root, "a libinput recording"), "devices")
        guard !devices.isEmpty else { throw reader.error(root["devices"], "'devices' is empty: the recording holds no device") }
        var described: [(node: YAMLNode, device: DeviceDescription)] = []
        for node in devices {
            described.append((node, try reader.device(node)))
        }
        return (root, described)
    }

    /// A device entry's events; `count` adds up the events read from the file so far, which
    /// may not pass `limit`.
    private static func events(of node: YAMLNode, counted count: inout Int, limit: Int) throws(EvemuParseError) -> [InputEvent] {
        let reader = NodeReader()
        var events: [InputEvent] = []
        guard let list = node["events"] else { return events }
        for entry in try reader.sequence(list, "events") {
            // Each entry is a frame of kernel events (`evdev`) or something libinput
            // printed (`libinput`, `hidraw`), which is not input.
            guard let frame = entry["evdev"] else { continue }
            for item in try reader.sequence(frame, "evdev events") {
                events.append(try reader.event(item))
                count += 1
                if count > limit {
                    throw reader.error(item, "more than \(limit) events: the recording is refused")
                }
            }
        }
        return events
    }
}

extension EvemuRecording {
    /// Parses a recording in either format people attach to bug reports: evemu's text, or
    /// `libinput record`'s YAML, told apart by their first line that is not a comment.
    ///
    /// A libinput recording may hold several devices: `device` picks one by its place in the
    /// file (from 0); nil picks the first touchscreen. An evemu recording holds one, 0.
    ///
    /// - Throws: ``EvemuParseError`` with the line and what was expected.
    public init(reading text: String, device: Int? = nil, validatingDevice: Bool = true) throws(EvemuParseError) {
        if LibinputRecording.looksLikeYAML(text[...]) {
            self = try LibinputRecording.parse(text, device: device, validatingDevice: validatingDevice)
            return
        }
        if let device, device != 0 {
            throw EvemuParseError(line: 1, message: "an evemu recording holds one device, 0; choosing device \(device) goes with libinput record files")
        }
        self = try EvemuRecording(parsing: text, validatingDevice: validatingDevice)
    }

    /// Parses a recording in either format, evemu or `libinput record`'s YAML, into one
    /// recording per device it holds (an evemu file holds one), each description as the
    /// file has it, valid or not: for a tool that reports on every device of a file, and
    /// says itself why one cannot be replayed (``RecordingReplay``).
    ///
    /// - Throws: ``EvemuParseError`` with the line and what was expected.
    public static func everyDevice(reading text: String) throws(EvemuParseError) -> [EvemuRecording] {
        if LibinputRecording.looksLikeYAML(text[...]) { return try LibinputRecording.parseEvery(text) }
        return [try EvemuRecording(parsing: text, validatingDevice: false)]
    }
}

/// Reads typed values out of YAML nodes, failing at the node's line with what was expected.
private struct NodeReader {
    func error(_ node: YAMLNode?, _ message: String) -> EvemuParseError {
        EvemuParseError(line: node?.line ?? 1, message: message)
    }

    func member(_ key: String, of node: YAMLNode, _ what: String) throws(EvemuParseError) -> YAMLNode {
        guard case .mapping = node.content else { throw error(node, "expected \(what) as a mapping with '\(key)'") }
        guard let value = node[key] else { throw error(node, "\(what) has no '\(key)'") }
        return value
    }

    func sequence(_ node: YAMLNode, _ what: String) throws(EvemuParseError) -> [YAMLNode] {
        guard case .sequence(let items) = node.content else { throw error(node, "expected '\(what)' to be a list") }
        return items
    }

    /// A whole number, in decimal or with 0x in hexadecimal, within `range`.
    func integer(_ node: YAMLNode, _ what: String, in range: ClosedRange<Int64>) throws(EvemuParseError) -> Int64 {
        guard case .scalar(let scalar) = node.content else { throw error(node, "expected \(what) to be a number") }
        var text = Substring(scalar)
        var negative = false
        if text.hasPrefix("-") { negative = true; text = text.dropFirst() } else if text.hasPrefix("+") { text = text.dropFirst() }
        let magnitude: UInt64?
        if text.hasPrefix("0x") || text.hasPrefix("0X") {
            magnitude = UInt64(text.dropFirst(2), radix: 16)
        } else {
            magnitude = UInt64(text, radix: 10)
        }
        guard let magnitude, magnitude <= UInt64(Int64.max) else {
            throw error(node, "expected \(what) to be a whole number, found \(OutsideText.quoted(scalar.prefix(40)))")
        }
        let value = negative ? -Int64(magnitude) : Int64(magnitude)
        guard range.contains(value) else { throw error(node, "\(what) \(value) is outside \(range.lowerBound)…\(range.upperBound)") }
        return value
    }

    func numbers(_ node: YAMLNode, _ what: String, count: Int? = nil, in range: ClosedRange<Int64>) throws(EvemuParseError) -> [Int64] {
        let items = try sequence(node, what)
        if let count, items.count != count { throw error(node, "expected '\(what)' to hold \(count) numbers, found \(items.count)") }
        var values: [Int64] = []
        for item in items { values.append(try integer(item, what, in: range)) }
        return values
    }

    /// One `devices` entry's `evdev` description.
    func device(_ entry: YAMLNode) throws(EvemuParseError) -> DeviceDescription {
        let evdev = try member("evdev", of: entry, "a device")
        guard case .scalar(let name) = try member("name", of: evdev, "the device's evdev").content else {
            throw error(evdev["name"], "expected the device's name to be text")
        }
        var device = DeviceDescription(name: name)
        let ids = try numbers(try member("id", of: evdev, "the device's evdev"), "id", count: 4, in: 0...0xffff).map(UInt16.init)
        (device.bus, device.vendor, device.product, device.version) = (ids[0], ids[1], ids[2], ids[3])
        if let properties = evdev["properties"] {
            device.properties = Set(try numbers(properties, "properties", in: 0...Int64(InputProperty.count - 1)).map(UInt16.init))
        }
        guard case .mapping(let codes) = try member("codes", of: evdev, "the device's evdev").content else {
            throw error(evdev["codes"], "expected 'codes' to map each event type to its codes")
        }
        for (key, list) in codes {
            let type = UInt16(try integer(key, "an event type", in: 0...Int64(EventType.max)))
            let maximum = Int64(EventType.maximumCode(of: type))
            device.codes[type] = Set(try numbers(list, "codes of type \(type)", in: 0...maximum).map(UInt16.init))
        }
        if let absinfo = evdev["absinfo"] {
            guard case .mapping(let axes) = absinfo.content else { throw error(absinfo, "expected 'absinfo' to map each axis to [min, max, fuzz, flat, resolution]") }
            for (key, list) in axes {
                let code = UInt16(try integer(key, "an axis", in: 0...Int64(AbsoluteAxis.max)))
                let v = try numbers(list, "absinfo of axis \(code)", count: 5, in: Int64(Int32.min)...Int64(Int32.max)).map(Int32.init)
                device.axes[code] = AxisInfo(minimum: v[0], maximum: v[1], fuzz: v[2], flat: v[3], resolution: v[4])
            }
        }
        return device
    }

    /// `[seconds, microseconds, type, code, value]`.
    func event(_ node: YAMLNode) throws(EvemuParseError) -> InputEvent {
        let items = try sequence(node, "an event")
        guard items.count == 5 else { throw error(node, "expected an event as [seconds, microseconds, type, code, value], found \(items.count) numbers") }
        let seconds = try integer(items[0], "seconds", in: 0...Int64(EvemuParser.maximumSeconds))
        let micros = try integer(items[1], "microseconds", in: 0...999_999)
        let type = try integer(items[2], "an event type", in: 0...Int64(EventType.max))
        let code = try integer(items[3], "an event code", in: 0...Int64(UInt16.max))
        let value = try integer(items[4], "an event value", in: Int64(Int32.min)...Int64(Int32.max))
        return InputEvent(time: Double(seconds) + Double(micros) / 1_000_000, type: UInt16(type), code: UInt16(code), value: Int32(value))
    }
}
