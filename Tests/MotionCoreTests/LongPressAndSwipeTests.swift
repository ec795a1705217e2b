import Foundation
import Testing
@testable import MotionCore

/// Long press and swipe on synthetic fingers: held, multi-finger, and the near misses (a tap,
/// a slow drag, fingers moving apart). A panel of 4 px/mm, unless it says it has no resolution.
@Suite("Long press and swipe")
struct LongPressAndSwipeTests {
    static let panel = (x: 4.0, y: 4.0)

    static func still(_ id: Int32, at point: Point, _ down: ClosedRange<Double>) -> FingerScript.Finger {
        FingerScript.Finger(id: id, down: down) { _ in point }
    }

    static func pressEvents(_ fingers: [FingerScript.Finger], touches: Int = 1, pixels: Bool = false) -> [LongPressEvent] {
        var recognizer = LongPressRecognizer(touches: touches)
        let script = FingerScript(fingers: fingers, pixelsPerMillimetre: pixels ? nil : panel)
        return script.frames(rate: 60).compactMap { recognizer.update($0) }
    }

    // MARK: Long press

    @Test("a finger held still begins a long press when the duration is reached, and ends it at the lift")
    func held() throws {
        let events = Self.pressEvents([Self.still(1, at: Point(x: 400, y: 300), 1.0...2.0)])
        #expect(events.map(\.state) == [.began, .ended])
        let began = try #require(events.first)
        #expect(began.time >= 1.5 && began.time <= 1.5 + 1.0 / 60 + 1e-9, "began at \(began.time)")
        #expect(began.location == Point(x: 400, y: 300) && began.touches == 1)
        #expect(abs(events[1].duration - 1.0) < 1e-9)
    }

    @Test("a finger that sends no frames while held still begins when woken at the deadline")
    func heldWithoutFrames() {
        var recognizer = LongPressRecognizer()
        let landing = TouchFrame(time: 10, contacts: [FingerScript(fingers: []).contact(slot: 0, id: 7, phase: .began, at: Point(x: 50, y: 60))])
        #expect(recognizer.update(landing) == nil)
        #expect(recognizer.deadline == 10.5)
        #expect(recognizer.advance(to: 10.49) == nil)
        let began = recognizer.advance(to: 10.5)
        #expect(began?.state == .began && began?.time == 10.5 && began?.location == Point(x: 50, y: 60))
        #expect(recognizer.deadline == nil && recognizer.isHeld)
        #expect(recognizer.advance(to: 11) == nil, "begins once")
    }

    @Test("a tap is not a long press: nothing at all is said of it")
    func tap() {
        #expect(Self.pressEvents([Self.still(1, at: Point(x: 400, y: 300), 1.0...1.1)]).isEmpty)
    }

    @Test("a finger moving beyond the slop before the time fails the press; within it, the press begins", arguments: [
        (5.0, false), (7.0, true),
    ])
    func slop(millimetres: Double, fails: Bool) {
        let moving = FingerScript.Finger.line(id: 1, from: Point(x: 400, y: 300), to: Point(x: 400 + millimetres * 4, y: 300), down: 1.0...1.4)
        let thenStill = Self.still(1, at: Point(x: 400 + millimetres * 4, y: 300), 1.4...2.0)
        var recognizer = LongPressRecognizer()
        let frames = FingerScript(fingers: [moving], pixelsPerMillimetre: Self.panel).frames(rate: 60).dropLast()
            + FingerScript(fingers: [thenStill], pixelsPerMillimetre: Self.panel).frames(rate: 60).dropFirst().map { frame in
                var frame = frame
                frame.contacts = frame.contacts.map { var c = $0; if c.phase == .began { c.phase = .stationary }; return c }
                return frame
            }
        let states = frames.compactMap { recognizer.update($0) }.map(\.state)
        #expect(states == (fails ? [.failed] : [.began, .ended]), "\(states)")
    }

    @Test("three fingers: timed from the third landing, and two are not enough")
    func threeFingers() throws {
        let fingers = [Self.still(1, at: Point(x: 100, y: 100), 1.0...2.5), Self.still(2, at: Point(x: 200, y: 100), 1.2...2.5),
                       Self.still(3, at: Point(x: 300, y: 100), 1.4...2.5)]
        let events = Self.pressEvents(fingers, touches: 3)
        #expect(events.map(\.state) == [.began, .ended])
        let began = try #require(events.first)
        #expect(began.time >= 1.9 && began.time < 1.92 && began.touches == 3, "\(began)")
        #expect(Self.pressEvents(Array(fingers.prefix(2)), touches: 3).isEmpty)
    }

