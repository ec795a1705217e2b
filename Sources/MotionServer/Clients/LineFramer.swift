import NIOCore

/// What the framer passes on: a line, or word that a line was too long.
enum FramedLine {
    case line(ByteBuffer)
    case tooLong
}

/// Splits a client's bytes into lines. A line longer than 64 KiB is reported once, and from
/// then on everything the client sends is discarded: its connection is being closed.
///
/// It remembers how far it has looked for a newline, as swift-nio-extras'
/// `LineBasedFrameDecoder` does, so a 64 KiB line that arrives a few bytes at a time is
/// scanned once, not once per piece.
final class LineFramer: ByteToMessageDecoder {
    typealias InboundOut = FramedLine
    static let maximumLength = 64 * 1024
    private var discarding = false
    /// How many readable bytes are known to hold no newline.
    private var scanned = 0

    func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        if discarding {
            buffer.moveReaderIndex(to: buffer.writerIndex)
            return .needMoreData
        }
        let view = buffer.readableBytesView
        if let newline = view[(view.startIndex + scanned)...].firstIndex(of: UInt8(ascii: "\n")), newline - buffer.readerIndex <= Self.maximumLength {
            scanned = 0
            let line = buffer.readSlice(length: newline - buffer.readerIndex)!
            buffer.moveReaderIndex(forwardBy: 1)
            context.fireChannelRead(wrapInboundOut(.line(line)))
            return .continue
        }
        scanned = buffer.readableBytes
        if buffer.readableBytes > Self.maximumLength {
            discarding = true
            scanned = 0
            buffer.moveReaderIndex(to: buffer.writerIndex)
            context.fireChannelRead(wrapInboundOut(.tooLong))
        }
        return .needMoreData
    }

    func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        return .needMoreData  // a last line without its newline is dropped
    }
}
