/// Reads OSC packets back, for tests: an independent reading of OSC 1.0's rules (which
/// OSCTests, in MotionTUIOTests, hold the encoder to), strict about sizes and padding so that
/// an encoder mistake shows up here. A module of its own because two test targets read TUIO:
/// MotionTUIOTests the encoder's bundles, MotionServerTests what the daemon sends over UDP.
package enum OSCTestDecoder {
    /// One argument of a message, by its type tag.
    package enum Argument: Equatable, CustomStringConvertible {
        case int(Int32), float(Float), string(String), time(UInt64)

        package var int: Int32? { if case .int(let v) = self { v } else { nil } }
        package var float: Float? { if case .float(let v) = self { v } else { nil } }
        package var string: String? { if case .string(let v) = self { v } else { nil } }
        package var description: String {
            switch self {
            case .int(let v): "\(v)"
            case .float(let v): "\(v)"
            case .string(let v): "\"\(v)\""
            case .time(let v): "t\(v)"
            }
        }
    }

    /// One message: its address pattern and arguments.
    package struct Message: CustomStringConvertible {
        package var address: String
        package var arguments: [Argument]
        package var description: String { ([address] + arguments.map(\.description)).joined(separator: " ") }
    }

    /// Bytes that are not OSC as the specification writes it, and where.
    package struct Malformed: Error, CustomStringConvertible { package var description: String }

    /// The messages of one bundle, in order.
    package static func bundle(_ bytes: [UInt8]) throws -> (time: UInt64, messages: [Message]) {
        var at = 0
        guard try string(bytes, &at) == "#bundle" else { throw Malformed(description: "not a bundle") }
        let time = UInt64(UInt32(bitPattern: try int(bytes, &at))) << 32 | UInt64(UInt32(bitPattern: try int(bytes, &at)))
        var messages: [Message] = []
        while at < bytes.count {
            let size = Int(try int(bytes, &at))
            guard size > 0, size % 4 == 0, at + size <= bytes.count else { throw Malformed(description: "element size \(size) at \(at)") }
            messages.append(try message(Array(bytes[at..<(at + size)])))
            at += size
        }
        return (time, messages)
    }

    /// One message's bytes, read whole: an argument short or left over is malformed.
    package static func message(_ bytes: [UInt8]) throws -> Message {
        var at = 0
        let address = try string(bytes, &at)
        let tags = try string(bytes, &at)
        guard tags.first == "," else { throw Malformed(description: "type tags '\(tags)'") }
        var arguments: [Argument] = []
        for tag in tags.dropFirst() {
            switch tag {
            case "i": arguments.append(.int(try int(bytes, &at)))
            case "f": arguments.append(.float(Float(bitPattern: UInt32(bitPattern: try int(bytes, &at)))))
            case "s": arguments.append(.string(try string(bytes, &at)))
            case "t": arguments.append(.time(UInt64(UInt32(bitPattern: try int(bytes, &at))) << 32 | UInt64(UInt32(bitPattern: try int(bytes, &at)))))
            default: throw Malformed(description: "type tag \(tag)")
            }
        }
        guard at == bytes.count else { throw Malformed(description: "\(bytes.count - at) bytes after the arguments of \(address)") }
        return Message(address: address, arguments: arguments)
    }

    private static func int(_ bytes: [UInt8], _ at: inout Int) throws -> Int32 {
        guard at + 4 <= bytes.count else { throw Malformed(description: "short int at \(at)") }
        defer { at += 4 }
        return Int32(bitPattern: UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3]))
    }

    private static func string(_ bytes: [UInt8], _ at: inout Int) throws -> String {
        guard let end = bytes[at...].firstIndex(of: 0) else { throw Malformed(description: "unterminated string at \(at)") }
        let text = String(decoding: bytes[at..<end], as: UTF8.self)
        let next = (end / 4 + 1) * 4
        guard next <= bytes.count, bytes[end..<next].allSatisfy({ $0 == 0 }) else { throw Malformed(description: "bad padding after '\(text)'") }
        at = next
        return text
    }
}