    @Test("once held, the fingers may move: changed with the centroid, ended with the most fingers")
    func pressAndDrag() {
        let finger = FingerScript.Finger(id: 1, down: 1.0...2.0) { t in t < 1.6 ? Point(x: 100, y: 100) : Point(x: 100 + (t - 1.6) * 500, y: 100) }
        let events = Self.pressEvents([finger])
        #expect(events.first?.state == .began && events.last?.state == .ended)
        let changes = events.filter { $0.state == .changed }
        #expect(changes.count > 10 && changes.last!.location.x > 250)
    }

    @Test("on a panel without resolution the slop is in pixels")
    func pixels() {
        let small = FingerScript.Finger.line(id: 1, from: Point(x: 0, y: 0), to: Point(x: 50, y: 0), down: 1.0...2.0)
        let large = FingerScript.Finger.line(id: 1, from: Point(x: 0, y: 0), to: Point(x: 80, y: 0), down: 1.0...2.0)
        let held = Self.pressEvents([small], pixels: true).map(\.state)
        #expect(held.first == .began && held.last == .ended && !held.contains(.failed), "\(held)")
        #expect(Self.pressEvents([large], pixels: true).map(\.state) == [.failed])
    }

    // MARK: Swipe

    static func swipes(_ fingers: [FingerScript.Finger], pixels: Bool = false) -> [SwipeEvent] {
        var recognizer = SwipeRecognizer()
        return FingerScript(fingers: fingers, pixelsPerMillimetre: pixels ? nil : panel).frames(rate: 60).compactMap { recognizer.update($0) }
    }

    @Test("one finger, 60 mm to the right in 0.2 s: a swipe right, with its distance and velocity in pixels")
    func swipeRight() throws {
        let events = Self.swipes([.line(id: 1, from: Point(x: 100, y: 500), to: Point(x: 340, y: 500), down: 1.0...1.2)])
        let swipe = try #require(events.first)
        #expect(events.count == 1 && swipe.direction == .right && swipe.touches == 1 && swipe.state == .recognized)
        #expect(abs(swipe.distance - 240) < 1e-6)
        #expect(abs(swipe.velocity.x - 1200) < 1e-6 && abs(swipe.velocity.y) < 1e-9)
    }

    @Test("three fingers up together: a three-finger swipe up", arguments: SwipeDirection.allCases)
    func threeFingerSwipe(direction: SwipeDirection) throws {
        let step: Point = switch direction {
        case .left: Point(x: -200, y: 0)
        case .right: Point(x: 200, y: 0)
        case .up: Point(x: 0, y: -200)
        case .down: Point(x: 0, y: 200)
        }
        let fingers = (0..<3).map { i -> FingerScript.Finger in
            let start = Point(x: 400 + Double(i) * 60, y: 400)
            return .line(id: Int32(i + 1), from: start, to: start + step, down: (1.0 + Double(i) * 0.01)...1.25)
        }
        let swipe = try #require(Self.swipes(fingers).first)
        #expect(swipe.direction == direction && swipe.touches == 3)
    }

