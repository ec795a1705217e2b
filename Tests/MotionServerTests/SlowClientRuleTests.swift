import Testing
@testable import MotionServer

/// The slow-client rule on a clock the test sets (docs/protocol.md, Slow clients).
@Suite("Slow-client rule")
struct SlowClientRuleTests {
    /// A clock that says what the test last set, and counts how often it was read.
    final class SetClock {
        var now = 1000.0
        var reads = 0
    }

    @Test("a client keeps up while nothing waits and its socket takes more, asked without reading the clock; it is behind, untimed, while only its socket is full")
    func keepingUp() {
        let clock = SetClock()
        let rule = SlowClientRule {
            clock.reads += 1
            return clock.now
        }
        #expect(rule.verdict(on: ClientBacklog()) == .keepingUp)
        #expect(SlowClientRule.keepsUp(ClientBacklog()))
        let full = ClientBacklog(socketFull: true)
        #expect(rule.verdict(on: full) == .behind(droppedIn: nil))
        #expect(!SlowClientRule.keepsUp(full))
        #expect(!SlowClientRule.keepsUp(ClientBacklog(since: 1000, bytes: 10)))
        #expect(clock.reads == 0, "the clock was read for a client nothing waits for")
    }

    @Test("lines waiting 4.99 s keep the client, 5.01 s drop it, saying for how long it did not read")
    func patience() {
        let clock = SetClock()
        let rule = SlowClientRule { clock.now }
        let backlog = ClientBacklog(since: clock.now, bytes: 100, socketFull: true)
        #expect(rule.verdict(on: backlog) == .behind(droppedIn: 5))
        clock.now += 4.99
        guard case .behind(let left?) = rule.verdict(on: backlog) else {
            Issue.record("dropped before its 5 s: \(rule.verdict(on: backlog))")
            return
        }
        #expect(abs(left - 0.01) < 1e-9)
        clock.now += 0.02
        #expect(rule.verdict(on: backlog) == .toBeDropped(reason: "too slow: this client did not read for 5 s"))
    }

    @Test("4 MiB waiting keeps the client; a byte more drops it at once")
    func pendingLimit() {
        let rule = SlowClientRule { 1000 }
        #expect(rule.verdict(on: ClientBacklog(since: 1000, bytes: 4 << 20)) == .behind(droppedIn: 5))
        #expect(rule.verdict(on: ClientBacklog(since: 1000, bytes: 4 << 20 + 1)) == .toBeDropped(reason: "too slow: more than 4 MiB waited for this client"))
    }
}
