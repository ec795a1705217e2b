import MotionCore
import MotionServer
import MotionWire
import MotionDaemon

/// The fuzzer's bytes, read front to back as the choices a target makes. Past the end every
/// read gives zero, so any input is a complete program.
struct FuzzBytes {
    private let bytes: [UInt8]
    private var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isEmpty: Bool { index >= bytes.count }

    mutating func byte() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }

    mutating func uint16() -> UInt16 { UInt16(byte()) | UInt16(byte()) << 8 }

    mutating func int32() -> Int32 {
        Int32(bitPattern: UInt32(uint16()) | UInt32(uint16()) << 16)
    }

    /// Whatever is left.
    mutating func rest() -> ArraySlice<UInt8> {
        defer { index = bytes.count }
        return bytes[Swift.min(index, bytes.count)...]
    }
}

/// A file of the repository, for the targets that start from the example configuration.
func repositoryFile(_ path: String) -> String {
    var components = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
    components.removeLast(3)  // Sources/FuzzTargets/FuzzSupport.swift
    return (components + [Substring(path)]).joined(separator: "/")
}

extension JSONInput {
    /// The value written back as JSON text by the daemon's own encoder, so a target can check
    /// that what parsed once parses again to the same value.
    var encoded: String { json.encoded }

    /// The same value as the daemon writes JSON.
    var json: JSONValue {
        switch self {
        case .null: return .null
        case .bool(let value): return .bool(value)
        case .number(let value): return .number(value)
        case .string(let value): return .string(value)
        case .array(let elements): return .array(elements.map(\.json))
        case .object(let members): return .object(members.map { ($0.key, $0.value.json) })
        }
    }

    /// `text` as a JSON string.
    static func quoted(_ text: String) -> String { JSONValue.string(text).encoded }

    /// Whether every number in the value is finite.
    var allNumbersFinite: Bool {
        switch self {
        case .number(let value): return value.isFinite
        case .array(let elements): return elements.allSatisfy(\.allNumbersFinite)
        case .object(let members): return members.values.allSatisfy(\.allNumbersFinite)
        default: return true
        }
    }
}

/// A client that keeps every line the daemon sends it.
final class CollectingOutput: ClientOutput {
    var lines: [String] = []
    private(set) var closed = false
    let coalesced = 0
    /// Whether the daemon may send it a frame's lines in one buffer.
    var isKeepingUp = true

    init() {}

    /// Keeps each line of what was sent (a frame's lines may come in one buffer).
    func send(_ line: ArraySlice<UInt8>, coalescing stream: StreamID?) {
        // Each line with its newline; a tail without one is kept as it is, to be caught.
        var text = Substring(String(decoding: line, as: UTF8.self))
        while let end = text.firstIndex(of: "\n") {
            lines.append(String(text[...end]))
            text = text[text.index(after: end)...]
        }
        if !text.isEmpty { lines.append(String(text)) }
    }

    func flush() {}

    func close(saying line: ArraySlice<UInt8>?) {
        if let line { send(line, coalescing: nil) }
        closed = true
    }

    /// Every line sent since the last call, parsed; a line that is not one JSON object
    /// breaks an invariant.
    func take() throws -> [JSONInput] {
        defer { lines = [] }
        return try lines.map { line in
            try fuzzCheck(line.hasSuffix("\n"), "a line from the daemon does not end in a newline: \(line)")
            let message: JSONInput
            do { message = try JSONInput(parsing: Substring(line.dropLast())) } catch {
                throw BrokenInvariant(message: "the daemon sent a line that is not JSON (\(error)): \(line)")
            }
            try fuzzCheck(message.object != nil, "the daemon sent a line that is not an object: \(line)")
            return message
        }
    }
}

/// The protocol's glob matching, written the plain way (dynamic programming over pattern
/// and name), for the glob target to compare the daemon's answers against.
func referenceGlobMatches(_ pattern: String, _ name: String) -> Bool {
    let pattern = Array(pattern), name = Array(name)
    // matches[j]: the pattern so far matches the first j characters of name.
    var matches = [Bool](repeating: false, count: name.count + 1)
    matches[0] = true
    for p in pattern {
        var next = [Bool](repeating: false, count: name.count + 1)
        switch p {
        case "*":
            var any = false
            for j in 0...name.count { any = any || matches[j]; next[j] = any }
        case "?":
            for j in 0..<name.count where matches[j] { next[j + 1] = true }
        default:
            for j in 0..<name.count where matches[j] && name[j] == p { next[j + 1] = true }
        }
        matches = next
    }
    return matches[name.count]
}