    @Test("near misses are not swipes: a slow drag, fingers moving apart, a diagonal, too short, a tap, six fingers")
    func nearMisses() {
        let origin = Point(x: 500, y: 500)
        #expect(Self.swipes([.line(id: 1, from: origin, to: origin + Point(x: 240, y: 0), down: 1.0...3.0)]).isEmpty, "a slow drag")
        #expect(Self.swipes([.line(id: 1, from: origin, to: origin + Point(x: -200, y: 0), down: 1.0...1.2),
                             .line(id: 2, from: origin + Point(x: 40, y: 0), to: origin + Point(x: 440, y: 0), down: 1.0...1.2)]).isEmpty,
                "fingers moving apart")
        #expect(Self.swipes([.line(id: 1, from: origin, to: origin + Point(x: 200, y: 200), down: 1.0...1.2)]).isEmpty, "a diagonal")
        #expect(Self.swipes([.line(id: 1, from: origin, to: origin + Point(x: 40, y: 0), down: 1.0...1.05)]).isEmpty, "10 mm")
        #expect(Self.swipes([Self.still(1, at: origin, 1.0...1.1)]).isEmpty, "a tap")
        let six = (0..<6).map { i in FingerScript.Finger.line(id: Int32(i + 1), from: origin + Point(x: Double(i) * 30, y: 0),
                                                             to: origin + Point(x: Double(i) * 30, y: -300), down: 1.0...1.2) }
        #expect(Self.swipes(six).isEmpty, "six fingers")
        #expect(Self.swipes(Array(six.prefix(5))).first?.touches == 5, "five are a swipe")
    }

    @Test("a swipe within 30° of its axis counts, beyond it does not")
    func angle() {
        let origin = Point(x: 500, y: 500)
        func swipe(degrees: Double) -> SwipeDirection? {
            let r = degrees * Double.pi / 180
            return Self.swipes([.line(id: 1, from: origin, to: origin + Point(x: 300 * cos(r), y: 300 * sin(r)), down: 1.0...1.2)]).first?.direction
        }
        #expect(swipe(degrees: 25) == .right && swipe(degrees: -25) == .right)
        #expect(swipe(degrees: 35) == nil && swipe(degrees: 90) == .down && swipe(degrees: -90) == .up && swipe(degrees: 180) == .left)
    }

    @Test("on a panel without resolution, distance and speed are in pixels")
    func swipeInPixels() {
        #expect(Self.swipes([.line(id: 1, from: Point(x: 100, y: 100), to: Point(x: 100, y: 250), down: 1.0...1.1)], pixels: true).first?.direction == .down)
        #expect(Self.swipes([.line(id: 1, from: Point(x: 100, y: 100), to: Point(x: 100, y: 180), down: 1.0...1.05)], pixels: true).isEmpty, "80 px")
        #expect(Self.swipes([.line(id: 1, from: Point(x: 100, y: 100), to: Point(x: 100, y: 250), down: 1.0...1.3)], pixels: true).isEmpty, "500 px/s")
    }
}

/// The new recognizers in a ``GestureSet``: the long press and the tap exclude each other,
/// and the set is woken for a long press held still.
@Suite("Long press in a gesture set")
struct LongPressInGestureSetTests {
    @Test("when a long press begins, the tap in progress fails (even with a tap allowed to last longer)")
    func longPressFailsTap() {
        var thresholds = GestureThresholds()
        thresholds.tapMaximumDuration = 2
        var set = GestureSet([.tap, .longPress], thresholds: thresholds)
        let frames = FingerScript(fingers: [LongPressAndSwipeTests.still(1, at: Point(x: 100, y: 100), 1.0...2.0)]).frames(rate: 60)
        let events = frames.flatMap { set.update($0) }
        #expect(events.map(\.kind) == [.longPress, .tap, .longPress])
        #expect(events.map(\.state) == [.began, .failed, .ended])
    }

    @Test("a set with a long press pending says when to wake it, and advance begins it")
    func deadline() {
        var set = GestureSet([.tap, .longPress])
        let landing = TouchFrame(time: 3, contacts: [FingerScript(fingers: []).contact(slot: 0, id: 1, phase: .began, at: Point(x: 10, y: 10))])
        #expect(set.update(landing).isEmpty)
        #expect(set.nextDeadline == 3.5)
        var events: [RecognizedGesture] = []
        set.advance(to: 3.5, into: &events)
        #expect(events.map(\.kind) == [.longPress, .tap] && events.map(\.state) == [.began, .failed])
        #expect(set.nextDeadline == nil)
        #expect(GestureSet().nextDeadline == nil && GestureSet().longPress == nil, "not run unless asked for")
    }

    @Test("on a panel mapped turned, the swipe's direction and the edge are the screen's")
    func turnedPanel() {
        // The finger goes left on screen while its millimetres go up the panel.
        var swipe = SwipeRecognizer()
        var edge = EdgeSwipeRecognizer(screen: Size(width: 1920, height: 1080))
        var swipes: [SwipeEvent] = [], edges: [EdgeSwipeEvent] = []
        for step in 0...12 {
            let t = Double(step) / 60
            let phase: TouchPhase = step == 0 ? .began : step == 12 ? .ended : .moved
            let screenX = 1910 - 3000 * t, panelY = 200 - 600 * t
            let contact = TouchContact(slot: 0, trackingID: 1, phase: phase, deviceX: 0, deviceY: 0,
                                       position: Point(x: screenX, y: 540), millimetres: Point(x: 50, y: panelY))
            let frame = TouchFrame(time: t, contacts: [contact])
            if let event = swipe.update(frame) { swipes.append(event) }
            if let event = edge.update(frame) { edges.append(event) }
        }
        #expect(swipes.map(\.direction) == [.left])
        #expect(edges.map(\.edge) == [.right])
    }
}
