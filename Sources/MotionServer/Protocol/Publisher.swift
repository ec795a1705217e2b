import MotionCore
import NIOCore

/// Sends what a frame changed to the clients that want it (docs/protocol.md, `value` and
/// `state` events): numbers each stream's values (`seq`), encodes each line once, and gives
/// every subscriber a frame's lines in one write and one flush, in the protocol's order.
///
/// The work per frame is proportional to the subscriptions of the streams that changed, not
/// to the number of clients: the ``SubscriptionIndex`` names the subscribers of each
/// update, and each session notes in itself which of the frame's updates it wants. In the
/// common case (every subscriber wants the whole frame, as `"*"` subscribers do) they all
/// share one buffer; a subscriber that is behind gets the lines one by one instead, so that
/// a newer value can replace an older one still waiting (``ClientOutput``).
final class Publisher {
    private let allocator: ByteBufferAllocator
    /// Per ``StreamID/index``: how many values the stream has published.
    private var sequence: [Int] = []
    /// The current frame's lines, back to back, where each is in it, and its stream.
    private var frame: ByteBuffer
    private var lines: [Range<Int>] = []
    private var streams: [StreamID] = []
    /// The sessions the current frame goes to; kept between frames.
    private var touched: [ClientSession] = []
    /// Buffers for subscribers that want part of a frame, by which part, with where each
    /// line is in them.
    private var partial: [(wanted: UInt64, lines: ByteBuffer, ranges: [Range<Int>])] = []
    private var publication = 0

    init(allocator: ByteBufferAllocator) {
        self.allocator = allocator
        self.frame = allocator.buffer(capacity: 4096)
    }

    /// The count of `stream`'s values so far (0 before the first).
    func seq(_ stream: StreamID) -> Int { stream.index < sequence.count ? sequence[stream.index] : 0 }

    /// Counts one more value on `stream`; the count.
    func nextSeq(_ stream: StreamID) -> Int {
        while sequence.count <= stream.index { sequence.append(0) }
        sequence[stream.index] += 1
        return sequence[stream.index]
    }

    /// How many streams have published (for tests: it must not outgrow the streams).
    var countedStreams: Int { sequence.count { $0 > 0 } }

    /// Forgets the counts of streams that went: their numbers will name other streams.
    func forget(_ streams: [StreamID]) {
        for stream in streams where stream.index < sequence.count { sequence[stream.index] = 0 }
    }

    /// A reload numbered the streams anew: a stream that keeps its name keeps its count.
    func renumber(from old: StreamCatalog, to new: StreamCatalog) {
        var counts = [Int](repeating: 0, count: new.capacity)
        for index in sequence.indices where sequence[index] > 0 {
            let stream = StreamID(index: index)
            if let renamed = new.id(named: old.name(of: stream)) { counts[renamed.index] = sequence[index] }
        }
        sequence = counts
    }

    /// Publishes a frame's report to the subscribers of what it holds, in the protocol's order
    /// (docs/protocol.md, "A frame's lines"): the values (`screen.contacts` the last of them),
    /// then the gesture events. Each subscriber gets its lines in one write. Returns the value
    /// lines sent, over all subscribers.
    @discardableResult
    func publish(_ report: FrameReport, to index: SubscriptionIndex) -> Int {
        publication &+= 1
        frame.clear()
        lines.removeAll(keepingCapacity: true)
        streams.removeAll(keepingCapacity: true)
        touched.removeAll(keepingCapacity: true)
        for update in report.values {
            let seq = nextSeq(update.id)
            let start = frame.writerIndex
            if index.hasSubscribers(update.id) {
                frame.writeValueLine(stream: update.stream, value: update.value, time: update.time, seq: seq)
            }
            add(update.id, start..<frame.writerIndex, index)
        }
        let values = lines.count
        for event in report.events where index.hasSubscribers(event.stream) {
            let start = frame.writerIndex
            guard frame.writeStateEvent(event) else { continue }
            add(event.stream, start..<frame.writerIndex, index)
        }
        guard !touched.isEmpty else { return 0 }
        var sent = 0
        let count = lines.count
        let everything: UInt64 = count >= 64 ? .max : (1 << count) - 1
        let valueLines: UInt64 = values >= 64 ? .max : (1 << values) - 1
        partial.removeAll(keepingCapacity: true)
        for session in touched {
            if session.output.isKeepingUp && count <= 64 {
                let (buffer, ranges) = session.wanted == everything ? (frame, lines) : lines(session.wanted)
                let valuesSent = (session.wanted & valueLines).nonzeroBitCount
                session.sent += valuesSent
                sent += valuesSent
                session.output.sendNow(buffer, ranges: ranges)
            } else {
                // Behind: line by line, each value replaceable by its stream's next value
                // (events are never replaced).
                for position in 0..<count where session.subscriptions[streams[position]] != nil {
                    let line = self.lines[position]
                    let isValue = position < values
                    session.output.send(frame.getSlice(at: line.lowerBound, length: line.count)!, coalescing: isValue ? streams[position] : nil)
                    if isValue {
                        session.sent += 1
                        sent += 1
                    }
                }
                session.output.flush()
            }
        }
        return sent
    }

    /// Notes the frame's next line, for `stream`, and which subscribers want it.
    private func add(_ stream: StreamID, _ line: Range<Int>, _ index: SubscriptionIndex) {
        let position = lines.count
        lines.append(line)
        streams.append(stream)
        for session in index.subscribers(of: stream) {
            if session.publication != publication {
                session.publication = publication
                session.wanted = 0
                touched.append(session)
            }
            if position < 64 { session.wanted |= 1 << position } else { session.wanted = .max }
        }
    }

    /// The lines of the updates in `wanted`, in one buffer shared by every subscriber
    /// wanting the same ones, and where each is in it.
    private func lines(_ wanted: UInt64) -> (ByteBuffer, [Range<Int>]) {
        if let found = partial.first(where: { $0.wanted == wanted }) { return (found.lines, found.ranges) }
        var buffer = allocator.buffer(capacity: 256 * wanted.nonzeroBitCount)
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(wanted.nonzeroBitCount)
        var rest = wanted
        while rest != 0 {
            let line = lines[rest.trailingZeroBitCount]
            let start = buffer.writerIndex
            buffer.writeImmutableBuffer(frame.getSlice(at: line.lowerBound, length: line.count)!)
            ranges.append(start..<buffer.writerIndex)
            rest &= rest - 1
        }
        partial.append((wanted, buffer, ranges))
        return (buffer, ranges)
    }
}
