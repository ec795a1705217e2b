import MotionConfiguration
import MotionCore
import MotionWire

/// Writes the protocol's `value` lines straight into a ``LineBuffer``, byte for byte as
/// ``JSONValue/encoded`` would write them, without building a `JSONValue` or a `String`
/// first: the publisher writes one per changed stream per frame, on the path every frame
/// takes. Each line is written in one step into room reserved for its longest form
/// (``ValueLine``): a buffer's own writes check its storage's uniqueness at each call,
/// which cost more than the bytes of a line's dozen pieces.
extension LineBuffer {
    /// `{"event":"value","stream":NAME,"value":VALUE,"t":TIME,"seq":SEQ}` and a newline.
    mutating func writeValueLine(stream: String, value: PublishedValue, time: Double, seq: Int) {
        var times = TimeDigits()
        writeValueLine(stream: stream, value: value, time: time, seq: seq, times: &times)
    }

    /// The same, taking the time's digits from `times` when the line before had the same time.
    mutating func writeValueLine(stream: String, value: PublishedValue, time: Double, seq: Int, times: inout TimeDigits) {
        writeLine(atMost: ValueLine.mostBytes(head: stream) + ValueLine.mostBytes(value) + ValueLine.mostTailBytes) { line in
            line.writeHead(stream: stream)
            line.writePublished(value)
            line.writeTail(time: time, seq: seq, times: &times)
        }
    }

    /// A `value` line whose value `writeValue` writes.
    mutating func writeValueLine(stream: String, time: Double, seq: Int, _ writeValue: (inout LineBuffer) -> Void) {
        writeLine(atMost: ValueLine.mostBytes(head: stream)) { $0.writeHead(stream: stream) }
        writeValue(&self)
        writeLine(atMost: ValueLine.mostTailBytes) { $0.writeTail(time: time, seq: seq) }
    }

    /// `screen.contacts`' value as ``JSONValue/published(_:)`` encodes it.
    mutating func writeContacts(_ contacts: [ScreenContact]) {
        writeLine(atMost: ValueLine.mostBytes(.contacts(contacts))) { $0.writeContacts(contacts) }
    }

    /// Writes what `body` writes, at most `most` bytes, in one access to the storage.
    private mutating func writeLine(atMost most: Int, _ body: (inout ValueLine) -> Void) {
        write(atMost: most) { memory in
            var line = ValueLine(memory)
            body(&line)
            return line.count
        }
    }
}

/// The digits of the last time stamp a frame's lines wrote, for its next line of the same
/// time: a frame's values share its time, and copying its digits costs a tenth of finding them.
struct TimeDigits {
    /// The time they are of; never equal to any time (NaN) when none is kept.
    fileprivate var time = Double.nan
    /// Up to 24 bytes (``ValueLine/mostNumberBytes``), `count` of them used.
    fileprivate var bytes: (UInt64, UInt64, UInt64) = (0, 0, 0)
    fileprivate var count = 0
}

/// A line written into memory reserved for it, at most as many bytes as ``mostBytes(_:)``
/// and its kin say its parts take: a byte at a time or a piece at a time, with nothing
/// checked but that bound (in debug builds).
///
/// Numbers are Swift's own shortest round-trip digits (`description`), which the standard
/// library hands a text stream as ASCII (``_writeASCII(_:)``): taken here straight into the
/// line, never a `String`.
struct ValueLine: TextOutputStream {
    private let memory: UnsafeMutableRawBufferPointer
    /// The bytes written so far.
    private(set) var count = 0

    init(_ memory: UnsafeMutableRawBufferPointer) {
        self.memory = memory
    }

    // MARK: Bounds

    /// The longest a number is written: `-2.2250738585072014e-308`.
    static let mostNumberBytes = 24
    /// The longest the tail is: `,"t":TIME,"seq":SEQ}` and the newline.
    static let mostTailBytes = 15 + mostNumberBytes + 20

    /// The longest a string is once quoted and escaped: an escape is at most six bytes
    /// (`\u0085`) for a character of at least one.
    static func mostBytes(string: String) -> Int { 2 + 6 * string.utf8.count }

