/// A JSON value as read from a client: strict RFC 8259, with errors that say where.
///
/// motiond reads its own JSON rather than going through `JSONSerialization` so that a
/// malformed line gets an answer naming the problem and its column, numbers and booleans
/// stay apart, and a hostile line cannot nest deeply enough to exhaust the stack. What
/// RFC 8259 leaves to the reader is refused rather than guessed: a member name twice in one
/// object, bytes that are not UTF-8 (RFC 3629: no overlong forms, no encoded surrogates),
/// surrogates without their pair, a byte order mark.
///
/// Not `indirect`: arrays and objects hold their values in their own storage already, and an
/// indirect enum would put every number and string of a line in a box of its own.
public enum JSONInput: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONInput])
    case object([String: JSONInput])

    /// Parses one JSON value, which must be all of `text` but for white space.
    public init(parsing text: Substring) throws(JSONInputError) {
        try self.init(parsing: text.utf8)
    }

    /// Parses one JSON value from UTF-8 bytes as they came, so that bytes that are not
    /// UTF-8 are refused rather than replaced.
    public init(parsing bytes: some Collection<UInt8>) throws(JSONInputError) {
        var reader = Reader(Array(bytes))
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
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0a, 0x0d: index += 1
                default: return
                }
            }
        }

        /// A byte as an error message shows it: the character when it is printable ASCII.
        static func describe(_ byte: UInt8) -> String {
            (0x21...0x7e).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(byte < 0x10 ? "0" : "")\(String(byte, radix: 16, uppercase: true))"
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
            case 0xEF where bytes[index...].starts(with: [0xEF, 0xBB, 0xBF]):
                throw error("a byte order mark; JSON text on the socket is UTF-8 without one")
            default: throw error("unexpected \(Self.describe(bytes[index])) where a value was expected")
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
            // Room for a few members at once, instead of growing at the first, second and fourth.
            var members = [String: JSONInput](minimumCapacity: 8)
            skipSpace()
            if !atEnd && bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            while true {
                skipSpace()
                guard !atEnd, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a member name in quotes") }
                let keyStart = index
                let key = try string()
                skipSpace()
                guard !atEnd, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':' after \"\(key)\"") }
                index += 1
                skipSpace()
                // RFC 8259 leaves duplicate names to the reader; keeping one of them silently
                // would act on a request the client did not mean, so refuse them.
                guard members.updateValue(try value(depth: depth + 1), forKey: key) == nil else {
                    throw error(at: keyStart, "the member \"\(key)\" appears twice in one object")
                }
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
            // Most arrays are pairs (a point, a size): made once, not grown at the second.
            elements.reserveCapacity(2)
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
            // Most strings are printable ASCII without escapes: taken whole from the bytes,
            // which are then valid UTF-8 with nothing to check.
            var end = index
            while end < bytes.count, (0x20..<0x80).contains(bytes[end]), bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\") {
                end += 1
            }
            if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
                defer { index = end + 1 }
                return String(decoding: bytes[index..<end], as: UTF8.self)
            }
            var scalars = String.UnicodeScalarView()
            // Unescaped bytes since the last escape, starting at `rawStart`.
            var raw: [UInt8] = []
            var rawStart = index
            func flushRaw() throws(JSONInputError) {
                defer { raw.removeAll(keepingCapacity: true) }
                guard !raw.isEmpty else { return }
                // Swift's decoder refuses what RFC 3629 does: overlong forms, surrogates
                // encoded in UTF-8, code points past U+10FFFF, truncated sequences.
                var decoder = UTF8()
                var iterator = raw.makeIterator()
                var offset = 0
                while true {
                    switch decoder.decode(&iterator) {
                    case .scalarValue(let scalar):
                        scalars.append(scalar)
                        offset += UTF8.width(scalar)
                    case .emptyInput:
                        return
                    case .error:
                        throw error(at: rawStart + offset, "a string is not valid UTF-8")
                    }
                }
            }
            while true {
                guard !atEnd else { throw error("the line ends inside a string") }
                let byte = bytes[index]
                index += 1
                if byte == UInt8(ascii: "\"") { try flushRaw(); return String(scalars) }
                if byte < 0x20 { throw error(at: index - 1, "a control character inside a string (write it escaped, like \\t)") }
                guard byte == UInt8(ascii: "\\") else { raw.append(byte); continue }
                try flushRaw()
                scalars.append(try escaped())
                rawStart = index
            }
        }

        /// The character an escape stands for, the reader just past its backslash; the reader
        /// is left after it (after both halves of a surrogate pair).
        private mutating func escaped() throws(JSONInputError) -> Unicode.Scalar {
            guard !atEnd else { throw error("the line ends inside a string") }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""): return "\""
            case UInt8(ascii: "\\"): return "\\"
            case UInt8(ascii: "/"): return "/"
            case UInt8(ascii: "b"): return "\u{08}"
            case UInt8(ascii: "f"): return "\u{0C}"
            case UInt8(ascii: "n"): return "\n"
            case UInt8(ascii: "r"): return "\r"
            case UInt8(ascii: "t"): return "\t"
            case UInt8(ascii: "u"):
                let escapeStart = index - 2
                var code = try hex4()
                if (0xD800...0xDBFF).contains(code) {
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                        throw error(at: escapeStart, "a lone surrogate in a \\u escape")
                    }
                    index += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw error(at: escapeStart, "a lone surrogate in a \\u escape") }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                }
                // Only a low surrogate without its high one is left that is not a scalar.
                guard let scalar = Unicode.Scalar(code) else { throw error(at: escapeStart, "a lone surrogate in a \\u escape") }
                return scalar
            default: throw error(at: index - 2, "an unknown escape in a string")
            }
        }

        /// Exactly four hexadecimal digits (no sign, unlike `UInt32(_:radix:)`).
        mutating func hex4() throws(JSONInputError) -> UInt32 {
            var value: UInt32 = 0
            for offset in 0..<4 {
                guard index + offset < bytes.count, let digit = Self.hexDigit(bytes[index + offset]) else {
                    throw error(at: index + offset, "expected four hexadecimal digits after \\u")
                }
                value = value << 4 | digit
            }
            index += 4
            return value
        }

        static func hexDigit(_ byte: UInt8) -> UInt32? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(byte - UInt8(ascii: "A") + 10)
            default: return nil
            }
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
            // A whole number of up to 15 digits (most of a state file's) is exactly its digits'
            // value: no string made for the standard library's parser.
            if whole <= 15, index == bytes.count || !".eE".utf8.contains(bytes[index]) {
                let magnitude = bytes[(index - whole)..<index].reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
                return bytes[start] == UInt8(ascii: "-") ? -Double(magnitude) : Double(magnitude)
            }
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
