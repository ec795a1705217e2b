import MotionCore
import NIOCore
import NIOPosix
import Testing
@testable import MotionConfiguration
@testable import MotionServer

@Suite("Frame clock on a real event loop")
struct EventLoopFrameClockTests {
    /// What a spring run on the loop reported, gathered on the loop and handed back once.
    struct Outcome: Sendable {
        var frames: [Double] = []
        var values: [Double] = []
        var wakeUps = 0
        var runningAfterRest = true
        var startTime = 0.0
    }

    @Test("a spring runs at the clock's rate on monotonic time and the clock stops at rest")
    func springOnEventLoop() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let finished = loop.makePromise(of: Outcome.self)

        loop.execute {
            let clock = TimedFrameClock(rate: 240, scheduler: EventLoopFrameScheduler(eventLoop: loop, lock: DaemonLock()))
            var outcome = Outcome()
            var subscription: Subscription?
            var starter: Subscription?
            // Start the spring inside a frame, where the clock's time is pinned to the
            // frame's timestamp, so the test knows exactly when the spring started.
            starter = clock.observeFrames { time in
                starter?.unsubscribe()
                outcome.startTime = time
                let spring = Spring(to: 100.0, from: 0.0, threshold: 0.5)
                subscription = springSource(spring, clock: clock).subscribe(
                    next: { value in
                        outcome.frames.append(clock.now)
                        outcome.values.append(value)
                    },
                    state: { state in
                        guard state == .atRest else { return }
                        // Settle in a later turn of the loop, once the spring has let go of the clock.
                        loop.assumeIsolated().execute {
                            outcome.wakeUps = clock.wakeUps
                            outcome.runningAfterRest = clock.isRunning
                            subscription?.unsubscribe()
                            finished.succeed(outcome)
                        }
                    }
                )
            }
        }

        let outcome = try await finished.futureResult.get()
        try await group.shutdownGracefully()

        #expect(!outcome.runningAfterRest, "no frame is scheduled once the spring is at rest")
        #expect(outcome.wakeUps == outcome.frames.count + 1, "one wake-up to start, then one per value")
        #expect(outcome.values.last == 100)
        // Every value is the closed form at the frame's real monotonic time.
        let curve = SpringCurve(from: 0.0, velocity: 0, to: 100, configuration: .standard)
        for (time, value) in zip(outcome.frames, outcome.values).dropLast() {
            #expect(Swift.abs(curve.value(at: time - outcome.startTime) - value) < 1e-9)
        }
        // Frame times increase, and rest comes no earlier than the spring can settle
        // (its envelope is within 0.5 of 100 from t = ln(342)/15 = 0.39 s).
        #expect(zip(outcome.frames.dropFirst(), outcome.frames).allSatisfy { $0 > $1 })
        let duration = try #require(outcome.frames.last) - outcome.startTime
        #expect(duration > 0.38, "settled after \(duration) s")
    }
}
