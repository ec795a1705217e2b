import MotionCore
import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing
@testable import MotionServer
import MotionWire

/// A frame's lines reach a browser one message a line, cut where the publisher wrote them
/// (``ClientOutput/sendNow(_:ranges:)``), whether the client keeps up or reads them later.
@Suite("A frame's lines over a WebSocket")
struct WebSocketLineTests {
    private static let texts = ["{\"event\":\"value\",\"stream\":\"a.x\",\"value\":1}\n", "{\"b\":\"x\\ny\"}\n", "{}\n"]

    /// The texts back to back after `skip` bytes already read, and where each is from the
    /// reader index.
    private func frame(_ channel: Channel, skip: Int) -> (ByteBuffer, [Range<Int>]) {
        var lines = channel.allocator.buffer(capacity: 128)
        lines.writeString(String(repeating: "-", count: skip))
        lines.moveReaderIndex(forwardBy: skip)
        var ranges: [Range<Int>] = []
        for text in Self.texts {
            let start = lines.readableBytes
            lines.writeString(text)
            ranges.append(start..<lines.readableBytes)
        }
        return (lines, ranges)
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
        let output = ChannelOutput(channel: channel, framing: .webSocket)
        let (lines, ranges) = frame(channel, skip: skip)
        output.sendNow(lines, ranges: ranges)
        #expect(try messages(channel) == Self.texts.map { String($0.dropLast()) })
    }

    @Test("a client behind gets the same messages once it reads again")
    func behind() throws {
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 40000)).wait()
        let output = ChannelOutput(channel: channel, framing: .webSocket)
        output.writabilityChanged(false)
        let (lines, ranges) = frame(channel, skip: 3)
        output.sendNow(lines, ranges: ranges)
        #expect(try messages(channel).isEmpty)
        output.writabilityChanged(true)
        #expect(try messages(channel) == Self.texts.map { String($0.dropLast()) })
    }
}
