import Testing
@testable import MotionCore

/// What a large scene's elements no longer make until someone asks for it: observers see
/// what they saw before.
@Suite("Objects made on demand")
struct OnDemandTests {
    @Test("a value becomes a property only when asked for, which then holds the last value and is written through")
    func onDemandProperty() {
        var value = OnDemandProperty(1)
        #expect(value.store(2) == nil, "no property is made by a write")
        #expect(value.value == 2)
        let property = value.property()
        #expect(value.property() === property, "made once")
        var seen: [Int] = []
        property.subscribe { seen.append($0) }
        let observed = value.store(3)
        #expect(observed === property, "a write goes to the property once there is one")
        observed?.value = 3
        #expect(seen == [2, 3])
        #expect(value.value == 3)
    }

    @Test("a spring's state and velocity, asked for while it moves, are the moving spring's, and follow it to rest")
    func springStateAskedMidway() {
        let clock = ManualFrameClock(now: 0)
        let spring = Spring(to: 100.0, from: 0.0)
        let values = springSource(spring, clock: clock).subscribe(next: { _ in })
        clock.tick(at: 0.05)
        var states: [MotionState] = []
        spring.state.subscribe { states.append($0) }
        #expect(spring.velocity.value > 0)
        var time = 0.05
        while clock.isRunning && time < 10 {
            time += 1.0 / 60
            clock.tick(at: time)
        }
        #expect(states == [.active, .atRest])
        #expect(spring.velocity.value == 0)
        values.unsubscribe()
    }

    @Test("a runtime's and a tracker's state, asked for while a stream is active, say so, and follow it")
    func trackerStateAskedMidway() {
        let events = EventStream<Int>(state: { $0 > 0 ? .active : .atRest })
        let tracker = ActivityTracker()
        let runtime = MotionRuntime(clock: ManualFrameClock())
        runtime.observeState(of: tracker.tracked(events.stream))
        events.send(1)
        var runtimeStates: [MotionState] = [], trackerStates: [MotionState] = []
        runtime.state.subscribe { runtimeStates.append($0) }
        tracker.state.subscribe { trackerStates.append($0) }
        events.send(0)
        #expect(runtimeStates == [.active, .atRest])
        #expect(trackerStates == [.active, .atRest])
    }
}
