import Foundation
import Testing
@testable import MotionCore

/// An engine on a 1920 × 1080 screen with a hand-driven clock.
func makeEngine() -> (MotionEngine, ManualFrameClock) {
    let clock = ManualFrameClock(now: 0)
    return (MotionEngine(scene: Scene(size: Size(width: 1920, height: 1080)), clock: clock), clock)
}

/// A card: 400 × 300 centred at (960, 540).
func card(_ id: String = "card", at center: Point = Point(x: 960, y: 540)) -> Element {
    Element(id: id, center: center, size: Size(width: 400, height: 300))
}

@Suite("Interactions")
struct InteractionTests {
    @Test("a drag follows the finger exactly")
    func dragFollowsFinger() {
        let (engine, clock) = makeEngine()
        let element = card()
        engine.add(element, interactions: [Draggable()])
        let script = FingerScript(fingers: [.line(id: 1, from: Point(x: 900, y: 500), to: Point(x: 1300, y: 200), down: 0...0.5)])
        var maxError = 0.0
        for frame in script.frames(rate: 120) {
            engine.process(frame)
            clock.tick(at: frame.time)
            // The point grabbed, 60 px left of and 40 px above the centre, stays under the finger.
            let finger = frame.contacts[0].position
            if frame.time > 0.1 { maxError = Swift.max(maxError, (element.position.value - Point(x: 60, y: 40)).distance(to: finger)) }
        }
        #expect(maxError < 1e-9)
        #expect(element.position.value.distance(to: Point(x: 1360, y: 240)) < 1e-9)
    }

    @Test("rubber-banding outside the bounds matches the reference values, and the element springs back on release")
    func rubberBanding() throws {
        let (engine, clock) = makeEngine()
        let element = card(at: Point(x: 50, y: 500))
        // The centre may go from x = 0 to 100: dragging it to 110, 148, 200 and 1000 shows the band.
        engine.add(element, interactions: [Draggable(bounds: Rect(x: 0, y: 0, width: 100, height: 1080), maxLength: 48)])
        var frames: [TouchFrame] = []
        let xs: [Double] = [50, 110, 148, 200, 1000]
        for (index, x) in xs.enumerated() {
            frames.append(TouchFrame(time: Double(index) * 0.05, contacts: [
                TouchContact(slot: 0, trackingID: 1, phase: index == 0 ? .began : .moved, deviceX: 0, deviceY: 0, position: Point(x: x, y: 500)),
            ]))
        }
        var positions: [Double] = []
        for frame in frames {
            engine.process(frame)
            positions.append(element.position.value.x)
        }
        let expected = [104.934579, 117.032258, 125.631068, 143.756906]
        for (value, reference) in zip(positions.dropFirst(), expected) {
            #expect(Swift.abs(value - reference) < 1e-6, "\(value) vs \(reference)")
        }
        // Lift: the spring brings the centre back to x = 100.
        engine.process(TouchFrame(time: 0.25, contacts: [TouchContact(slot: 0, trackingID: 1, phase: .ended, deviceX: 0, deviceY: 0, position: Point(x: 1000, y: 500))]))
        let outcome = Simulation().run([], through: engine, clock: clock)
        #expect(outcome.settled)
        #expect(element.position.value == Point(x: 100, y: 500))
    }

    @Test("a toss with a known release velocity follows the closed-form spring to 1e-6")
    func toss() throws {
        let (engine, clock) = makeEngine()
        let element = card(at: Point(x: 300, y: 300))
        let destination = ReactiveProperty(Point(x: 300, y: 300))
        engine.add(element, interactions: [Tossable(element: element, destination: destination)])
        // A straight drag at a constant 1500 px/s right and 600 px/s down, released at 0.3 s.
        let script = FingerScript(fingers: [.line(id: 1, from: Point(x: 300, y: 300), to: Point(x: 750, y: 480), down: 0...0.3)])
        var frames = script.frames(rate: 100)
        let release = frames.removeLast()
        _ = Simulation(frameRate: 120).run(frames, through: engine, clock: clock)
        engine.process(release)
        let releasePosition = element.position.value
        let velocity = Point(x: 1500, y: 600)
        #expect(releasePosition.distance(to: Point(x: 750, y: 480)) < 1e-9)
        // From the release, the element follows the spring from there, at that velocity, home.
        let curve = SpringCurve(from: releasePosition, velocity: velocity, to: destination.value, configuration: .standard)
        var checked = 0
        for k in 1...60 {
            let time = 0.3 + Double(k) / 120
            clock.tick(at: time)
            guard clock.isRunning else { break }
            #expect(element.position.value.distance(to: curve.value(at: time - 0.3)) < 1e-6, "at \(time)")
            checked += 1
        }
        #expect(checked > 30)
    }

