import Foundation
import Testing
@testable import MotionCore

@Suite("Scene and engine")
struct EngineTests {
    @Test("hit testing uses the element's bounds as drawn: rotated and scaled, topmost first")
    func hitTesting() {
        let scene = Scene(size: Size(width: 1920, height: 1080))
        let wide = Element(id: "wide", center: Point(x: 500, y: 500), size: Size(width: 400, height: 100))
        scene.add(wide)
        #expect(scene.hitTest(Point(x: 680, y: 500)) === wide)
        #expect(scene.hitTest(Point(x: 500, y: 600)) === scene.container)
        // Turned a quarter, it is tall instead of wide.
        wide.rotation.value = .pi / 2
        #expect(scene.hitTest(Point(x: 680, y: 500)) === scene.container)
        #expect(scene.hitTest(Point(x: 500, y: 680)) === wide)
        // Scaled by 2, it reaches further.
        wide.scale.value = 2
        #expect(scene.hitTest(Point(x: 500, y: 880)) === wide)
        // Overlapping elements: the higher z wins; on a tie, the later one.
        let over = Element(id: "over", center: Point(x: 500, y: 500), size: Size(width: 50, height: 50), zOrder: 0)
        scene.add(over)
        #expect(scene.hitTest(Point(x: 500, y: 500)) === over)
        wide.zOrder.value = 1
        #expect(scene.hitTest(Point(x: 500, y: 500)) === wide)
    }

    @Test("a contact belongs to the element it landed on until it lifts, even when it leaves it; misses go to the screen")
    func ownership() {
        let (engine, clock) = makeEngine()
        let a = card("a", at: Point(x: 400, y: 400)), b = card("b", at: Point(x: 1400, y: 400))
        engine.add(a, interactions: [Draggable()])
        engine.add(b, interactions: [Draggable()])
        var screenTaps = 0
        engine.scene.container.needs(.tap)
        engine.scene.container.gestures.tap.stream.subscribe(next: { if $0.state == .recognized { screenTaps += 1 } })
        // A finger drags a across b's place: a follows, b stays.
        let script = FingerScript(fingers: [
            .line(id: 1, from: Point(x: 400, y: 400), to: Point(x: 1400, y: 400), down: 0...0.5),
            .line(id: 2, from: Point(x: 900, y: 900), to: Point(x: 900, y: 900), down: 0.7...0.75),
        ])
        _ = Simulation().run(script.frames(rate: 100), through: engine, clock: clock)
        #expect(a.position.value == Point(x: 1400, y: 400))
        #expect(b.position.value == Point(x: 1400, y: 400), "b was not touched")
        #expect(screenTaps == 1)
    }

    @Test("a report given back is filled again in its own storage; given back after the next report began, it changes nothing")
    func reportGivenBack() throws {
        let (engine, _) = makeEngine()
        engine.add(card(), interactions: [Draggable()])
        let frames = FingerScript(fingers: [.line(id: 1, from: Point(x: 960, y: 540), to: Point(x: 1160, y: 540), down: 0...0.2)]).frames(rate: 100)
        try #require(frames.count >= 12)
        func storage(_ report: FrameReport) -> UnsafePointer<PublishedUpdate>? { report.values.withUnsafeBufferPointer { $0.baseAddress } }

        // A few frames for the arrays to grow to what a frame needs.
        for frame in frames[0..<5] {
            var report = engine.process(frame)
            engine.takeBack(&report)
        }
        var report = engine.process(frames[5])
        let kept = try #require(storage(report), "a moving finger moves the card: values to publish")
        for frame in frames[6..<10] {
            engine.takeBack(&report)
            #expect(report.values.isEmpty, "what the engine gives in exchange is empty")
            report = engine.process(frame)
            #expect(storage(report) == kept, "the report was filled in the storage given back")
        }

        // Given back after an element's removal began the next report: ignored, so that what
        // that report gathered is still reported.
        engine.takeBack(&report)
        var handedOut = engine.process(frames[10])
        try #require(!handedOut.values.isEmpty)
        engine.remove("card")
        engine.takeBack(&handedOut)
        #expect(!handedOut.values.isEmpty, "the report was not taken back")
        let next = engine.tick(at: frames[10].time)
        #expect(!next.removedStreams.isEmpty, "the removal is reported: \(next.removedStreams)")
    }

