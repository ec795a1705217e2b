import NIOCore
import NIOEmbedded
import Testing
@testable import MotionConfiguration
@testable import MotionServer

/// The Unix socket's line framer on an embedded channel: lines in pieces, lines together,
/// and a line too long.
@Suite("Line framer")
struct LineFramerTests {
    static func framed(_ pieces: [String]) throws -> [String] {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(LineFramer()))
        var out: [String] = []
        for piece in pieces {
            try channel.writeInbound(channel.allocator.buffer(string: piece))
            while let framed: FramedLine = try channel.readInbound() {
                switch framed {
                case .line(let line): out.append(String(buffer: line))
                case .tooLong: out.append("<too long>")
                }
            }
        }
        _ = try channel.finish()
        return out
    }

    @Test("a line in one-byte pieces arrives whole; lines that come together are split; a line past 64 KiB is refused once and the rest dropped")
    func framing() throws {
        let line = #"{"id": 1, "op": "stats"}"#
        #expect(try Self.framed((line + "\n").map { String($0) }) == [line])
        #expect(try Self.framed(["a\nb", "c\nd\n\n"]) == ["a", "bc", "d", ""])
        // 64 KiB in 4 KiB pieces with no newline: refused when it passes the limit, then nothing.
        let piece = String(repeating: "x", count: 4096)
        #expect(try Self.framed(Array(repeating: piece, count: 17) + ["\n{}\n"]) == ["<too long>"])
        // Exactly at the limit is still a line.
        let longest = String(repeating: "y", count: LineFramer.maximumLength)
        #expect(try Self.framed([String(longest.prefix(30_000)), String(longest.dropFirst(30_000)) + "\nz\n"]) == [longest, "z"])
    }
}
