import TouchInput

/// The slow-client rule (docs/protocol.md, Slow clients): a client that does not read what it
/// is sent never holds up the touch input or the other clients, and is not kept for ever.
///
/// - While nothing waits for a client and its socket takes more, it keeps up: what it is sent
///   goes straight out, a frame's lines in one write.
/// - Once its socket is full it is behind: its lines wait in motiond, and a newer value of a
///   stream replaces the one still waiting, so that it reads current values when it catches up.
/// - It is dropped (a `bye` saying why, then the end of the connection) once lines have waited
///   for it longer than ``patience``, or at once when more than ``pendingLimit`` waits.
///
/// The rule decides and others act on it: a client's output (``ChannelOutput``) asks it whether
/// a line may go straight out and, whenever one has to wait, whether to drop the client; the
/// periodic check (``ClientConnections``) asks it when the next client is due and which to drop.
struct SlowClientRule {
    /// How long, in seconds, lines may wait for a client before it is dropped.
    static let patience = 5.0
    /// The most a client may have waiting, in bytes: one over it is dropped at once.
    static let pendingLimit = 4 << 20

    /// Seconds on a monotonic clock: what times how long a client has been behind. A test
    /// gives its own, to pass the 5 s without waiting them.
    let clock: () -> Double

    init(clock: @escaping () -> Double = monotonicNow) {
        self.clock = clock
    }

    /// Where a client stands.
    enum Verdict: Equatable {
        /// What it is sent goes straight out.
        case keepingUp
        /// What it is sent waits. It is dropped in `droppedIn` seconds unless it catches up
        /// first; nil while its socket is full but nothing waits yet, as the rule times a
        /// client from the first line that waits for it.
        case behind(droppedIn: Double?)
        /// It is to be dropped now, its `bye` saying `reason`.
        case toBeDropped(reason: String)
    }

    /// Whether what `backlog`'s client is sent goes straight out. Asked for every subscriber
    /// of every frame, so it reads no clock (only a client that is behind is timed), and is
    /// static: asking it copies no rule, nor retains its clock.
    static func keepsUp(_ backlog: ClientBacklog) -> Bool {
        backlog.since == nil && !backlog.socketFull
    }

    /// Where `backlog`'s client stands now.
    func verdict(on backlog: ClientBacklog) -> Verdict {
        if Self.keepsUp(backlog) { return .keepingUp }
        guard let since = backlog.since else { return .behind(droppedIn: nil) }
        if backlog.bytes > Self.pendingLimit {
            return .toBeDropped(reason: "too slow: more than \(Self.pendingLimit >> 20) MiB waited for this client")
        }
        let waited = clock() - since
        if waited > Self.patience { return .toBeDropped(reason: "too slow: this client did not read for \(Int(waited)) s") }
        return .behind(droppedIn: Self.patience - waited)
    }
}

/// What the slow-client rule judges a client by: what waits for it in motiond, since when, and
/// whether its socket is full.
struct ClientBacklog: Equatable {
    /// When the oldest of what waits was queued, on the rule's clock; nil while nothing waits.
    var since: Double?
    /// The bytes waiting: lines, and a WebSocket's pong.
    var bytes = 0
    /// Whether the kernel's buffer for the client is full (or the rest of a write is still
    /// going out), so that a line sent now would wait.
    var socketFull = false
}
