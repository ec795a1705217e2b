import Testing
@testable import MotionConfiguration
@testable import MotionServer
@testable import MotionTUIO

/// The OSC encoding against byte sequences worked out from the OSC 1.0 specification (its
/// own examples where it gives them), not from the encoder's output.
@Suite("OSC encoding")
struct OSCTests {
    /// The bytes of one message written as a bundle element, without its size.
    func element(_ address: String, _ tags: String, _ arguments: (inout OSCWriter) -> Void) -> (size: [UInt8], body: [UInt8]) {
        var writer = OSCWriter()
        writer.message(address, tags, arguments)
        return (Array(writer.bytes[..<4]), Array(writer.bytes[4...]))
    }

    @Test("the specification's first example: /oscillator/4/frequency ,f 440.0")
    func specificationFloatExample() {
        let (size, body) = element("/oscillator/4/frequency", ",f") { $0.float32(440) }
        #expect(body == [
            0x2f, 0x6f, 0x73, 0x63, 0x69, 0x6c, 0x6c, 0x61, 0x74, 0x6f, 0x72, 0x2f, 0x34, 0x2f, 0x66, 0x72,
            0x65, 0x71, 0x75, 0x65, 0x6e, 0x63, 0x79, 0x00, 0x2c, 0x66, 0x00, 0x00, 0x43, 0xdc, 0x00, 0x00,
        ])
        #expect(size == [0, 0, 0, 32], "a bundle element is preceded by its size")
    }

    @Test("the specification's second example: /foo ,iisff 1000 -1 \"hello\" 1.234 5.678")
    func specificationMixedExample() {
        let (size, body) = element("/foo", ",iisff") {
            $0.int32(1000); $0.int32(-1); $0.string("hello"); $0.float32(1.234); $0.float32(5.678)
        }
        #expect(body == [
            0x2f, 0x66, 0x6f, 0x6f, 0x00, 0x00, 0x00, 0x00, 0x2c, 0x69, 0x69, 0x73, 0x66, 0x66, 0x00, 0x00,
            0x00, 0x00, 0x03, 0xe8, 0xff, 0xff, 0xff, 0xff, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x00, 0x00, 0x00,
            0x3f, 0x9d, 0xf3, 0xb6, 0x40, 0xb5, 0xb2, 0x2d,
        ])
        #expect(size == [0, 0, 0, 40])
    }

    @Test("strings end with one to four NULs, to a multiple of four bytes", arguments: [
        ("", [0, 0, 0, 0]), ("a", [0x61, 0, 0, 0]), ("abc", [0x61, 0x62, 0x63, 0]),
        ("data", [0x64, 0x61, 0x74, 0x61, 0, 0, 0, 0]),
    ] as [(String, [UInt8])])
    func strings(_ text: String, _ expected: [UInt8]) {
        var writer = OSCWriter()
        writer.string(text)
        #expect(writer.bytes == expected)
        #expect(OSCWriter.size(of: text) == expected.count)
    }

    @Test("a list's type tags: ,s then one i per entry, padded")
    func repeatedTags() {
        let (_, body) = element("/a", ",s", repeating: UInt8(ascii: "i"), times: 3) {
            $0.string("alive"); $0.int32(7); $0.int32(8); $0.int32(9)
        }
        #expect(body == [
            0x2f, 0x61, 0x00, 0x00, 0x2c, 0x73, 0x69, 0x69, 0x69, 0x00, 0x00, 0x00,
            0x61, 0x6c, 0x69, 0x76, 0x65, 0x00, 0x00, 0x00, 0, 0, 0, 7, 0, 0, 0, 8, 0, 0, 0, 9,
        ])
    }

    func element(_ address: String, _ tags: String, repeating tag: UInt8, times: Int, _ arguments: (inout OSCWriter) -> Void) -> (size: [UInt8], body: [UInt8]) {
        var writer = OSCWriter()
        writer.message(address, tags, repeating: tag, times: times, arguments)
        return (Array(writer.bytes[..<4]), Array(writer.bytes[4...]))
    }

    @Test("a bundle: #bundle, the time tag, then each element with its size")
    func bundle() {
        var writer = OSCWriter()
        writer.beginBundle(.immediately)
        writer.message("/x", ",i") { $0.int32(2) }
        #expect(writer.bytes == [
            0x23, 0x62, 0x75, 0x6e, 0x64, 0x6c, 0x65, 0x00,  // "#bundle"
            0, 0, 0, 0, 0, 0, 0, 1,  // immediately: 63 zero bits and a one
            0, 0, 0, 12,  // the element's size
            0x2f, 0x78, 0, 0, 0x2c, 0x69, 0, 0, 0, 0, 0, 2,
        ])
    }

    @Test("time tags count from 1900 in NTP's fixed point")
    func timeTags() {
        // 1970-01-01 is 2,208,988,800 s after 1900-01-01 (70 years, 17 of them leap): 0x83AA7E80.
        #expect(OSCTimeTag(unixSeconds: 0, nanoseconds: 0).rawValue == 0x83AA_7E80_0000_0000)
        // Half a second is half of 2^32 in the low word.
        #expect(OSCTimeTag(unixSeconds: 1, nanoseconds: 500_000_000).rawValue == 0x83AA_7E81_8000_0000)
        var writer = OSCWriter()
        writer.timeTag(OSCTimeTag(unixSeconds: 0, nanoseconds: 500_000_000))
        #expect(writer.bytes == [0x83, 0xAA, 0x7E, 0x80, 0x80, 0, 0, 0])
    }
}

/// Reads OSC packets back, for tests: an independent reading of the rules above, strict
/// about sizes and padding so that an encoder mistake shows up here.
enum OSCTestDecoder {
    enum Argument: Equatable, CustomStringConvertible {
        case int(Int32), float(Float), string(String), time(UInt64)

        var int: Int32? { if case .int(let v) = self { v } else { nil } }
        var float: Float? { if case .float(let v) = self { v } else { nil } }
        var string: String? { if case .string(let v) = self { v } else { nil } }
        var description: String {
            switch self {
            case .int(let v): "\(v)"
            case .float(let v): "\(v)"
            case .string(let v): "\"\(v)\""
            case .time(let v): "t\(v)"
            }
        }
    }

    struct Message: CustomStringConvertible {
        var address: String
        var arguments: [Argument]
        var description: String { ([address] + arguments.map(\.description)).joined(separator: " ") }
    }

    struct Malformed: Error, CustomStringConvertible { var description: String }

    /// The messages of one bundle, in order.
    static func bundle(_ bytes: [UInt8]) throws -> (time: UInt64, messages: [Message]) {
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

    static func message(_ bytes: [UInt8]) throws -> Message {
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
