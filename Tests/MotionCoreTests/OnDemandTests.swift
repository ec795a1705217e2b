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

    @Test("a connection deferred to an event stream's first value runs in its turn among the subscriptions waiting, before the value is delivered; cancelled, never; once a value came, at once")
    func deferredToFirstValue() {
        let events = EventStream<Int>()
        var log: [String] = []
        events.stream.subscribe(next: { log.append("before \($0)") })
        _ = events.onFirstValue {
            log.append("deferred")
            events.stream.subscribe(next: { log.append("made \($0)") })
        }
        events.stream.map { $0 * 10 }.subscribe(next: { log.append("after \($0)") })
        events.onFirstValue { log.append("cancelled") }.unsubscribe()
        #expect(log.isEmpty)
        events.send(1)
        #expect(log == ["deferred", "before 1", "made 1", "after 10"])
        _ = events.onFirstValue { log.append("late") }
        #expect(log.last == "late")
    }

    @Test("an untouched tossable waits on its drag with one deferred connection, its chains made at the first drag event; dragged and tossed then as before")
    func tossableDragChainsMadeAtFirstDrag() throws {
        let clock = ManualFrameClock(now: 0)
        let engine = MotionEngine(scene: Scene(size: Size(width: 1920, height: 1080)), clock: clock)
        let element = Element(id: "card", center: Point(x: 960, y: 540), size: Size(width: 400, height: 300))
        let tossable = Tossable(element: element, destination: ReactiveProperty(Point(x: 960, y: 540)))
        engine.add(element, interactions: [tossable])
        #expect(element.gestures.drag.waiting == 1, "one deferred connection, not the three subscriptions of the chains")
        var positions: [Point] = []
        element.position.subscribe { positions.append($0) }
        let script = FingerScript(fingers: [.line(id: 1, from: Point(x: 960, y: 540), to: Point(x: 1300, y: 540), down: 0...0.2)])
        let outcome = Simulation().run(script.frames(rate: 100), through: engine, clock: clock)
        #expect(element.gestures.drag.waiting == 0)
        #expect(outcome.settled)
        #expect(positions.contains { $0.x > 1200 }, "dragged")
        #expect(element.position.value == Point(x: 960, y: 540), "tossed back to its destination")
    }
}