    /// The longest the head is: `{"event":"value","stream":NAME,"value":`.
    static func mostBytes(head stream: String) -> Int { 35 + mostBytes(string: stream) }

    /// The longest `value` is written.
    static func mostBytes(_ value: PublishedValue) -> Int {
        switch value {
        case .point, .size: return 20 + 2 * mostNumberBytes
        case .number: return mostNumberBytes
        case .text(let text): return mostBytes(string: text)
        case .bool: return 5
        case .spring: return 32 + 3 * mostNumberBytes
        case .contacts(let fingers):
            var most = 2
            for finger in fingers { most += 64 + 20 + 4 * mostNumberBytes + mostBytes(string: finger.device) }
            return most
        }
    }

    // MARK: Writing

    /// `{"event":"value","stream":NAME,"value":`.
    mutating func writeHead(stream: String) {
        write(static: "{\"event\":\"value\",\"stream\":")
        writeJSONString(stream)
        write(static: ",\"value\":")
    }

    /// `,"t":TIME,"seq":SEQ}` and the newline.
    mutating func writeTail(time: Double, seq: Int) {
        var times = TimeDigits()
        writeTail(time: time, seq: seq, times: &times)
    }

    /// The same, the time's digits copied from `times` when they are of the same time.
    mutating func writeTail(time: Double, seq: Int, times: inout TimeDigits) {
        write(static: ",\"t\":")
        writeTime(time, &times)
        write(static: ",\"seq\":")
        writeDecimal(Int64(seq))
        write(static: "}\n")
    }

