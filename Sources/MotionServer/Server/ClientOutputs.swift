import NIOCore

/// Every open client output, to find the ones the slow-client rule (``SlowClientRule``) says
/// to drop.
final class ClientOutputs {
    /// What the outputs are held to; its clock times how long a client has been behind. A
    /// test gives a rule on its own clock, to pass the 5 s without waiting them.
    let rule: SlowClientRule
    private var outputs: [ObjectIdentifier: ChannelOutput] = [:]
    /// Called when any client falls behind.
    var onBlocked: () -> Void = {}
    /// Clients dropped since the last ``dropLaggards()``: by it, or by their own output when
    /// the rule said so as a line waited.
    private var dropped = 0

    init(rule: SlowClientRule = SlowClientRule()) {
        self.rule = rule
    }

    /// Whether any client is behind with lines waiting for it.
    var anyBlocked: Bool { nextLaggardDeadline != nil }

    /// How long from now until the next client behind is to be dropped (0 if one already
    /// is); nil when lines wait for none. Checking then, rather than on a period, drops each
    /// client on time: a check on a period started by another client could leave it behind
    /// for nearly twice as long.
    var nextLaggardDeadline: Double? {
        var next: Double?
        for output in outputs.values {
            switch rule.verdict(on: output.backlog) {
            case .keepingUp, .behind(droppedIn: nil): continue
            case .behind(let droppedIn?): next = min(next ?? droppedIn, droppedIn)
            case .toBeDropped: return 0
            }
        }
        return next
    }

    func add(_ output: ChannelOutput) {
        output.onBehind = { [weak self] in self?.onBlocked() }
        output.onDropped = { [weak self, unowned output] in
            self?.dropped += 1
            self?.remove(output)
        }
        outputs[ObjectIdentifier(output)] = output
    }
    func remove(_ output: ChannelOutput) { outputs[ObjectIdentifier(output)] = nil }

    /// Drops the clients the rule says to; how many were, counting those their outputs
    /// dropped since the last call.
    func dropLaggards() -> Int {
        for output in outputs.values {
            if case .toBeDropped(let reason) = rule.verdict(on: output.backlog) { output.drop(because: reason) }
        }
        defer { dropped = 0 }
        return dropped
    }
}
