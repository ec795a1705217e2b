import Testing
@testable import MotionCore

/// Attract mode: `screen.idle` and elements that spring home (`Resettable`), driven by the
/// engine's idle deadlines on a hand-driven clock and through ``Simulation``.
@Suite("Attract mode")
struct AttractModeTests {
    static func engine(idleAfter: Double = 2) -> (MotionEngine, ManualFrameClock) {
        let clock = ManualFrameClock(now: 0)
        return (MotionEngine(scene: Scene(size: Size(width: 1920, height: 1080)), clock: clock, idleAfter: idleAfter), clock)
    }

    static func frame(_ time: Double, _ contacts: (id: Int32, phase: TouchPhase, at: Point)...) -> TouchFrame {
        TouchFrame(time: time, contacts: contacts.map {
            TouchContact(slot: 0, trackingID: $0.id, phase: $0.phase, deviceX: 0, deviceY: 0, position: $0.at)
        })
    }

    /// The values `stream` took, with their times.
    static func values(_ updates: [PublishedUpdate], _ stream: String) -> [(Double, PublishedValue)] {
        updates.filter { $0.stream == stream }.map { ($0.time, $0.value) }
    }

    @Test("screen.idle turns true idle_after seconds after the last finger lifts, and false at the next touch")
    func idle() {
        let (engine, _) = Self.engine()
        let recorder = ReportRecorder()
        recorder.follow(engine)
        #expect(engine.lastValue("screen.idle") == .bool(false))
        #expect(engine.nextIdleDeadline == 2, "idle time counts from the start")
        let spot = Point(x: 100, y: 100)
        recorder.record(engine.process(Self.frame(1, (1, .began, spot))))
        #expect(engine.nextIdleDeadline == nil, "a finger is down")
        // Held still for ten seconds: someone is there, so the screen is not idle.
        recorder.record(engine.process(Self.frame(11, (1, .stationary, spot))))
        recorder.record(engine.advanceIdle(to: 11))
        #expect(!engine.isIdle)
        recorder.record(engine.process(Self.frame(11.5, (1, .ended, spot))))
        #expect(engine.nextIdleDeadline == 13.5)
        recorder.record(engine.advanceIdle(to: 13.4))
        #expect(!engine.isIdle, "not yet")
        recorder.record(engine.advanceIdle(to: 13.5))
        #expect(engine.isIdle)
        #expect(engine.nextIdleDeadline == nil, "nothing left to do until the next touch")
        recorder.record(engine.process(Self.frame(20, (2, .began, spot))))
        #expect(!engine.isIdle)
        let idle = Self.values(recorder.updates, "screen.idle")
        #expect(idle.map(\.0) == [13.5, 20])
        #expect(idle.map(\.1) == [.bool(true), .bool(false)])
    }

    @Test("a touch that misses every element still counts: the screen is touched, not an element")
    func touchOnTheScreen() {
        let (engine, _) = Self.engine()
        engine.add(card(), interactions: [Draggable()])
        engine.process(Self.frame(0.5, (1, .began, Point(x: 5, y: 5))))
        engine.process(Self.frame(1.5, (1, .ended, Point(x: 5, y: 5))))
        #expect(engine.nextIdleDeadline == 3.5)
    }

    @Test("an element with reset_after springs home, position, rotation and scale, once per idle period")
    func resetsHome() {
        let (engine, clock) = Self.engine(idleAfter: 60)
        let element = card()
        engine.add(element, interactions: [Draggable(), Resettable(element: element, after: 5)])
        let home = element.position.value
        // Dragged 300 px right; turned and scaled by a client, as `set` does.
        var script = [Self.frame(0, (1, .began, home))]
        for step in 1...30 { script.append(Self.frame(Double(step) / 60, (1, .moved, home + Point(x: Double(step) * 10, y: 0)))) }
        script.append(Self.frame(0.6, (1, .ended, home + Point(x: 300, y: 0))))
        let outcome = Simulation(frameRate: 60).run(script, through: engine, clock: clock, until: 0.7)
        #expect(outcome.endTime == 0.7)
        #expect(element.position.value.x > home.x + 250, "the drag moved it")
        element.rotation.value = 1
        element.scale.value = 2
        let moved = element.position.value

        #expect(engine.nextIdleDeadline == 5.6)
        let later = Simulation(frameRate: 60).run([], through: engine, clock: clock, until: 5.59)
        #expect(later.updates.isEmpty && element.position.value == moved, "not before reset_after")
        let reset = Simulation(frameRate: 60).run([], through: engine, clock: clock, until: 12)
        #expect(element.position.value.distance(to: home) < 1)
        #expect(abs(element.rotation.value) < 0.001 && abs(element.scale.value - 1) < 0.001)
        let starts = reset.updates.filter { $0.stream == "card.state" }
        #expect(starts.map(\.value) == [.text("active"), .text("atRest")])
        #expect(starts.first?.time == 5.6, "the springs start at the deadline")
        #expect(engine.nextIdleDeadline == 60.6, "the element went home; only screen.idle is left")
    }

    @Test("a finger on an element going home stops it there and takes over; the next idle period sends it home again")
    func touchStopsTheReset() {
        let (engine, clock) = Self.engine(idleAfter: 60)
        let element = card()
        engine.add(element, interactions: [Draggable(), Resettable(element: element, after: 1)])
        let home = element.position.value
        element.position.value = home + Point(x: 600, y: 0)
        _ = Simulation(frameRate: 60).run([], through: engine, clock: clock, until: 1.05)
        let halfway = element.position.value
        #expect(halfway.x < home.x + 600 && halfway.x > home.x + 1, "moving home: \(halfway)")
        // A finger lands on it: the springs stop at once, where it is.
        engine.process(Self.frame(1.05, (1, .began, halfway)))
        _ = Simulation(frameRate: 60).run([Self.frame(1.5, (1, .stationary, halfway))], through: engine, clock: clock, until: 1.5)
        #expect(element.position.value == halfway)
        engine.process(Self.frame(1.6, (1, .ended, halfway)))
        #expect(engine.nextIdleDeadline == 2.6, "armed again by the touch")
        _ = Simulation(frameRate: 60).run([], through: engine, clock: clock, until: 10)
        #expect(element.position.value.distance(to: home) < 1)
    }

    @Test("the same frames give the same attract-mode updates, run after run")
    func deterministic() {
        func run() -> [PublishedUpdate] {
            let (engine, clock) = Self.engine(idleAfter: 1.5)
            let element = card()
            engine.add(element, interactions: [Draggable(), Resettable(element: element, after: 2)])
            let home = element.position.value
            let frames = [Self.frame(0.1, (1, .began, home)), Self.frame(0.2, (1, .moved, home + Point(x: 200, y: 50))),
                          Self.frame(0.3, (1, .ended, home + Point(x: 200, y: 50)))]
            return Simulation(frameRate: 120).run(frames, through: engine, clock: clock, until: 6).updates
        }
        let first = run()
        #expect(first.contains { $0.stream == "screen.idle" && $0.value == .bool(true) && $0.time == 1.8 })
        #expect(first.contains { $0.stream == "card.position" && $0.time > 2.3 })
        #expect(run() == first)
    }
}
