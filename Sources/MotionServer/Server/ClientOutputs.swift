import Glibc
import MotionCore
import NIOCore
import TouchInput

/// When a client is too slow to keep (docs/protocol.md, Slow clients): named once, for the
/// outputs that enforce them and the daemon that checks them.
enum SlowClientLimits {
    /// A client whose socket has stayed full this long is disconnected.
    static let blockedSeconds = 5.0
    /// A client with more than this waiting is disconnected at once.
    static let pendingBytes = 4 << 20
}

/// Every open client output, to find the ones too far behind.
final class ClientOutputs {
    /// Seconds on a monotonic clock: what times how long a client has been behind, for it
    /// and for the outputs added. A test gives its own, to pass the 5 s without waiting them.
    let clock: () -> Double
    private var outputs: [ObjectIdentifier: ChannelOutput] = [:]
    /// Called when any client falls behind.
    var onBlocked: () -> Void = {}
    /// Clients disconnected for too much output since the last ``dropLaggards``.
    private var overflowed = 0

    init(clock: @escaping () -> Double = monotonicNow) {
        self.clock = clock
    }

    /// Whether any client is behind.
    var anyBlocked: Bool { outputs.values.contains { $0.blockedSince != nil } }

    /// How long from now until the client behind the longest will have been behind for
    /// ``SlowClientLimits/blockedSeconds``, when it is to be dropped (0 if it already has);
    /// nil when none is behind. Checking then, rather than at a fixed period, drops each
    /// client on time: a check on a period started by another client could leave it behind
    /// for nearly twice as long.
    var nextLaggardDeadline: Double? {
        let now = clock()
        return outputs.values.compactMap(\.blockedSince).min().map { Swift.max(0, $0 + SlowClientLimits.blockedSeconds - now) }
    }

    func add(_ output: ChannelOutput) {
        output.clock = clock
        output.onBlocked = { [weak self] in self?.onBlocked() }
        output.onOverflow = { [weak self, unowned output] in
            self?.overflowed += 1
            self?.remove(output)
        }
        outputs[ObjectIdentifier(output)] = output
    }
    func remove(_ output: ChannelOutput) { outputs[ObjectIdentifier(output)] = nil }

    /// Disconnects the clients the slow-client rule (``SlowClientLimits``) says to: behind for
    /// longer than 5 s, or with more than 4 MiB waiting; how many were, counting those dropped
    /// for too much output since the last call.
    func dropLaggards(allocator: ByteBufferAllocator) -> Int {
        let now = clock()
        var dropped = overflowed
        overflowed = 0
        for output in outputs.values {
            guard let since = output.blockedSince,
                  now - since > SlowClientLimits.blockedSeconds || output.pendingBytes > SlowClientLimits.pendingBytes else { continue }
            let reason = "too slow: this client did not read for \(Int(now - since)) s"
            output.close(saying: allocator.buffer(string: ProtocolLine.text(ProtocolLine.bye(reason))), because: .tooSlow)
            remove(output)
            dropped += 1
        }
        return dropped
    }
}
