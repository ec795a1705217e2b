import NIOCore
import MotionDaemon

/// One client on one connection, as its transport's handler holds it: the daemon's session,
/// and the output its lines leave through.
struct ConnectedClient {
    let session: ClientSession
    let output: ChannelOutput
}

/// The daemon's clients on their connections, whichever the transport (the Unix socket's
/// ``ClientHandler``, the WebSocket's ``WebSocketClientHandler``): each is opened and closed
/// through here, the same way, and the ones the slow-client rule (``SlowClientRule``) gives up
/// on are dropped from here.
///
/// The clients are listed once, as the daemon's sessions (``ClientHub/sessions``). The check
/// for clients behind too long walks that list; a client leaves it when its connection ends,
/// whoever ended it: the peer, the slow-client rule, or the daemon saying `bye` as it stops.
///
/// The transports' handlers reach the daemon only through here, under its lock
/// (``DaemonLock``, ``locked(_:)``): a client's lines may meanwhile be sent by the thread
/// that runs a frame.
final class ClientConnections {
    /// Whose clients they are.
    let daemon: Daemon
    /// What the daemon runs under.
    let lock: DaemonLock
    /// What every client's output is held to.
    let rule: SlowClientRule
    /// The loop the connections and the checks run on.
    private let loop: EventLoop
    /// Told how many clients the rule dropped, after each check that dropped any: the
    /// daemon logs it.
    var onLaggardsDropped: (Int) -> Void = { _ in }
    /// Clients dropped since the last check: by the check, or by their own output when the
    /// rule said so as a line waited.
    private var dropped = 0
    /// The next check, while a client is behind.
    private var check: Scheduled<Void>?
    /// Whether clients are still checked: not once the daemon stops.
    private var checking = true

    init(daemon: Daemon, lock: DaemonLock, loop: EventLoop, rule: SlowClientRule = SlowClientRule()) {
        self.daemon = daemon
        self.lock = lock
        self.loop = loop
        self.rule = rule
    }

    /// Runs `body` with the daemon, under its lock.
    func locked<Result>(_ body: (Daemon) throws -> Result) rethrows -> Result {
        try lock.withLock { try body(daemon) }
    }

    // MARK: Opening and closing

    /// A client connected on `channel`: its output, framing lines as its transport does
    /// (writing straight to `socket`, a duplicate of the channel's, when given), and its
    /// session, which sends the hello.
    func open(_ channel: Channel, framing: LineFraming, socket: Int32? = nil, credentials: PeerCredentials?) -> ConnectedClient {
        let output = ChannelOutput(channel: channel, lock: lock, framing: framing, socket: socket, rule: rule)
        output.onBehind = { [weak self] in self?.scheduleCheck() }
        output.onDropped = { [weak self] in self?.dropped += 1 }
        return locked { ConnectedClient(session: $0.connect(output, credentials: credentials), output: output) }
    }

    /// `client`'s connection ended, however it ended: its output stops, and the daemon
    /// forgets its session, which so leaves the list of clients. Both transports' handlers
    /// call this, and only this, when their channel goes inactive.
    func closed(_ client: ConnectedClient) {
        locked { daemon in
            client.output.markClosed()
            daemon.disconnect(client.session)
        }
    }

    // MARK: The slow-client rule

    /// The outputs of the connected clients, from the daemon's list (a test's outputs are not
    /// on a channel, and never behind).
    private var outputs: [ChannelOutput] {
        daemon.clientOutputs.compactMap { $0 as? ChannelOutput }
    }

    /// Whether any client is behind with lines waiting for it.
    var anyBehind: Bool { nextLaggardDeadline != nil }

    /// How long from now until the next client behind is to be dropped (0 if one already
    /// is); nil when lines wait for none. Checking then, rather than on a period, drops each
    /// client on time: a check on a period started by another client could leave it behind
    /// for nearly twice as long.
    var nextLaggardDeadline: Double? {
        var next: Double?
        for output in outputs {
            switch rule.verdict(on: output.backlog) {
            case .keepingUp, .behind(droppedIn: nil): continue
            case .behind(let droppedIn?): next = min(next ?? droppedIn, droppedIn)
            case .toBeDropped: return 0
            }
        }
        return next
    }

    /// Drops the clients the rule says to; how many were, counting those their outputs
    /// dropped since the last call.
    func dropLaggards() -> Int {
        for output in outputs {
            if case .toBeDropped(let reason) = rule.verdict(on: output.backlog) { output.drop(because: reason) }
        }
        defer { dropped = 0 }
        return dropped
    }

    /// Checks when the client behind the longest is due (and a little after, so that it is:
    /// the rule drops a client behind for longer than its patience), then again for the next.
    /// Under the daemon's lock, from whichever thread found a client behind.
    private func scheduleCheck() {
        guard checking, check == nil, let due = nextLaggardDeadline else { return }
        let connections = UncheckedSendable(self)
        check = loop.scheduleTask(in: .nanoseconds(Int64(due * 1e9)) + .milliseconds(20)) { [lock] in
            lock.withLock { connections.value.checkDue() }
        }
    }

    private func checkDue() {
        guard checking else { return }
        check = nil
        let count = dropLaggards()
        if count > 0 { onLaggardsDropped(count) }
        scheduleCheck()
    }

    /// The daemon is stopping: no more checks.
    func stopChecking() {
        checking = false
        check?.cancel()
        check = nil
    }
}
