import NIOCore

/// Where a client's lines go: the NIO channel in the daemon, a list in tests.
public protocol ClientOutput: AnyObject {
    /// Queues a line. While the client is behind, a line with a `coalescing` stream name
    /// replaces the one of the same stream still waiting, so it reads only the latest value.
    func send(_ line: ByteBuffer, coalescing stream: String?)
    /// Writes what was queued.
    func flush()
    /// Says goodbye (best effort) and closes.
    func close(saying line: ByteBuffer?)
    /// How many queued lines were replaced by newer ones.
    var coalesced: Int { get }
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
    /// A number, unique while the daemon runs.
    public let id: Int
    /// The peer, when the socket could say.
    public let credentials: PeerCredentials?
    /// Whether the client may use `set`, `add_element` and `remove_element`.
    public let control: Bool
    let output: ClientOutput
    /// The streams subscribed to, and the patterns they came from (which also pick up
    /// streams created later, by `add_element` or a reload).
    var streams: Set<String> = []
    var patterns: [String] = []
    /// Lines sent.
    var sent = 0

    init(id: Int, credentials: PeerCredentials?, control: Bool, output: ClientOutput) {
        self.id = id
        self.credentials = credentials
        self.control = control
        self.output = output
    }
}

/// Shell-style matching of stream names: `*` is any characters (dots included), `?` one.
func globMatches(_ pattern: Substring, _ name: Substring) -> Bool {
    guard let first = pattern.first else { return name.isEmpty }
    switch first {
    case "*":
        let rest = pattern.dropFirst()
        var candidate = name
        while true {
            if globMatches(rest, candidate) { return true }
            guard !candidate.isEmpty else { return false }
            candidate = candidate.dropFirst()
        }
    case "?":
        return !name.isEmpty && globMatches(pattern.dropFirst(), name.dropFirst())
    default:
        return name.first == first && globMatches(pattern.dropFirst(), name.dropFirst())
    }
}
