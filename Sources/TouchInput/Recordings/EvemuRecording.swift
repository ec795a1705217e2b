import TouchModel

/// A recording in evemu's text format, as `evemu-record` writes it and as people attach to
/// bug reports: a device header (`N:`, `I:`, `P:`, `B:`, `A:` lines) and events
/// (`E: SEC.USEC TYPE CODE VALUE`). A file of events alone, with no header, is accepted too.
public struct EvemuRecording: Sendable {
    /// The device, when the file has a header.
    public var device: DeviceDescription?
    /// The events, in file order, with their timestamps as written.
    public var events: [InputEvent]
    /// The format version from a `# EVEMU x.y` line, if any.
    public var formatVersion: String?

    /// Creates a recording from its parts.
    public init(device: DeviceDescription?, events: [InputEvent], formatVersion: String? = nil) {
        self.device = device
        self.events = events
        self.formatVersion = formatVersion
    }

    /// Parses a recording's text.
    ///
    /// The device header is validated as a live device's description is
    /// (``DeviceDescription/validate()``), and a problem fails the parse at the line that
    /// declared it. `validatingDevice: false` keeps a description motiond would refuse, for
    /// tools that fake such a device to test the refusal; lines that cannot be represented
    /// (bit masks longer than the kernel's) fail either way.
    ///
    /// - Throws: ``EvemuParseError`` naming the first malformed line and what was expected.
    public init(parsing text: String, validatingDevice: Bool = true) throws(EvemuParseError) {
        var parser = EvemuParser()
        let lineNumber: Int
        // Event lines are most of a file: read from the bytes, without a String or an array
        // per line. Without a carriage return, lines end exactly at each "\n" byte, which is
        // also where Swift's Characters split them (nothing combines with a line feed).
        if text.utf8.contains(UInt8(ascii: "\r")) {
            lineNumber = try Self.parseLineByLine(text, into: &parser)
        } else {
            lineNumber = try Self.parseBytes(text, into: &parser)
        }
        self = parser.recording()
        if validatingDevice, let problem = device?.problems.first {
            throw EvemuParseError(line: parser.line(of: problem.part) ?? lineNumber, message: "the device is invalid: \(problem)")
        }
    }

    /// Every line as a Substring, through the general parser: for files with carriage
    /// returns (saved on Windows), whose "\r\n" Swift reads as one Character. The line count.
    static func parseLineByLine(_ text: String, into parser: inout EvemuParser) throws(EvemuParseError) -> Int {
        var lineNumber = 0
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            lineNumber += 1
            try parser.parse(line, number: lineNumber)
        }
        return lineNumber
    }

    /// Lines split at each "\n" byte; an event line in evemu's own form is read from its
    /// bytes (``EvemuParser/event(_:)``), and any other line, or an event line that is not in
    /// that form, goes through the general parser, which accepts or refuses it as it always
    /// did. The line count.
    static func parseBytes(_ text: String, into parser: inout EvemuParser) throws(EvemuParseError) -> Int {
        var text = text
        text.makeContiguousUTF8()
        let utf8 = text.utf8
        var lineNumber = 0
        var failure: EvemuParseError?
        utf8.withContiguousStorageIfAvailable { bytes in
            parser.reserveEvents(bytes.count / 24)  // evemu's event lines are about 30 bytes
            var start = 0
            while start <= bytes.count {
                var end = start
                while end < bytes.count, bytes[end] != UInt8(ascii: "\n") { end += 1 }
                lineNumber += 1
                let line = UnsafeBufferPointer(rebasing: bytes[start..<end])
                if let event = EvemuParser.event(line) {
                    parser.append(event)
                } else {
                    let from = utf8.index(utf8.startIndex, offsetBy: start), to = utf8.index(utf8.startIndex, offsetBy: end)
                    do throws(EvemuParseError) { try parser.parse(text[from..<to], number: lineNumber) } catch {
                        failure = error
                        return
                    }
                }
                start = end + 1
            }
        }
        if let failure { throw failure }
        return lineNumber
    }

    /// The time of the first event; replays run relative to it, since recordings hold
    /// either absolute times or times from zero.
    public var startTime: Double { events.first?.time ?? 0 }

    /// The time from the first event to the last.
    public var duration: Double { (events.last?.time ?? 0) - startTime }
}

/// Evemu text read in pieces as a file gives them, so that the file's text is never in
/// memory whole: lines are split at each "\n" byte and read as
/// ``EvemuRecording/parseBytes(_:into:)`` reads them, an event line in evemu's own form from
/// its bytes and any other through the general parser. Text continues from one piece to the
/// next, lines and line numbers too, so a description and its events files read one after
/// the other are one recording.
struct EvemuStream {
    private var parser = EvemuParser()
    /// The start of the line the last piece ended within.
    private var partial: [UInt8] = []
    private var lineNumber = 0