    @Test("snap points: a fling toward a corner picks that corner")
    func snapPoints() throws {
        let corners: [String: Point] = [
            "top-left": Point(x: 200, y: 150), "top-right": Point(x: 1720, y: 150),
            "bottom-left": Point(x: 200, y: 930), "bottom-right": Point(x: 1720, y: 930),
        ]
        // From the top-left corner, a 0.1 s flick at each velocity; the release coasts about
        // half a second's worth of it.
        for (corner, velocity) in [("top-right", Point(x: 3000, y: 0)), ("bottom-right", Point(x: 3000, y: 1500)),
                                   ("bottom-left", Point(x: 0, y: 1500)), ("top-left", Point(x: 600, y: 300))] {
            let (engine, clock) = makeEngine()
            let element = Element(id: "pip", center: corners["top-left"]!, size: Size(width: 320, height: 180))
            let tossable = Tossable(element: element, destination: ReactiveProperty(.zero), snapPoints: corners)
            engine.add(element, interactions: [tossable])
            #expect(tossable.snapPoint.value == "top-left" && !clock.isRunning, "starts at rest on the nearest snap point")
            let start = corners["top-left"]!
            let script = FingerScript(fingers: [.line(id: 1, from: start, to: start + velocity * 0.1, down: 1...1.1)])
            let outcome = Simulation().run(script.frames(rate: 120), through: engine, clock: clock)
            #expect(tossable.snapPoint.value == corner, "flung at \(velocity)")
            #expect(outcome.settled)
            #expect(element.position.value == corners[corner], "\(corner)")
        }
    }

    @Test("Attach retargeted mid-flight keeps position and velocity continuous")
    func attachRetarget() throws {
        let (engine, clock) = makeEngine()
        let element = card(at: Point(x: 100, y: 100))
        let destination = ReactiveProperty(Point(x: 100, y: 100))
        let attach = Attach(position: element.position, to: destination)
        engine.add(element, interactions: [attach])
        var samples: [(Double, Point)] = []
        let recorder = ReportRecorder()
        recorder.follow(engine)
        destination.value = Point(x: 900, y: 500)
        for k in 1...24 { clock.tick(at: Double(k) / 120) }
        // Retarget between frames, at 0.205 s.
        clock.now = 0.205
        destination.value = Point(x: 400, y: 900)
        for k in 25...240 { clock.tick(at: Double(k) / 120) }
        #expect(element.position.value == Point(x: 400, y: 900))
        for update in recorder.updates where update.stream == "card.position" {
            if case .point(let p) = update.value { samples.append((update.time, p)) }
        }

        // Compare with the physics: the first segment, then from its state at 0.205 s on.
        let first = SpringCurve(from: Point(x: 100, y: 100), velocity: .zero, to: Point(x: 900, y: 500), configuration: .standard)
        let second = SpringCurve(from: first.value(at: 0.205), velocity: first.velocity(at: 0.205), to: Point(x: 400, y: 900), configuration: .standard)
        for (time, position) in samples.dropLast() {
            let expected = time <= 0.205 ? first.value(at: time) : second.value(at: time - 0.205)
            #expect(position.distance(to: expected) < 1e-9, "at \(time)")
        }
        // The second segment starts from the first's position and velocity at 0.205 s, so
        // matching it to 1e-9 on both sides is continuity of both.
        #expect(samples.contains { $0.0 < 0.205 } && samples.contains { $0.0 > 0.205 })
    }

    @Test("DirectlyManipulable: under a rigid two-finger motion the element's points stay under the fingers; a second finger landing moves nothing")
    func directManipulation() throws {
        let (engine, clock) = makeEngine()
        let element = card()
        engine.add(element, interactions: [DirectlyManipulable()])
        // Finger 1 lands alone and holds still; finger 2 lands 0.1 s later; then both move
        // rigidly: translate by (200, -100), turn 70°, and spread by 1.5 about their centroid.
        let a0 = Point(x: 900, y: 500), b0 = Point(x: 1100, y: 620)
        func rigid(_ p: Point, _ t: Double) -> Point {
            let progress = Swift.max(0, Swift.min(1, (t - 0.2) / 0.6))
            let centre = (a0 + b0) / 2
            let angle = 70 * Double.pi / 180 * progress, scale = 1 + 0.5 * progress
            let r = (p - centre) * scale
            return centre + Point(x: 200, y: -100) * progress + Point(x: r.x * cos(angle) - r.y * sin(angle), y: r.x * sin(angle) + r.y * cos(angle))
        }
        let script = FingerScript(fingers: [
            FingerScript.Finger(id: 1, down: 0...1) { rigid(a0, $0) },
            FingerScript.Finger(id: 2, down: 0.1...1) { rigid(b0, $0) },
        ])
        // The element's own points under each finger, at touch-down.
        func local(_ p: Point) -> Point {
            let offset = p - element.position.value
            let c = cos(-element.rotation.value), s = sin(-element.rotation.value)
            return Point(x: offset.x * c - offset.y * s, y: offset.x * s + offset.y * c) / element.scale.value
        }
        func screen(_ l: Point) -> Point {
            let c = cos(element.rotation.value), s = sin(element.rotation.value), k = element.scale.value
            return element.position.value + Point(x: (l.x * c - l.y * s) * k, y: (l.x * s + l.y * c) * k)
        }
        let grabbedA = local(a0), grabbedB = local(b0)
        var worst = 0.0
        for frame in script.frames(rate: 120) {
            let before = element.position.value
            engine.process(frame)
            clock.tick(at: frame.time)
            if frame.contacts.contains(where: { $0.trackingID == 2 && $0.phase == .began }) {
                #expect(element.position.value == before, "the second finger landing moved the element")
            }
            for contact in frame.contacts where contact.phase.isActive {
                let grabbed = contact.trackingID == 1 ? grabbedA : grabbedB
                worst = Swift.max(worst, screen(grabbed).distance(to: contact.position))
            }
        }
        #expect(worst < 1, "a finger drifted \(worst) px from its point")
        #expect(Swift.abs(element.rotation.value - 70 * Double.pi / 180) < 1e-9)
        #expect(Swift.abs(element.scale.value - 1.5) < 1e-9)
    }

