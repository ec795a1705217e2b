import MotionCore

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
    /// The current frame's lines and the streams' counts (``FrameLines``).
    private var frame: FrameLines
    /// Buffers for subscribers that want part of a frame, by which part, with where each
    /// line is in them.
    private var partial: [(wanted: UInt64, lines: ArraySlice<UInt8>, ranges: [Range<Int>])] = []

    init() {
        self.frame = FrameLines(buffer: LineBuffer(capacity: 4096))
    }

    /// The count of `stream`'s values so far (0 before the first).
    func seq(_ stream: StreamID) -> Int { frame.seq(stream) }

    /// How many streams have published (for tests: it must not outgrow the streams).
    var countedStreams: Int { frame.sequence.count { $0 > 0 } }

    /// Forgets the counts of streams that went: their numbers will name other streams.
    func forget(_ streams: [StreamID]) {
        for stream in streams where stream.index < frame.sequence.count { frame.sequence[stream.index] = 0 }
    }

    /// A reload numbered the streams anew: a stream that keeps its name keeps its count.
    func renumber(from old: StreamCatalog, to new: StreamCatalog) {
        var counts = [Int](repeating: 0, count: new.capacity)
        for index in frame.sequence.indices where frame.sequence[index] > 0 {
            let stream = StreamID(index: index)
            if let renamed = new.id(named: old.name(of: stream)) { counts[renamed.index] = frame.sequence[index] }
        }
        frame.sequence = counts
    }

    /// Publishes a frame's report to the subscribers of what it holds, in the protocol's order
    /// (docs/protocol.md, "A frame's lines"): the values (`screen.contacts` the last of them),
    /// then the gesture events. Each subscriber gets its lines in one write. Returns the value
    /// lines sent, over all subscribers.
    @discardableResult
    func publish(_ report: FrameReport, to index: SubscriptionIndex) -> Int {
        frame.collect(report, for: index)
        // Read out of the publisher, once: the outputs may call back into the daemon.
        let frame = self.frame
        guard !frame.touched.isEmpty else { return 0 }
        // The frame's sessions are held by `index`, this call's copy of the subscribers: an
        // output that closes its client (the slow-client rule) may unsubscribe it from the
        // daemon's index meanwhile, but not from this one, so each is alive until the end.
        return withExtendedLifetime(index) {
            var sent = 0
            partial.removeAll(keepingCapacity: true)
            let lines = frame.buffer.lines
            for session in frame.touched {
                sent += session._withUnsafeGuaranteedRef { send(frame, lines, to: $0) }
            }
            return sent
        }
    }

    /// A frame's lines (`all`, the frame's buffer, taken out of it once for every
    /// subscriber) to one of its subscribers: those it wants, in one write if it keeps up.
    /// The values sent.
    private func send(_ frame: FrameLines, _ all: ArraySlice<UInt8>, to session: ClientSession) -> Int {
        let count = frame.ranges.count
        guard count <= 64 else { return sendByLine(frame, to: session) }
        let everything: UInt64 = count == 64 ? .max : (1 << count) - 1
        let keepsUp: Bool
        if session.wanted == everything {
            keepsUp = session.output.sendFrame(all, ranges: frame.ranges)
        } else {
            let (buffer, ranges) = lines(session.wanted, of: frame)
            keepsUp = session.output.sendFrame(buffer, ranges: ranges)
        }
        guard keepsUp else { return sendByLine(frame, to: session) }
        let valueLines: UInt64 = frame.values >= 64 ? .max : (1 << frame.values) - 1
        let valuesSent = (session.wanted & valueLines).nonzeroBitCount
        session.sent += valuesSent
        return valuesSent
    }

    /// To a subscriber that is behind: line by line, each value replaceable by its stream's
    /// next value (events are never replaced). The values sent.
    private func sendByLine(_ frame: FrameLines, to session: ClientSession) -> Int {
        var sent = 0
        let lines = frame.buffer.lines
        for position in frame.ranges.indices where session.subscriptions[frame.streams[position]] != nil {
            let isValue = position < frame.values
            session.output.send(lines[frame.ranges[position]], coalescing: isValue ? frame.streams[position] : nil)
            if isValue {
                session.sent += 1
                sent += 1
            }
        }
        session.output.flush()
        return sent
    }

    /// The lines of the updates in `wanted`, in one buffer shared by every subscriber
    /// wanting the same ones, and where each is in it.
    private func lines(_ wanted: UInt64, of frame: FrameLines) -> (ArraySlice<UInt8>, [Range<Int>]) {
        if let found = partial.first(where: { $0.wanted == wanted }) { return (found.lines, found.ranges) }
        var buffer = LineBuffer(capacity: 256 * wanted.nonzeroBitCount)
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(wanted.nonzeroBitCount)
        let lines = frame.buffer.lines
        var rest = wanted
        while rest != 0 {
            let start = buffer.count
            buffer.write(lines[frame.ranges[rest.trailingZeroBitCount]])
            ranges.append(start..<buffer.count)
            rest &= rest - 1
        }
        partial.append((wanted, buffer.lines, ranges))
        return (buffer.lines, ranges)
    }
}