    @Test("an element kept after its engine went: writing its values and turning it off reach no one; a subscription kept after its event stream went ends quietly")
    func elementOutlivesItsEngine() throws {
        let element = card()
        var subscription: Subscription?
        weak var gone: MotionEngine?
        do {
            let (engine, _) = makeEngine()
            engine.add(element, interactions: [Draggable()])
            let frames = FingerScript(fingers: [.line(id: 1, from: Point(x: 960, y: 540), to: Point(x: 1000, y: 540), down: 0...0.05)]).frames(rate: 100)
            for frame in frames { _ = engine.process(frame) }
            gone = engine
        }
        try #require(gone == nil, "the engine is gone, not kept by its scene")
        element.position.value = Point(x: 1, y: 2)
        element.enabled.value = false
        #expect(element.position.value == Point(x: 1, y: 2))

        weak var goneStream: EventStream<Int>?
        var received: [Int] = []
        do {
            let stream = EventStream<Int>()
            subscription = stream.stream.subscribe(next: { received.append($0) })
            stream.send(1)
            goneStream = stream
        }
        try #require(goneStream == nil, "the stream is gone, not kept by its subscription")
        subscription?.unsubscribe()
        #expect(received == [1])
    }

    @Test("each changed property is published once per frame, with the frame's time, only when it changed")
    func coalescing() {
        let (engine, clock) = makeEngine()
        let element = card()
        engine.add(element, interactions: [DirectlyManipulable()])
        let script = FingerScript(fingers: [
            .circle(id: 1, centre: Point(x: 960, y: 540), radius: 100, from: 0, turn: 0.5, down: 0...0.3),
            .circle(id: 2, centre: Point(x: 960, y: 540), radius: 100, from: .pi, turn: 0.5, down: 0...0.3),
        ])
        let frames = script.frames(rate: 100)
        let batches = Simulation().run(frames, through: engine, clock: clock).reports.map(\.values).filter { !$0.isEmpty }
        for batch in batches {
            #expect(Set(batch.map(\.stream)).count == batch.count, "a stream twice in one frame")
            #expect(Set(batch.map(\.time)).count == 1)
            #expect(frames.contains { $0.time == batch[0].time })
        }
        let streams = batches.flatMap { $0 }.map(\.stream)
        #expect(streams.contains("card.rotation") && streams.contains("card.state"))
        #expect(!streams.contains("card.size"), "unchanged properties are not published")
        #expect(!streams.contains("card.position"), "turning about its centre does not move it")
        let states = batches.flatMap { $0 }.filter { $0.stream == "card.state" }.map(\.value)
        #expect(states == [.text("active"), .text("atRest")])
    }

    @Test("elements can be added and removed while the engine runs; removing one cancels its gestures, for its interactions and its streams' subscribers")
    func addRemove() {
        let (engine, clock) = makeEngine()
        let a = card("a", at: Point(x: 400, y: 400))
        engine.add(a, interactions: [Draggable()])
        var dragStates: [RecognitionState] = []
        a.gestures.drag.stream.subscribe(next: { dragStates.append($0.state) })
        var reported: [String] = []
        func report(_ events: [FrameEvent]) {
            for case .gesture(_, let stream, let element, let gesture) in events { reported.append("\(stream) \(element) \(gesture.state)") }
        }
        let script = FingerScript(fingers: [.line(id: 1, from: Point(x: 400, y: 400), to: Point(x: 700, y: 400), down: 0...0.6)])
        let frames = script.frames(rate: 100)
        report(Simulation().run(Array(frames.prefix(30)), through: engine, clock: clock).events)
        #expect(a.position.value.x > 500)

        let b = card("b", at: Point(x: 1400, y: 800))
        engine.add(b, interactions: [Draggable()])
        #expect(engine.scene.element("b") === b)
        engine.remove("a")
        let removal = engine.tick(at: clock.now)
        report(removal.events)
        #expect(removal.removedStreams.count >= 7, "a's streams went with it: its six values and its drag")
        #expect(dragStates.last == .cancelled)
        #expect(reported.last == "a.drag a cancelled", "\(reported)")
        #expect(engine.scene.element("a") == nil)
        #expect(engine.streams.allSatisfy { !$0.stream.hasPrefix("a.") })
        // Nothing of it is kept: a UI adding and removing elements under new ids must not grow it.
        #expect(engine.lastValue("a.position") == nil && engine.lastValue("b.position") != nil)
        // The rest of the finger's frames are ignored: no element, no crash.
        let position = a.position.value
        _ = Simulation().run(Array(frames.dropFirst(30)), through: engine, clock: clock)
        #expect(a.position.value == position)
        #expect(engine.state.value == .atRest)
    }

