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
    private var outputs: [ObjectIdentifier: ChannelOutput] = [:]
    /// Called when any client falls behind.
    var onBlocked: () -> Void = {}
    /// Clients disconnected for too much output since the last ``dropLaggards``.
    private var overflowed = 0

    /// Whether any client is behind.
    var anyBlocked: Bool { outputs.values.contains { $0.blockedSince != nil } }

    /// How long after `now` the client behind the longest will have been behind for
    /// `seconds`, when it is to be dropped (0 if it already has); nil when none is behind.
    /// Checking then, rather than at a fixed period, drops each client on time: a check on
    /// a period started by another client could leave it behind for nearly twice as long.
    func nextLaggardDeadline(after now: Double, olderThan seconds: Double) -> Double? {
        outputs.values.compactMap(\.blockedSince).min().map { Swift.max(0, $0 + seconds - now) }
    }

    func add(_ output: ChannelOutput) {
        output.onBlocked = { [weak self] in self?.onBlocked() }
        output.onOverflow = { [weak self, unowned output] in
            self?.overflowed += 1
            self?.remove(output)
        }
        outputs[ObjectIdentifier(output)] = output
    }
    func remove(_ output: ChannelOutput) { outputs[ObjectIdentifier(output)] = nil }

    /// Disconnects clients behind for longer than `seconds` or with more than `bytes` waiting;
    /// how many were, counting those dropped for too much output since the last call.
    func dropLaggards(olderThan seconds: Double, orLargerThan bytes: Int, allocator: ByteBufferAllocator) -> Int {
        let now = monotonicNow()
        var dropped = overflowed
        overflowed = 0
        for output in outputs.values {
            guard let since = output.blockedSince, now - since > seconds || output.pendingBytes > bytes else { continue }
            let reason = "too slow: this client did not read for \(Int(now - since)) s"
            output.close(saying: allocator.buffer(string: ProtocolLine.text(ProtocolLine.bye(reason))), because: .tooSlow)
            remove(output)
            dropped += 1
        }
        return dropped
    }
}
