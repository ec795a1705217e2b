import MotionCore
import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing
@testable import MotionServer
import MotionWire
@testable import MotionDaemon

/// A frame's lines reach a browser one message a line, cut where the publisher wrote them
/// (``ClientOutput/sendNow(_:ranges:)``), whether the client keeps up or reads them later.
@Suite("A frame's lines over a WebSocket")
struct WebSocketLineTests {
    private static let texts = ["{\"event\":\"value\",\"stream\":\"a.x\",\"value\":1}\n", "{\"b\":\"x\\ny\"}\n", "{}\n"]

    /// The texts as a frame's lines, in a slice starting `skip` bytes into its array, with
    /// each line's indices in it.
    private func frame(skip: Int) -> (ArraySlice<UInt8>, [Range<Int>]) {
        var bytes = Array(String(repeating: "-", count: skip).utf8)
        var ranges: [Range<Int>] = []
        for text in Self.texts {
            let start = bytes.count
            bytes += text.utf8
            ranges.append(start..<bytes.count)
        }
        return (bytes[skip...], ranges)
    }

    private func messages(_ channel: EmbeddedChannel) throws -> [String] {
        var messages: [String] = []
        while let frame = try channel.readOutbound(as: WebSocketFrame.self) {
            #expect(frame.opcode == .text && frame.fin)
            messages.append(String(buffer: frame.data))
        }
        return messages
    }

    @Test("a client that keeps up gets each line as a message, without its newline", arguments: [0, 5])
    func keepingUp(skip: Int) throws {
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 40000)).wait()
        let output = ChannelOutput(channel: channel, lock: DaemonLock(), framing: .webSocket)
        let (lines, ranges) = frame(skip: skip)
        output.sendNow(lines, ranges: ranges)
        #expect(try messages(channel) == Self.texts.map { String($0.dropLast()) })
    }

    @Test("a client behind gets the same messages once it reads again")
    func behind() throws {
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 40000)).wait()
        let output = ChannelOutput(channel: channel, lock: DaemonLock(), framing: .webSocket)
        output.writabilityChanged(false)
        let (lines, ranges) = frame(skip: 3)
        output.sendNow(lines, ranges: ranges)
        #expect(try messages(channel).isEmpty)
        output.writabilityChanged(true)
        #expect(try messages(channel) == Self.texts.map { String($0.dropLast()) })
    }
}
