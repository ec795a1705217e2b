import Testing
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