/// A frame's lines, back to back in one buffer, where each is, its stream, and the sessions
/// that want which (``ClientSession/wanted``), with the count of each stream's values that
/// numbers them. Filled by one mutating call (``collect(_:for:)``): the publisher's stored
/// properties, a class's, are checked for exclusive access at run time at every access, and
/// a frame's lines took a score of such accesses; a value's fields are checked when compiled.
struct FrameLines {
    var buffer: LineBuffer
    /// Where each line is in ``buffer``, and the stream it is of.
    private(set) var ranges: [Range<Int>] = []
    private(set) var streams: [StreamID] = []
    /// How many of the lines are values (they come first).
    private(set) var values = 0
    /// The sessions the frame goes to (the list's storage is kept between frames). Not
    /// retained: they are the subscribers in the index the frame is collected for, which
    /// holds them while the frame is published (``Publisher/publish(_:to:)``), and the list
    /// is not read after. A retain and a release of every subscriber every frame, atomic
    /// operations on a session each, were some 5 % of motiond's CPU at 100 clients.
    private(set) var touched: [Unmanaged<ClientSession>] = []
    /// Per ``StreamID/index``: how many values the stream has published.
    var sequence: [Int] = []
    private var publication = 0

    init(buffer: LineBuffer) {
        self.buffer = buffer
    }

    /// The count of `stream`'s values so far (0 before the first).
    func seq(_ stream: StreamID) -> Int { stream.index < sequence.count ? sequence[stream.index] : 0 }

    /// The report's lines for the subscribers in `index`: each value numbered (and written
    /// if anyone wants it), then the gesture events someone hears.
    mutating func collect(_ report: FrameReport, for index: SubscriptionIndex) {
        publication &+= 1
        buffer.clear()
        ranges.removeAll(keepingCapacity: true)
        streams.removeAll(keepingCapacity: true)
        touched.removeAll(keepingCapacity: true)
        var times = TimeDigits()
        for update in report.values {
            let seq = nextSeq(update.id)
            let start = buffer.count
            if index.hasSubscribers(update.id) {
                buffer.writeValueLine(stream: update.stream, value: update.value, time: update.time, seq: seq, times: &times)
            }
            add(update.id, start..<buffer.count, index)
        }
        values = ranges.count
        for event in report.events where index.hasSubscribers(event.stream) {
            let start = buffer.count
            guard buffer.writeStateEvent(event) else { continue }
            add(event.stream, start..<buffer.count, index)
        }
    }

    /// Counts one more value on `stream`; the count.
    private mutating func nextSeq(_ stream: StreamID) -> Int {
        while sequence.count <= stream.index { sequence.append(0) }
        sequence[stream.index] += 1
        return sequence[stream.index]
    }

    /// Notes the frame's next line, for `stream`, and which subscribers want it.
    private mutating func add(_ stream: StreamID, _ line: Range<Int>, _ index: SubscriptionIndex) {
        let position = ranges.count
        ranges.append(line)
        streams.append(stream)
        let bit: UInt64 = position < 64 ? 1 << position : .max
        index.forEachSubscriber(of: stream) { subscriber in
            let first = subscriber._withUnsafeGuaranteedRef { session in
                let first = session.publication != publication
                if first {
                    session.publication = publication
                    session.wanted = 0
                }
                session.wanted |= bit
                return first
            }
            if first { touched.append(subscriber) }
        }
    }
}