    /// `time` as ``writeJSONNumber(_:)`` writes it: the bytes `times` kept when they are of
    /// the same time (equal doubles have the same digits), and kept for the next line.
    private mutating func writeTime(_ time: Double, _ times: inout TimeDigits) {
        if time == times.time {
            withUnsafeBytes(of: times.bytes) { write(bytes: UnsafeRawBufferPointer(rebasing: $0.prefix(times.count))) }
            return
        }
        let start = count
        writeJSONNumber(time)
        guard count - start <= MemoryLayout.size(ofValue: times.bytes) else {
            times = TimeDigits()
            return
        }
        times.time = time
        times.count = count - start
        withUnsafeMutableBytes(of: &times.bytes) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: memory[start..<count])) }
    }

    /// A published value as ``JSONValue/published(_:)`` encodes it.
    mutating func writePublished(_ value: PublishedValue) {
        switch value {
        case .point(let point): writePoint(point)
        case .size(let size):
            write(static: "{\"width\":")
            writeJSONNumber(size.width)
            write(static: ",\"height\":")
            writeJSONNumber(size.height)
            writeByte(UInt8(ascii: "}"))
        case .number(let number): writeJSONNumber(number)
        case .text(let text): writeJSONString(text)
        case .bool(let flag): write(static: flag ? "true" : "false")
        case .spring(let spring):
            write(static: "{\"tension\":")
            writeJSONNumber(spring.tension)
            write(static: ",\"friction\":")
            writeJSONNumber(spring.friction)
            write(static: ",\"mass\":")
            writeJSONNumber(spring.mass)
            writeByte(UInt8(ascii: "}"))
        case .contacts(let fingers): writeContacts(fingers)
        }
    }

    /// `{"x":X,"y":Y}`.
    private mutating func writePoint(_ point: Point) {
        write(static: "{\"x\":")
        writeJSONNumber(point.x)
        write(static: ",\"y\":")
        writeJSONNumber(point.y)
        writeByte(UInt8(ascii: "}"))
    }

    /// `screen.contacts`' value: `[{"id","x","y","device","predicted"?}, …]`.
    mutating func writeContacts(_ contacts: [ScreenContact]) {
        writeByte(UInt8(ascii: "["))
        for (index, contact) in contacts.enumerated() {
            if index > 0 { writeByte(UInt8(ascii: ",")) }
            write(static: "{\"id\":")
            writeDecimal(Int64(contact.id))
            write(static: ",\"x\":")
            writeJSONNumber(contact.position.x)
            write(static: ",\"y\":")
            writeJSONNumber(contact.position.y)
            write(static: ",\"device\":")
            writeJSONString(contact.device)
            if let predicted = contact.predicted {
                write(static: ",\"predicted\":")
                writePoint(predicted)
            }
            writeByte(UInt8(ascii: "}"))
        }
        writeByte(UInt8(ascii: "]"))
    }

    /// A number as ``compactNumber(_:)`` writes it; null when not finite.
    mutating func writeJSONNumber(_ value: Double) {
        guard value.isFinite else { return write(static: "null") }
        // Whole, as `value == value.rounded()` says, by a conversion: `rounded()` is a call
        // into the C library, twenty a frame.
        if Swift.abs(value) < 1e15, Double(Int64(value)) == value { return writeDecimal(Int64(value)) }
        if writeFewDecimals(value) { return }
        value.write(to: &self)
    }

    /// Writes `value` with its decimals when they are few enough to be found by scaling (a
    /// finger's position: 880.8, 263.25; a time stamp: 52569.34558907), as Swift's shortest
    /// round-trip form writes it, without the standard library's general algorithm, which
    /// costs some 500 instructions a number; false, writing nothing, for any other.
    ///
    /// Why the digits are Swift's: `n / 10ᵏ` divided in floating point is the double nearest
    /// the decimal n·10⁻ᵏ, as reading that decimal gives, so when it is `value` those k places
    /// read back as `value`. While `value`·10ᵏ stays under 2⁴⁹, the doubles that read back as
    /// `value` span less than ⅛ of 10⁻ᵏ, so no other decimal of k places reads back as it,
    /// and the product, rounded half up, is off the nearest n by less than ⅛ before rounding:
    /// the loop finds that decimal, and would have found one of fewer places first. It is
    /// the shortest form, the only one of its length, so the one Swift writes; Swift writes
    /// magnitudes from 10⁻⁴ to 2³³ without an exponent. ValueLineTests compares the two on a
    /// few hundred thousand numbers, time stamps among them.
    private mutating func writeFewDecimals(_ value: Double) -> Bool {
        let magnitude = Swift.abs(value)
        guard magnitude >= 1e-4, magnitude < 0x1p33 else { return false }
        var scale = 1.0
        for places in 1...15 {
            scale *= 10
            let product = magnitude * scale
            guard product < 0x1p49 else { return false }
            let scaled = Double(Int64(product + 0.5))
            guard scaled / scale == magnitude else { continue }
            writeFixed(value < 0, digits: Int64(scaled), places: places)
            return true
        }
        return false
    }

    /// `digits`·10⁻ᵖˡᵃᶜᵉˢ with all its places, negative if `negative`.
    private mutating func writeFixed(_ negative: Bool, digits: Int64, places: Int) {
        var unit: Int64 = 1
        for _ in 0..<places { unit *= 10 }
        if negative { writeByte(UInt8(ascii: "-")) }
        writeDecimal(digits / unit)
        writeByte(UInt8(ascii: "."))
        assert(count + places <= memory.count, "a line is longer than its bound")
        var fraction = digits % unit
        for place in (0..<places).reversed() {
            memory[count + place] = UInt8(ascii: "0") + UInt8(fraction % 10)
            fraction /= 10
        }
        count += places
    }

    /// A whole number in decimal.
    mutating func writeDecimal(_ value: Int64) {
        var magnitude = value.magnitude
        var digits = 0
        repeat {
            digits += 1
            magnitude /= 10
        } while magnitude > 0
        if value < 0 { writeByte(UInt8(ascii: "-")) }
        assert(count + digits <= memory.count, "a line is longer than its bound")
        magnitude = value.magnitude
        var index = count + digits
        repeat {
            index -= 1
            memory[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
            magnitude /= 10
        } while magnitude > 0
        count += digits
    }

    /// A string with JSON's escapes, as ``JSONValue`` writes strings: printable ASCII with
    /// nothing to escape (names, states, device nodes) is checked and copied whole.
    mutating func writeJSONString(_ text: String) {
        var text = text
        let plain = text.withUTF8 { bytes in
            guard Self.isPlain(UnsafeRawBufferPointer(bytes)) else { return false }
            writeByte(UInt8(ascii: "\""))
            write(bytes: UnsafeRawBufferPointer(bytes))
            writeByte(UInt8(ascii: "\""))
            return true
        }
        guard !plain else { return }
        JSONValue.string(text).encodedBytes.withUnsafeBytes { write(bytes: $0) }
    }

    /// Whether `bytes` are printable ASCII without a quote or a backslash: JSON writes them
    /// as they are. Eight bytes at a time, as one word: the bytes of a name a frame's lines
    /// carry (the stream's, the device's) cost some ten instructions each, one by one.
    static func isPlain(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset + 8 <= bytes.count {
            if needsEscape(bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) { return false }
            offset += 8
        }
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte < 0x20 || byte >= 0x7F || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return false }
            offset += 1
        }
        return true
    }

    /// Whether any of a word's eight bytes is one JSON escapes, or is not ASCII (a control
    /// character, DEL, a quote, a backslash, a byte of 0x80 or more). Each test is the
    /// classic exact one for "some byte is zero" or "some byte is less than n" (n ≤ 128):
    /// a borrow can mark a byte wrongly only above one that truly is, so the answer holds.
    private static func needsEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        func hasZero(_ v: UInt64) -> UInt64 { (v &- ones) & ~v & highs }
        let below = (word &- ones &* 0x20) & ~word & highs
        let found = below | (word & highs) | hasZero(word ^ (ones &* 0x7F)) | hasZero(word ^ (ones &* 0x22)) | hasZero(word ^ (ones &* 0x5C))
        return found != 0
    }

    private mutating func write(static text: StaticString) {
        write(bytes: UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    private mutating func writeByte(_ byte: UInt8) {
        assert(count < memory.count, "a line is longer than its bound")
        memory[count] = byte
        count += 1
    }

    private mutating func write(bytes: UnsafeRawBufferPointer) {
        assert(count + bytes.count <= memory.count, "a line is longer than its bound")
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        (memory.baseAddress! + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    // MARK: TextOutputStream, for the standard library's digits

    mutating func write(_ string: String) {
        var string = string
        string.withUTF8 { write(bytes: UnsafeRawBufferPointer($0)) }
    }

    mutating func _writeASCII(_ buffer: UnsafeBufferPointer<UInt8>) {
        write(bytes: UnsafeRawBufferPointer(buffer))
    }
}

extension LineBuffer {
    /// A gesture's `state` event (docs/protocol.md): an element's recognizer's `began`,
    /// `ended`, `cancelled` or `recognized` (not `changed`, which comes with every frame and
    /// the values carry; `ended` with the velocity), or a screen gesture's, with its
    /// pattern's `name` and the `gesture` it is. False, writing nothing, for an event no
    /// client hears.
    @discardableResult
    mutating func writeStateEvent(_ event: FrameEvent) -> Bool {
        let line: JSONValue
        switch event {
        case .gesture(_, let stream, _, let gesture):
            guard [.began, .ended, .cancelled, .recognized].contains(gesture.state) else { return false }
            let head: [(String, JSONValue)] = [("event", "state"), ("stream", .string(stream)),
                                               ("state", .string(gesture.state.rawValue)), ("t", .number(gesture.time))]
            line = .object(head + JSONValue.gestureValues(gesture, velocity: gesture.state == .ended))
        case .screenGesture(_, let stream, let event):
            let gesture = event.gesture
            let head: [(String, JSONValue)] = [("event", "state"), ("stream", .string(stream)),
                                               ("name", .string(event.name)), ("gesture", .string(gesture.kind.rawValue)),
                                               ("state", .string(gesture.state.rawValue)), ("t", .number(gesture.time))]
            line = .object(head + JSONValue.gestureValues(gesture, velocity: true))
        }
        write(line.encodedBytes)
        write(CollectionOfOne(UInt8(ascii: "\n")))
        return true
    }
}