    @Test("turning an element off during its drag cancels the drag: the fingers move nothing more, and a destination set meanwhile stands at the lift")
    func disabledDuringDrag() {
        let (engine, clock) = makeEngine()
        let element = card()
        // Snap points: a fling to the right would choose "right", and move the destination there.
        let left = Point(x: 300, y: 540), right = Point(x: 1620, y: 540)
        let tossable = Tossable(element: element, destination: ReactiveProperty(left), snapPoints: ["left": left, "right": right])
        engine.add(element, interactions: [tossable])
        var dragStates: [RecognitionState] = []
        element.gestures.drag.stream.subscribe(next: { dragStates.append($0.state) })
        var reported: [String] = []
        func report(_ events: [FrameEvent]) {
            for case .gesture(_, let stream, let element, let gesture) in events { reported.append("\(stream) \(element) \(gesture.state)") }
        }
        // A fast fling to the right, half of it before the element is turned off.
        let frames = FingerScript(fingers: [.line(id: 1, from: Point(x: 960, y: 540), to: Point(x: 1500, y: 540), down: 0...0.3)]).frames(rate: 100)
        report(Simulation().run(Array(frames.prefix(15)), through: engine, clock: clock).events)
        #expect(dragStates.contains(.began) && dragStates.last == .changed, "\(dragStates)")
        let held = element.position.value
        #expect(held.x > 1000, "the drag moved it: \(held)")

        let chosen = Point(x: 700, y: 300)
        tossable.destination.value = chosen
        element.enabled.value = false
        report(engine.tick(at: clock.now).events)
        #expect(dragStates.last == .cancelled, "\(dragStates)")
        #expect(reported.last == "card.drag card cancelled", "\(reported)")

        // The rest of the fling, to the lift: it neither drags the element nor tosses it.
        let rest = Simulation().run(Array(frames.dropFirst(15)), through: engine, clock: clock)
        report(rest.events)
        #expect(dragStates.last == .cancelled, "nothing after the cancel: \(dragStates)")
        #expect(reported.last == "card.drag card cancelled", "\(reported)")
        #expect(rest.settled)
        #expect(tossable.destination.value == chosen, "the lift's throw moved the destination to \(tossable.destination.value)")
        #expect(element.position.value.distance(to: chosen) < 1, "it rests at \(element.position.value)")
        let positions = rest.updates.filter { $0.stream == "card.position" }.compactMap { update -> Point? in
            if case .point(let point) = update.value { return point } else { return nil }
        }
        #expect(!positions.isEmpty && positions.allSatisfy { $0.x <= held.x }, "it followed the finger on: \(positions.prefix(5))")

        // Turned on again, the next touch drags it.
        element.enabled.value = true
        let again = FingerScript(fingers: [.line(id: 2, from: chosen, to: chosen + Point(x: 100, y: 0), down: 0...0.2)]).frames(rate: 100)
            .map { TouchFrame(time: $0.time + clock.now + 1, contacts: $0.contacts) }
        _ = Simulation().run(Array(again.dropLast()), through: engine, clock: clock)
        #expect(dragStates.last == .changed && element.position.value.x > chosen.x + 50, "\(dragStates) \(element.position.value)")
    }

    /// Within one process: Swift's hash seed is fixed per process, so this cannot see output
    /// that follows a Set's or a Dictionary's order; HashSeedTests (CommandLineTests) compares
    /// processes with different seeds.
    @Test("the same frames and ticks give the same updates, bit for bit, run after run in one process")
    func determinism() throws {
        func run() -> [PublishedUpdate] {
            let (engine, clock) = makeEngine()
            let element = card()
            engine.add(element, interactions: [Tossable(element: element, destination: ReactiveProperty(Point(x: 960, y: 540)))])
            let other = card("other", at: Point(x: 300, y: 300))
            engine.add(other, interactions: [DirectlyManipulable()])
            let script = FingerScript(fingers: [
                .line(id: 1, from: Point(x: 960, y: 540), to: Point(x: 1400, y: 700), down: 0...0.25),
                .circle(id: 2, centre: Point(x: 300, y: 300), radius: 80, from: 0, turn: 1, down: 0.1...0.6),
                .circle(id: 3, centre: Point(x: 300, y: 300), radius: 80, from: .pi, turn: 1, down: 0.1...0.6),
            ])
            return Simulation().run(script.frames(rate: 90), through: engine, clock: clock).updates
        }
        let first = run(), second = run()
        #expect(first.count > 50)
        #expect(first == second)
        #expect(first.map { "\($0.time.bitPattern)" } == second.map { "\($0.time.bitPattern)" })
    }

    @Test("the engine is at rest, and the clock idle, when nothing moves")
    func restAndIdle() {
        let (engine, clock) = makeEngine()
        let element = card()
        engine.add(element, interactions: [Tossable(element: element, destination: ReactiveProperty(Point(x: 960, y: 540)))])
        #expect(engine.state.value == .atRest && !clock.isRunning)
        let script = FingerScript(fingers: [.line(id: 1, from: Point(x: 960, y: 540), to: Point(x: 1200, y: 540), down: 0...0.2)])
        let outcome = Simulation().run(script.frames(rate: 100), through: engine, clock: clock)
        #expect(outcome.settled && engine.state.value == .atRest && !clock.isRunning)
        #expect(element.position.value == Point(x: 960, y: 540))
    }
}
