import MotionCore

/// Where a client's lines go: its connection (motiond's server, which owns the transports),
/// a list in tests. Lines are bytes, each ending in its newline; the slices a frame's lines
/// come in share one buffer for every client (``LineBuffer``).
public protocol ClientOutput: AnyObject {
    /// Queues a line (one: a WebSocket sends it as one message). While the client is behind,
    /// a line with a `coalescing` stream replaces the one of the same stream still waiting, so
    /// it reads only the latest value.
    func send(_ line: ArraySlice<UInt8>, coalescing stream: StreamID?)
    /// Writes what was queued.
    func flush()
    /// Writes `lines` and flushes, in one step: what a client that keeps up gets each frame
    /// (one system call per client per frame).
    func sendNow(_ lines: ArraySlice<UInt8>)
    /// ``sendNow(_:)`` of lines whose places the writer knew (indices of `lines`): a
    /// WebSocket sends each as a message without looking for the newlines.
    func sendNow(_ lines: ArraySlice<UInt8>, ranges: [Range<Int>])
    /// A frame's lines sent now, as ``sendNow(_:ranges:)``, if the client keeps up
    /// (``isKeepingUp``); false, sending nothing, if it is behind. One call a client a frame:
    /// what the publisher asks of every subscriber.
    func sendFrame(_ lines: ArraySlice<UInt8>, ranges: [Range<Int>]) -> Bool
    /// Says goodbye (best effort) and closes.
    func close(saying line: ArraySlice<UInt8>?)
    /// How many queued lines were replaced by newer ones.
    var coalesced: Int { get }
    /// Whether a line sent now goes straight out: nothing waits and the socket takes more
    /// (the slow-client rule's keeping up, ``SlowClientRule``). The daemon then sends a frame's
    /// lines as one buffer; to a client that is behind it sends them one by one, so that each
    /// stream can be coalesced.
    var isKeepingUp: Bool { get }
    /// How the client is connected (for metrics).
    var transport: ClientTransport { get }
    /// Whether motiond disconnected the client for not reading what it was sent.
    var wasDropped: Bool { get }
}

/// How a client is connected: its label in `motiond_clients{transport}`.
public enum ClientTransport: String, CaseIterable, Sendable {
    /// The Unix-domain socket.
    case unix
    /// A WebSocket on the web listener.
    case websocket
}

extension ClientOutput {
    /// An output that says nothing else (a test's, a benchmark's) counts as the socket's.
    public var transport: ClientTransport { .unix }
    public var wasDropped: Bool { false }

    public func sendNow(_ lines: ArraySlice<UInt8>) {
        send(lines, coalescing: nil)
        flush()
    }

    public func sendNow(_ lines: ArraySlice<UInt8>, ranges: [Range<Int>]) { sendNow(lines) }

    public func sendFrame(_ lines: ArraySlice<UInt8>, ranges: [Range<Int>]) -> Bool {
        guard isKeepingUp else { return false }
        sendNow(lines, ranges: ranges)
        return true
    }
}

/// Who is on the other end of a connection, from `SO_PEERCRED`.
public struct PeerCredentials: Hashable, Sendable {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32

    public init(pid: Int32, uid: UInt32, gid: UInt32) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }
}

/// One connected client.
public final class ClientSession {
    // What the publisher reads and writes for every subscriber of every frame comes first,
    // so that it shares the object's first cache line or two: with a hundred clients, a
    // frame's sends push the sessions out of the cache, and each line read is a miss.
    let output: ClientOutput
    /// The publication this session was last touched by, and which of its updates it
    /// wants: the publisher's scratch space, so that a frame needs no table of its own.
    var publication = 0
    var wanted: UInt64 = 0
    /// Lines sent.
    var sent = 0
    /// A number, unique while the daemon runs.
    public let id: Int
    /// The peer, when the socket could say.
    public let credentials: PeerCredentials?
    /// Whether the client may use `set`, `add_element` and `remove_element`: from its peer's
    /// credentials when it connects, or from the control token (`auth`).
    public internal(set) var control: Bool
    /// The streams subscribed to, each with the session's place in the stream's list of
    /// subscribers (kept by ``SubscriptionIndex``, which removes in constant time with it).
    var subscriptions: [StreamID: Int] = [:]
    /// The patterns the subscriptions came from, which also pick up streams created later
    /// (by `add_element` or a reload).
    var patterns: [String] = []

    /// The streams subscribed to.
    var streams: Dictionary<StreamID, Int>.Keys { subscriptions.keys }

    init(id: Int, credentials: PeerCredentials?, control: Bool, output: ClientOutput) {
        self.id = id
        self.credentials = credentials
        self.control = control
        self.output = output
    }
}

/// How much matching one client may ask for. Stream names are short (`card.position`), so
/// these leave room for any real use, while bounding what one request or one reload costs:
/// a pattern is matched against a name in at most pattern × name steps (``globMatches``).
enum SubscriptionLimits {
    /// The longest pattern, in bytes of UTF-8.
    static let patternLength = 128
    /// Patterns in one subscribe or unsubscribe.
    static let patternsPerRequest = 64
    /// Patterns a client holds at once (they are matched again when streams appear).
    static let patternsPerSession = 256
}
