import Dispatch
import Testing
import TouchInput
@testable import MotionServer

@Suite("The replay thread's wait")
struct StoppableWaitTests {
    @Test("a wait ends at its deadline on the monotonic clock, not before")
    func endsAtTheDeadline() {
        let waiting = StoppableWait()
        let deadline = monotonicNow() + 0.05
        #expect(waiting.wait(until: deadline))
        #expect(monotonicNow() >= deadline)
        #expect(waiting.wait(until: deadline - 1), "a deadline already past ends the wait at once")
    }

    @Test("a deadline whose fraction of a second rounds up to a whole one, or out of any range, is waited for, not refused")
    func oddDeadlines() {
        let waiting = StoppableWait()
        let past = monotonicNow().rounded(.down) - 1 + 0.999_999_999_9
        #expect(waiting.wait(until: past))
        #expect(waiting.wait(until: -.infinity))
        #expect(waiting.wait(until: .nan))
        waiting.stop()
        #expect(!waiting.wait(until: .infinity), "stopped: even a wait for ever ends at once")
    }

    @Test("a stop ends the wait in progress at once (or the one about to begin), and every later one")
    func stopEndsTheWait() {
        let waiting = StoppableWait()
        let started = DispatchSemaphore(value: 0), ended = DispatchSemaphore(value: 0)
        let outcome = Outcome()
        DispatchQueue.global().async {
            started.signal()
            outcome.came = waiting.wait(until: monotonicNow() + 3600)
            ended.signal()
        }
        #expect(started.wait(timeout: .now() + 10) == .success)
        waiting.stop()
        // Ten seconds: far beyond a wake-up on a loaded machine, far below the hour waited for.
        #expect(ended.wait(timeout: .now() + 10) == .success, "the stop did not end the wait")
        #expect(outcome.came == false)
        #expect(!waiting.wait(until: monotonicNow() + 3600), "a wait after the stop ends at once")
    }

    /// What the waiting thread saw, read after its semaphore.
    private final class Outcome: @unchecked Sendable {
        var came: Bool?
    }
}