    /// Reads the lines `piece` completes; the last, unfinished, waits for the next piece.
    mutating func read(_ piece: UnsafeBufferPointer<UInt8>) throws(EvemuParseError) {
        var start = 0
        while let newline = piece[start...].firstIndex(of: UInt8(ascii: "\n")) {
            if partial.isEmpty {
                try line(UnsafeBufferPointer(rebasing: piece[start..<newline]))
            } else {
                partial += piece[start..<newline]
                try readPartial()
            }
            start = newline + 1
        }
        partial += piece[start...]
    }

    /// The recording, its description as the text has it, valid or not, once every piece has
    /// been read: the text's last line, which no "\n" ends, is read here.
    mutating func finish() throws(EvemuParseError) -> EvemuRecording {
        try readPartial()
        return parser.recording()
    }

    private mutating func readPartial() throws(EvemuParseError) {
        let whole = partial
        partial.removeAll(keepingCapacity: true)
        var failure: EvemuParseError?
        whole.withUnsafeBufferPointer { bytes in
            do throws(EvemuParseError) { try line(bytes) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    private mutating func line(_ bytes: UnsafeBufferPointer<UInt8>) throws(EvemuParseError) {
        lineNumber += 1
        // A file saved on Windows ends its lines with "\r\n"; the general parser drops the "\r" too.
        let line = bytes.last == UInt8(ascii: "\r") ? UnsafeBufferPointer(rebasing: bytes.dropLast()) : bytes
        if let event = EvemuParser.event(line) { return parser.append(event) }
        guard let text = String(validating: line, as: UTF8.self) else {
            throw EvemuParseError(line: lineNumber, message: "not UTF-8 text: an evemu recording is text")
        }
        try parser.parse(text[...], number: lineNumber)
    }
}

/// A line of an evemu file that could not be read.
public struct EvemuParseError: Error, Equatable, CustomStringConvertible {
    /// The line number, from 1.
    public var line: Int
    /// What was wrong and what was expected.
    public var message: String

    public var description: String { "line \(line): \(message)" }
}

/// Reads an evemu file line by line.
struct EvemuParser {
    private var name: String?
    private var device = DeviceDescription(name: "")
    private var hasHeader = false
    private var propertyBytes: [UInt8] = []
    private var codeBytes: [UInt16: [UInt8]] = [:]
    private var events: [InputEvent] = []
    private var version: String?
    /// Where each part of the description was declared, to point at it when it is invalid.
    private var partLines: [DeviceProblem.Part: Int] = [:]

    /// The latest timestamp read, in seconds: `UInt32.max`, 2106 as wall-clock time. Later
    /// ones are corrupt, and below it a Double still holds every microsecond exactly.
    static let maximumSeconds: UInt64 = 4_294_967_295

    mutating func parse(_ rawLine: Substring, number: Int) throws(EvemuParseError) {
        func fail(_ message: String) -> EvemuParseError { EvemuParseError(line: number, message: message) }

        let line = rawLine.hasSuffix("\r") ? rawLine.dropLast() : rawLine
        if line.allSatisfy({ $0 == " " || $0 == "\t" }) { return }
        if line.hasPrefix("#") {
            let comment = line.dropFirst().trimmingSpaces()
            if comment.hasPrefix("EVEMU ") { version = String(comment.dropFirst(6)) }
            return
        }
        guard line.count >= 2, line.dropFirst().first == ":" else {
            throw fail("expected a line starting with N:, I:, P:, B:, A:, L:, S: or E:, found \(OutsideText.quoted(line.prefix(40)))")
        }
        let kind = line.first!
        let rest = line.dropFirst(2)
        let fields = rest.split(whereSeparator: { $0 == " " || $0 == "\t" })

        switch kind {
        case "N":
            hasHeader = true
            device.name = String(rest.trimmingSpaces())
        case "I":
            hasHeader = true
            let ids = fields.prefix(4).compactMap { UInt16($0, radix: 16) }
            guard fields.count == 4, ids.count == 4 else {
                throw fail("expected 'I: BUS VENDOR PRODUCT VERSION' as four hexadecimal numbers")
            }
            (device.bus, device.vendor, device.product, device.version) = (ids[0], ids[1], ids[2], ids[3])
        case "P":
            hasHeader = true
            propertyBytes += try Self.bytes(fields, fail("expected 'P:' followed by hexadecimal bytes"))
            try Self.checkMaskLength(propertyBytes, maximum: InputProperty.count - 1, "INPUT_PROP_MAX", fail)
            partLines[.properties] = number
        case "B":
            hasHeader = true
            try codes(fields, number: number, fail: fail)
        case "A":
            hasHeader = true
            try axis(fields, number: number, fail: fail)
        case "L", "S":
            hasHeader = true  // LED and switch states: nothing a touchscreen needs.
        case "E":
            events.append(try Self.event(rest, fail: fail))
        default:
            throw fail("unknown line type \(OutsideText.quoted(String(kind) + ":")); expected N:, I:, P:, B:, A:, L:, S: or E:")
        }
    }

    /// A `B:` line: a mask of event types (`B: 00`) or of one type's codes, in bytes that
    /// may continue over several lines.
    private mutating func codes(_ fields: [Substring], number: Int, fail: (String) -> EvemuParseError) throws(EvemuParseError) {
        guard let typeField = fields.first, let type = UInt8(typeField, radix: 16) else {
            throw fail("expected 'B: TYPE BYTES…' with the event type in hexadecimal")
        }
        guard UInt16(type) <= EventType.max else {
            throw fail("event type 0x\(typeField) is beyond EV_MAX (0x\(String(EventType.max, radix: 16)))")
        }
        codeBytes[UInt16(type), default: []] += try Self.bytes(fields.dropFirst(), fail("expected 'B:' bytes in hexadecimal"))
        let isTypes = UInt16(type) == EventType.synchronization
        try Self.checkMaskLength(codeBytes[UInt16(type)]!, maximum: isTypes ? EventType.max : EventType.maximumCode(of: UInt16(type)),
                                 isTypes ? "EV_MAX" : "the type's maximum code", fail)
        partLines[.codes(type: UInt16(type))] = partLines[.codes(type: UInt16(type))] ?? number
    }

    /// An `A:` line: one absolute axis's range, fuzz, flat and (evemu 1.2 on) resolution.
    private mutating func axis(_ fields: [Substring], number: Int, fail: (String) -> EvemuParseError) throws(EvemuParseError) {
        let values = fields.dropFirst().map { Int32($0) }
        guard let codeField = fields.first, let code = UInt16(codeField, radix: 16),
              values.count == 4 || values.count == 5, values.allSatisfy({ $0 != nil }) else {
            throw fail("expected 'A: CODE MIN MAX FUZZ FLAT [RESOLUTION]' with the code in hexadecimal and decimal values")
        }
        let v = values.map { $0! }
        device.axes[code] = AxisInfo(minimum: v[0], maximum: v[1], fuzz: v[2], flat: v[3], resolution: v.count == 5 ? v[4] : 0)
        partLines[.axis(code)] = number
    }

    /// The line that declared `part`, if one did: for an axis without its `A:` line, the
    /// `B: 03` line that says the device sends it.
    func line(of part: DeviceProblem.Part) -> Int? {
        if case .axis = part, partLines[part] == nil { return partLines[.codes(type: EventType.absolute)] }
        return partLines[part]
    }

    mutating func reserveEvents(_ count: Int) {
        events.reserveCapacity(count)
    }

    mutating func append(_ event: InputEvent) {
        events.append(event)
    }

    /// An event line exactly as evemu writes it, read from its bytes:
    /// `E: SECONDS.MICROS TYPE CODE VALUE` with spaces or tabs between the fields, decimal
    /// digits (at most six after the point), one to four hexadecimal digits for the type and
    /// the code, an optional minus sign on the value, and optionally a `#` comment. Nil for
    /// any other line, which the general parser then reads (and accepts or refuses) as before;
    /// what this accepts, it reads to the same event.
    static func event(_ line: UnsafeBufferPointer<UInt8>) -> InputEvent? {
        guard line.count > 2, line[0] == UInt8(ascii: "E"), line[1] == UInt8(ascii: ":") else { return nil }
        var index = 2
        func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        func skipBlanks() -> Bool {
            let before = index
            while index < line.count, isBlank(line[index]) { index += 1 }
            return index > before
        }
        func decimal(maximumDigits: Int) -> (value: UInt64, digits: Int)? {
            var value: UInt64 = 0, digits = 0
            while index < line.count, digits < maximumDigits, case let digit = line[index] &- UInt8(ascii: "0"), digit < 10 {
                value = value * 10 + UInt64(digit)
                digits += 1
                index += 1
            }
            return digits > 0 ? (value, digits) : nil
        }
        func hexadecimal() -> UInt16? {
            var value: UInt16 = 0, digits = 0
            while index < line.count, digits < 4 {
                let byte = line[index]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: return digits > 0 ? value : nil
                }
                value = value << 4 | UInt16(digit)
                digits += 1
                index += 1
            }
            return digits > 0 ? value : nil
        }
        _ = skipBlanks()
        // Up to 10 digits: every value up to maximumSeconds, and no overflow.
        guard let seconds = decimal(maximumDigits: 10), seconds.value <= maximumSeconds,
              index < line.count, line[index] == UInt8(ascii: "."), case _ = (index += 1),
              let micros = decimal(maximumDigits: 6),
              skipBlanks(), let type = hexadecimal(),
              skipBlanks(), let code = hexadecimal(),
              skipBlanks() else { return nil }
        let negative = index < line.count && line[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        guard let magnitude = decimal(maximumDigits: 10), magnitude.value <= (negative ? 2_147_483_648 : 2_147_483_647) else { return nil }
        // The end of the line, or blanks and a comment.
        _ = skipBlanks()
        guard index == line.count || line[index] == UInt8(ascii: "#") else { return nil }
        let value = negative ? Int32(truncatingIfNeeded: 0 &- Int64(magnitude.value)) : Int32(magnitude.value)
        // As the general parser computes it, so both give the same Double.
        let time = Double(seconds.value) + Double(micros.value) / pow10(micros.digits)
        return InputEvent(time: time, type: type, code: code, value: value)
    }

    func recording() -> EvemuRecording {
        var device = self.device
        device.properties = Self.bits(propertyBytes)
        // `B: 00` lists the event types; the other `B:` lines, the codes of each type.
        for type in Self.bits(codeBytes[EventType.synchronization] ?? []) where type != EventType.synchronization {
            device.codes[type] = Self.bits(codeBytes[type] ?? [])
        }
        return EvemuRecording(device: hasHeader ? device : nil, events: events, formatVersion: version)
    }

    /// `E: SEC.USEC TYPE CODE VALUE`, optionally followed by a `#` comment.
    private static func event(_ rest: Substring, fail: (String) -> EvemuParseError) throws(EvemuParseError) -> InputEvent {
        let content = rest.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? rest
        let fields = content.split(whereSeparator: { $0 == " " || $0 == "\t" })
        let expected = "expected 'E: SECONDS.MICROSECONDS TYPE CODE VALUE' (type and code in hexadecimal, value in decimal)"
        guard fields.count == 4 else { throw fail(expected + ", found \(fields.count) fields") }
        let time = fields[0].split(separator: ".", omittingEmptySubsequences: false)
        guard time.count == 2, let seconds = UInt64(time[0]), let micros = UInt64(time[1]), time[1].count <= 6 else {
            throw fail(expected + "; \(OutsideText.quoted(fields[0])) is not a time")
        }
        guard seconds <= maximumSeconds else {
            throw fail("the time \(fields[0]) is beyond the latest motiond reads (\(maximumSeconds) seconds)")
        }
        guard let type = UInt16(fields[1], radix: 16), let code = UInt16(fields[2], radix: 16) else {
            throw fail(expected + "; \(OutsideText.quoted(fields[1] + " " + fields[2])) is not a hexadecimal type and code")
        }
        guard let value = Int32(fields[3]) else { throw fail(expected + "; \(OutsideText.quoted(fields[3])) is not a value") }
        // Read as a decimal fraction; evemu always writes six digits, i.e. microseconds.
        let fraction = Double(micros) / pow10(time[1].count)
        return InputEvent(time: Double(seconds) + fraction, type: type, code: code, value: value)
    }

    private static func pow10(_ digits: Int) -> Double {
        var result = 1.0
        for _ in 0..<digits { result *= 10 }
        return result
    }

    private static func bytes<S: Sequence>(_ fields: S, _ error: EvemuParseError) throws(EvemuParseError) -> [UInt8] where S.Element == Substring {
        var bytes: [UInt8] = []
        for field in fields {
            guard field.count <= 2, let byte = UInt8(field, radix: 16) else { throw error }
            bytes.append(byte)
        }
        return bytes
    }

    /// Refuses a mask longer than the kernel's for codes up to `maximum`: nothing beyond
    /// it can be reported, and its bit numbers would not fit a code.
    private static func checkMaskLength(_ bytes: [UInt8], maximum: UInt16, _ limit: String, _ fail: (String) -> EvemuParseError) throws(EvemuParseError) {
        let allowed = EventType.maskBytes(upTo: maximum)
        guard bytes.count <= allowed else {
            throw fail("a bit mask of \(bytes.count) bytes; the kernel's is at most \(allowed) (\(limit) 0x\(String(maximum, radix: 16)))")
        }
    }

    /// The set bits of a little-endian byte mask.
    private static func bits(_ bytes: [UInt8]) -> Set<UInt16> {
        var set: Set<UInt16> = []
        for (index, byte) in bytes.enumerated() where byte != 0 {
            for bit in 0..<8 where byte & (1 << bit) != 0 {
                set.insert(UInt16(index * 8 + bit))
            }
        }
        return set
    }
}

extension Substring {
    func trimmingSpaces() -> Substring {
        var result = self
        while let first = result.first, first == " " || first == "\t" { result = result.dropFirst() }
        while let last = result.last, last == " " || last == "\t" { result = result.dropLast() }
        return result
    }
}
