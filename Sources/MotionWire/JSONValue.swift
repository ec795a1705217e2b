import TouchModel

/// A JSON value with its object keys in a chosen order, so that output is deterministic
/// byte for byte (the same input gives the same lines) and reads naturally (`t` first).
public enum JSONValue: Hashable, Sendable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByNilLiteral
{
    case null
    case bool(Bool)
    case number(Double)
    case integer(Int64)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(nilLiteral: ()) { self = .null }

    /// A number, or null when it is not finite (JSON has no infinities).
    public static func number(_ value: Double?) -> JSONValue {
        guard let value, value.isFinite else { return .null }
        return .number(value)
    }

    /// The value on one line, with no spaces: what goes on the wire.
    public var encoded: String { String(decoding: encodedBytes, as: UTF8.self) }

    /// The same as UTF-8 bytes.
    public var encodedBytes: [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(64)
        encode(into: &output)
        return output
    }

    /// Appends the encoding to `output`.
    public func encode(into output: inout String) {
        output += encoded
    }

    /// Appends the encoding to `output`, as UTF-8. The encoding is made as bytes, not as a
    /// String a piece at a time: appending to a String costs many times more per piece, and
    /// a large scene's state file writes thousands of elements.
    public func encode(into output: inout [UInt8]) {
        switch self {
        case .null: output += "null".utf8
        case .bool(let value): output += (value ? "true" : "false").utf8
        case .number(let value):
            if let whole = wholeNumber(value) { Self.encode(whole, into: &output) } else { output += (value.isFinite ? "\(value)" : "null").utf8 }
        case .integer(let value): Self.encode(value, into: &output)
        case .string(let value): Self.encode(string: value, into: &output)
        case .array(let values):
            output.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                value.encode(into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                Self.encode(string: key, into: &output)
                output.append(UInt8(ascii: ":"))
                value.encode(into: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// What ``encodedBytes`` would hold, without making it: how many bytes, and how many of
    /// them are commas, `[` and `{` outside strings (what ``SceneState``'s value bound counts).
    /// A state file's cost is counted for every element a restore puts back, and encoding
    /// each one again only to count it was an array and a scan of it per element.
    package var encodedSize: (bytes: Int, separators: Int) {
        var size = (bytes: 0, separators: 0)
        addEncodedSize(to: &size)
        return size
    }

    private func addEncodedSize(to size: inout (bytes: Int, separators: Int)) {
        switch self {
        case .null: size.bytes += 4
        case .bool(let value): size.bytes += value ? 4 : 5
        case .number(let value):
            if let whole = wholeNumber(value) { size.bytes += Self.digitCount(whole) } else { size.bytes += value.isFinite ? "\(value)".utf8.count : 4 }
        case .integer(let value): size.bytes += Self.digitCount(value)
        case .string(let value): size.bytes += Self.encodedCount(string: value)
        case .array(let values):
            size.bytes += 2 + max(0, values.count - 1)
            size.separators += 1 + max(0, values.count - 1)
            for value in values { value.addEncodedSize(to: &size) }
        case .object(let members):
            size.bytes += 2 + max(0, members.count - 1) + members.count
            size.separators += 1 + max(0, members.count - 1)
            for (key, value) in members {
                size.bytes += Self.encodedCount(string: key)
                value.addEncodedSize(to: &size)
            }
        }
    }

    /// The bytes ``encode(_:into:)`` writes for `value`.
    private static func digitCount(_ value: Int64) -> Int {
        var count = value < 0 ? 2 : 1
        var magnitude = value.magnitude
        while magnitude >= 10 {
            magnitude /= 10
            count += 1
        }
        return count
    }

    /// The bytes ``encode(string:into:)`` writes for `string`, quotes included.
    package static func encodedCount(string: String) -> Int {
        // Printable ASCII with nothing to escape, as most strings are: its bytes and quotes.
        let plain = string.utf8.withContiguousStorageIfAvailable { bytes in
            !bytes.contains { $0 < 0x20 || $0 >= 0x7F || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
        }
        if plain == true { return string.utf8.count + 2 }
        var count = 2
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"", "\\", "\n", "\r", "\t": count += 2
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029:
                count += 6
            default: count += UTF8.width(scalar)
            }
        }
        return count
    }

    /// A whole number's digits, written as they come, without a String made for them (a
    /// state file has several in each element's line).
    private static func encode(_ value: Int64, into output: inout [UInt8]) {
        if value < 0 { output.append(UInt8(ascii: "-")) }
        let magnitude = value.magnitude
        var unit: UInt64 = 1
        while magnitude / unit >= 10 { unit *= 10 }
        repeat {
            output.append(UInt8(ascii: "0") + UInt8(magnitude / unit % 10))
            unit /= 10
        } while unit > 0
    }

    private static func encode(string: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        // Most strings (ids, names, states) are printable ASCII with nothing to escape: they
        // go in whole, not a scalar at a time.
        if string.utf8.allSatisfy({ (0x20..<0x7F).contains($0) && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
            output += string.utf8
            output.append(UInt8(ascii: "\""))
            return
        }
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\"".utf8
            case "\\": output += "\\\\".utf8
            case "\n": output += "\\n".utf8
            case "\r": output += "\\r".utf8
            case "\t": output += "\\t".utf8
            // Controls (C0, DEL, C1) and the line and paragraph separators escaped too: JSON
            // allows most of them raw, but readers that split lines on NEL, U+2028 or U+2029
            // (Python's splitlines, older JavaScript) would cut the line inside a string.
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029:
                let hex = String(scalar.value, radix: 16)
                output += ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).utf8
            default: UTF8.encode(scalar) { output.append($0) }
            }
        }
        output.append(UInt8(ascii: "\""))
    }

    /// Two values are equal when they would be sent as the same JSON: a whole `number` equals
    /// the same `integer`, a number that is not finite is `null`, and members keep their order.
    /// Compared as values, never by encoding them.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs.sent, rhs.sent) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.integer(a), .integer(b)): return a == b
        case let (.number(a), .number(b)): return a == b
        case let (.string(a), .string(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.object(a), .object(b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch sent {
        case .null: hasher.combine(0)
        case .bool(let value): hasher.combine(1); hasher.combine(value)
        case .integer(let value): hasher.combine(2); hasher.combine(value)
        case .number(let value): hasher.combine(3); hasher.combine(value)
        case .string(let value): hasher.combine(4); hasher.combine(value)
        case .array(let values):
            hasher.combine(5); hasher.combine(values.count)
            for value in values { value.hash(into: &hasher) }
        case .object(let members):
            hasher.combine(6); hasher.combine(members.count)
            for (key, value) in members { hasher.combine(key); value.hash(into: &hasher) }
        }
    }

    /// The value as it goes on the wire, for comparing: a number that is not finite is null,
    /// and a whole number that ``compactNumber(_:)`` writes without a fraction is an integer.
    private var sent: JSONValue {
        guard case .number(let value) = self else { return self }
        guard value.isFinite else { return .null }
        return wholeNumber(value).map { .integer($0) } ?? self
    }
}
