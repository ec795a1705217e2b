import MotionConfiguration
import MotionCore
import NIOCore

/// Writes the protocol's `value` lines straight into a `ByteBuffer`, byte for byte as
/// ``JSONValue/encoded`` would write them, without building a `JSONValue` or a `String`
/// first: the publisher writes one per changed stream per frame, on the path every frame
/// takes, so this is where allocations per frame would come from.
extension ByteBuffer {
    /// `{"event":"value","stream":NAME,"value":VALUE,"t":TIME,"seq":SEQ}` and a newline.
    mutating func writeValueLine(stream: String, value: PublishedValue, time: Double, seq: Int) {
        writeValueLine(stream: stream, time: time, seq: seq) { $0.writePublished(value) }
    }

    /// A `value` line whose value `writeValue` writes.
    mutating func writeValueLine(stream: String, time: Double, seq: Int, _ writeValue: (inout ByteBuffer) -> Void) {
        writeStaticString("{\"event\":\"value\",\"stream\":")
        writeJSONString(stream)
        writeStaticString(",\"value\":")
        writeValue(&self)
        writeStaticString(",\"t\":")
        writeJSONNumber(time)
        writeStaticString(",\"seq\":")
        writeDecimal(Int64(seq))
        writeStaticString("}\n")
    }

    /// A published value as ``JSONValue/published(_:)`` encodes it.
    mutating func writePublished(_ value: PublishedValue) {
        switch value {
        case .point(let point):
            writeStaticString("{\"x\":")
            writeJSONNumber(point.x)
            writeStaticString(",\"y\":")
            writeJSONNumber(point.y)
            writeStaticString("}")
        case .size(let size):
            writeStaticString("{\"width\":")
            writeJSONNumber(size.width)
            writeStaticString(",\"height\":")
            writeJSONNumber(size.height)
            writeStaticString("}")
        case .number(let number): writeJSONNumber(number)
        case .text(let text): writeJSONString(text)
        case .bool(let flag): writeStaticString(flag ? "true" : "false")
        case .spring(let spring):
            writeStaticString("{\"tension\":")
            writeJSONNumber(spring.tension)
            writeStaticString(",\"friction\":")
            writeJSONNumber(spring.friction)
            writeStaticString(",\"mass\":")
            writeJSONNumber(spring.mass)
            writeStaticString("}")
        case .contacts(let fingers): writeContacts(fingers)
        }
    }

    /// `screen.contacts`' value as ``JSONValue/published(_:)`` encodes it.
    mutating func writeContacts(_ contacts: [ScreenContact]) {
        writeStaticString("[")
        for (index, contact) in contacts.enumerated() {
            writeStaticString(index == 0 ? "{\"id\":" : ",{\"id\":")
            writeDecimal(Int64(contact.id))
            writeStaticString(",\"x\":")
            writeJSONNumber(contact.position.x)
            writeStaticString(",\"y\":")
            writeJSONNumber(contact.position.y)
            writeStaticString(",\"device\":")
            writeJSONString(contact.device)
            if let predicted = contact.predicted {
                writeStaticString(",\"predicted\":")
                writePublished(.point(predicted))
            }
            writeStaticString("}")
        }
        writeStaticString("]")
    }

    /// A number as ``compactNumber(_:)`` writes it; null when not finite.
    mutating func writeJSONNumber(_ value: Double) {
        guard value.isFinite else {
            writeStaticString("null")
            return
        }
        if value == value.rounded(), Swift.abs(value) < 1e15 { return writeDecimal(Int64(value)) }
        // Swift's shortest round-trip form, as `"\(value)"` gives it, but written through a
        // small stream on the stack: the description of a Double longer than 15 bytes (a
        // timestamp is) would allocate a String.
        var digits = ShortASCII()
        value.write(to: &digits)
        digits.withBytes { writeBytes($0) }
    }

    /// A whole number in decimal, without allocating.
    mutating func writeDecimal(_ value: Int64) {
        _ = writeWithUnsafeMutableBytes(minimumWritableBytes: 20) { buffer in
            var magnitude = value.magnitude
            var digits = 0
            repeat {
                digits += 1
                magnitude /= 10
            } while magnitude > 0
            let sign = value < 0 ? 1 : 0
            magnitude = value.magnitude
            var index = sign + digits
            repeat {
                index -= 1
                buffer[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if sign == 1 { buffer[0] = UInt8(ascii: "-") }
            return sign + digits
        }
    }

    /// A string with JSON's escapes, as ``JSONValue`` writes strings.
    mutating func writeJSONString(_ text: String) {
        writeInteger(UInt8(ascii: "\""))
        // Printable ASCII goes as it is; anything else through JSONValue's escapes.
        let plain = text.utf8.allSatisfy { (0x20..<0x7F).contains($0) && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
        if plain {
            writeString(text)
        } else {
            var escaped = ""
            JSONValue.string(text).encode(into: &escaped)
            writeString(String(escaped.dropFirst().dropLast()))
        }
        writeInteger(UInt8(ascii: "\""))
    }
}

/// A text stream into 32 bytes on the stack: enough for any Double (at most 24 characters).
/// The standard library writes a number's digits as ASCII through `_writeASCII`, which
/// this takes as they are.
private struct ShortASCII: TextOutputStream {
    private var storage: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    private var count = 0

    mutating func write(_ string: String) {
        for byte in string.utf8 { append(byte) }
    }

    mutating func _writeASCII(_ buffer: UnsafeBufferPointer<UInt8>) {
        for byte in buffer { append(byte) }
    }

    private mutating func append(_ byte: UInt8) {
        guard count < 32 else { return }
        withUnsafeMutableBytes(of: &storage) { $0[count] = byte }
        count += 1
    }

    func withBytes(_ body: (UnsafeRawBufferPointer) -> Void) {
        withUnsafeBytes(of: storage) { body(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    }
}

extension ByteBuffer {
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
        writeBytes(line.encodedBytes)
        writeInteger(UInt8(ascii: "\n"))
        return true
    }
}