    @Test("Rotatable and Scalable add and multiply; Scalable springs back inside its limits")
    func rotatableScalable() throws {
        let (engine, clock) = makeEngine()
        let element = card()
        element.rotation.value = 0.25
        let scalable = Scalable(minimum: 0.5, maximum: 2)
        engine.add(element, interactions: [Rotatable(), scalable])
        // Turn 60° and spread three times wider: past the maximum of 2.
        let script = FingerScript(fingers: [
            FingerScript.Finger(id: 1, down: 0...0.5) { t in Point(x: 960, y: 540) + Point(x: -80 * (1 + 4 * t) * cos(t * 2 * .pi / 3), y: -80 * (1 + 4 * t) * sin(t * 2 * .pi / 3)) },
            FingerScript.Finger(id: 2, down: 0...0.5) { t in Point(x: 960, y: 540) + Point(x: 80 * (1 + 4 * t) * cos(t * 2 * .pi / 3), y: 80 * (1 + 4 * t) * sin(t * 2 * .pi / 3)) },
        ])
        let frames = script.frames(rate: 100)
        _ = Simulation().run(Array(frames.dropLast()), through: engine, clock: clock)
        #expect(Swift.abs(element.rotation.value - (0.25 + Double.pi / 3 * 0.99)) < 0.02)
        let stretched = element.scale.value
        #expect(stretched > 2 && stretched < 2.5, "rubber-banded past 2: \(stretched)")
        #expect(Swift.abs(stretched - rubberBand(2.98, min: 0.5, max: 2, maxLength: 0.5)) < 0.05)
        let outcome = Simulation().run([frames.last!], through: engine, clock: clock)
        #expect(outcome.settled)
        #expect(element.scale.value == 2)
    }

    @Test("SetPositionOnTap moves the element to a tap on the screen; ChangeDirection follows the release")
    func tapAndDirection() throws {
        let (engine, clock) = makeEngine()
        let marker = Element(id: "marker", center: Point(x: 100, y: 100), size: Size(width: 50, height: 50))
        engine.add(marker, interactions: [SetPositionOnTap(taps: engine.scene.container.gestures.tap)])
        engine.scene.container.needs(.tap)
        let drawer = Element(id: "drawer", center: Point(x: 960, y: 900), size: Size(width: 800, height: 200))
        let direction = ChangeDirection(minimumVelocity: 100)
        engine.add(drawer, interactions: [direction])
        let tap = FingerScript(fingers: [.line(id: 1, from: Point(x: 1500, y: 300), to: Point(x: 1500, y: 300), down: 0...0.08)])
        let flick = FingerScript(fingers: [.line(id: 2, from: Point(x: 960, y: 950), to: Point(x: 960, y: 800), down: 1...1.1)])
        _ = Simulation().run(tap.frames(rate: 100) + flick.frames(rate: 100), through: engine, clock: clock)
        #expect(marker.position.value == Point(x: 1500, y: 300))
        #expect(direction.direction.value == .backward, "flicked up")
    }
}

@Suite("Interaction states")
struct InteractionStateTests {
    @Test("each interaction reports its own state; the element's and the runtime's aggregate them")
    func states() throws {
        let (engine, clock) = makeEngine()
        let element = card()
        let tossable = Tossable(element: element, destination: ReactiveProperty(Point(x: 960, y: 540)))
        let rotatable = Rotatable()
        engine.add(element, interactions: [tossable, rotatable])
        var tossStates: [MotionState] = [], elementStates: [MotionState] = []
        tossable.state.subscribe { tossStates.append($0) }
        element.state.subscribe { elementStates.append($0) }
        let script = FingerScript(fingers: [.line(id: 1, from: Point(x: 960, y: 540), to: Point(x: 1300, y: 540), down: 0...0.2)])
        let outcome = Simulation().run(script.frames(rate: 100), through: engine, clock: clock)
        #expect(outcome.settled)
        #expect(tossStates == [.atRest, .active, .atRest], "dragged, then sprung home, then at rest")
        #expect(elementStates == [.atRest, .active, .atRest])
        #expect(rotatable.state.value == .atRest)
        #expect(try #require(engine.runtime(of: "card")).state.value == .atRest)
    }
}
