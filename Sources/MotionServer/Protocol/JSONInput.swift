/// A JSON value as read from a client: strict RFC 8259, with errors that say where.
///
/// motiond reads its own JSON rather than going through `JSONSerialization` so that a
/// malformed line gets an answer naming the problem and its column, numbers and booleans
/// stay apart, and a hostile line cannot nest deeply enough to exhaust the stack.
public indirect enum JSONInput: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONInput])
    case object([String: JSONInput])

    /// Parses one JSON value, which must be all of `text` but for white space.
    public init(parsing text: Substring) throws(JSONInputError) {
        var reader = Reader(Array(text.utf8))
        reader.skipSpace()
        self = try reader.value(depth: 0)
        reader.skipSpace()
        guard reader.atEnd else { throw reader.error("unexpected text after the JSON value") }
    }

    /// The member `key` of an object.
    public subscript(key: String) -> JSONInput? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    public var string: String? { if case .string(let s) = self { return s }; return nil }
    public var number: Double? { if case .number(let n) = self { return n }; return nil }
    public var bool: Bool? { if case .bool(let b) = self { return b }; return nil }
    public var array: [JSONInput]? { if case .array(let a) = self { return a }; return nil }
    public var object: [String: JSONInput]? { if case .object(let o) = self { return o }; return nil }

    /// An integer, if the value is a whole number that fits.
    public var integer: Int? {
        guard let n = number, n == n.rounded(), Swift.abs(n) < 9e15 else { return nil }
        return Int(n)
    }

    /// What kind of value it is, for error messages.
    public var kind: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0
        static let maximumDepth = 64

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index >= bytes.count }

        func error(_ message: String) -> JSONInputError { JSONInputError(column: index + 1, message: message) }

        /// An error about the byte at `position`.
        func error(at position: Int, _ message: String) -> JSONInputError { JSONInputError(column: position + 1, message: message) }

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0a, 0x0d].contains(bytes[index]) { index += 1 }
        }

        mutating func value(depth: Int) throws(JSONInputError) -> JSONInput {
            guard depth < Self.maximumDepth else { throw error("nested deeper than \(Self.maximumDepth) levels") }
            guard !atEnd else { throw error("the line ends where a value was expected") }
            switch bytes[index] {
            case UInt8(ascii: "{"): return try object(depth: depth)
            case UInt8(ascii: "["): return try array(depth: depth)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
            default: throw error("unexpected '\(Character(Unicode.Scalar(bytes[index])))' where a value was expected")
            }
        }

        mutating func literal(_ word: String) throws(JSONInputError) {
            let expected = Array(word.utf8)
            guard index + expected.count <= bytes.count, Array(bytes[index..<index + expected.count]) == expected else {
                throw error("expected \(word)")
            }
            index += expected.count
        }

        mutating func object(depth: Int) throws(JSONInputError) -> JSONInput {
            index += 1
            var members: [String: JSONInput] = [:]
            skipSpace()
            if !atEnd && bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            while true {
                skipSpace()
                guard !atEnd, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a member name in quotes") }
                let key = try string()
                skipSpace()
                guard !atEnd, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':' after \"\(key)\"") }
                index += 1
                skipSpace()
                members[key] = try value(depth: depth + 1)
                skipSpace()
                guard !atEnd else { throw error("the line ends inside an object") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
                throw error("expected ',' or '}' in an object")
            }
        }

        mutating func array(depth: Int) throws(JSONInputError) -> JSONInput {
            index += 1
            var elements: [JSONInput] = []
            skipSpace()
            if !atEnd && bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
            while true {
                skipSpace()
                elements.append(try value(depth: depth + 1))
                skipSpace()
                guard !atEnd else { throw error("the line ends inside an array") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
                throw error("expected ',' or ']' in an array")
            }
        }

        mutating func string() throws(JSONInputError) -> String {
            index += 1
            var scalars = String.UnicodeScalarView()
            var raw: [UInt8] = []
            func flushRaw() throws(JSONInputError) {
                guard !raw.isEmpty else { return }
                guard let text = String(validating: raw, as: UTF8.self) else { throw error("a string is not valid UTF-8") }
                scalars.append(contentsOf: text.unicodeScalars)
                raw.removeAll()
            }
            while true {
                guard !atEnd else { throw error("the line ends inside a string") }
                let byte = bytes[index]
                index += 1
                if byte == UInt8(ascii: "\"") { try flushRaw(); return String(scalars) }
                if byte < 0x20 { throw error(at: index - 1, "a control character inside a string (write it escaped, like \\t)") }
                guard byte == UInt8(ascii: "\\") else { raw.append(byte); continue }
                try flushRaw()
                guard !atEnd else { throw error("the line ends inside a string") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800...0xDBFF).contains(code) {
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                            throw error("a lone surrogate in a \\u escape")
                        }
                        index += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw error("a lone surrogate in a \\u escape") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw error("a \\u escape that is not a character") }
                    scalars.append(scalar)
                default: throw error("an unknown escape in a string")
                }
            }
        }

        mutating func hex4() throws(JSONInputError) -> UInt32 {
            guard index + 4 <= bytes.count, let value = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16) else {
                throw error("expected four hexadecimal digits after \\u")
            }
            index += 4
            return value
        }

        mutating func number() throws(JSONInputError) -> Double {
            let start = index
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            func digits() -> Int {
                let from = index
                while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
                return index - from
            }
            let whole = digits()
            guard whole > 0 else { throw error("a number needs digits") }
            if whole > 1 && bytes[index - whole] == UInt8(ascii: "0") { throw error(at: start, "a number cannot start with 0") }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { throw error("a number needs digits after '.'") }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { throw error("a number needs digits in its exponent") }
            }
            guard let value = Double(String(decoding: bytes[start..<index], as: UTF8.self)), value.isFinite else {
                throw error("a number out of range")
            }
            return value
        }
    }
}

/// Where and why a line is not JSON.
public struct JSONInputError: Error, Equatable, CustomStringConvertible {
    /// The column, from 1, in bytes.
    public var column: Int
    public var message: String

    public var description: String { "not JSON at column \(column): \(message)" }
}
