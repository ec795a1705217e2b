import Foundation
import Testing
@testable import MotionCore

/// Screen gestures: patterns matched on every contact of the screen, by name.
@Suite("Screen gestures")
struct ScreenGestureTests {
    static let screen = Size(width: 1920, height: 1080)
    static let patterns = [
        ScreenGesturePattern(name: "admin", gesture: .longPress, touches: 3, duration: 2.0, exclusive: true),
        ScreenGesturePattern(name: "back", gesture: .edgeSwipe, edge: .left),
        ScreenGesturePattern(name: "next", gesture: .swipe, touches: 3, direction: .left),
    ]

    static func events(_ fingers: [FingerScript.Finger]) -> [ScreenGestureEvent] {
        var watch = ScreenGestures(patterns, screen: screen, thresholds: GestureThresholds())
        var events: [ScreenGestureEvent] = []
        for frame in FingerScript(fingers: fingers, pixelsPerMillimetre: (4, 4)).frames(rate: 60) {
            if let deadline = watch.nextDeadline, deadline < frame.time { watch.advance(to: deadline, into: &events) }
            watch.update(frame, into: &events)
        }
        return events
    }

    static func still(_ id: Int32, x: Double, _ down: ClosedRange<Double>) -> FingerScript.Finger {
        FingerScript.Finger(id: id, down: down) { _ in Point(x: x, y: 500) }
    }

    @Test("three fingers held two seconds are 'admin', begun (taking the fingers) and ended; two fingers, or one second, are nothing")
    func admin() throws {
        let three = (0..<3).map { Self.still(Int32($0 + 1), x: 800 + Double($0) * 100, (1.0 + Double($0) * 0.1)...4.0) }
        let events = Self.events(three)
        #expect(events.map(\.name) == ["admin", "admin"])
        #expect(events.map(\.gesture.state) == [.began, .ended])
        let began = try #require(events.first)
        #expect(abs(began.gesture.time - 3.2) < 1e-9 && began.takesFingers && began.gesture.touches == 3)
        #expect(!events[1].takesFingers)
        #expect(Self.events(Array(three.prefix(2))).isEmpty)
        #expect(Self.events(three.map { var f = $0; f.down = f.down.lowerBound...2.5; return f }).isEmpty)
    }

    @Test("a swipe in from the left edge is 'back'; from the right edge it is nothing")
    func back() {
        let fromLeft = FingerScript.Finger.line(id: 1, from: Point(x: 8, y: 500), to: Point(x: 300, y: 500), down: 1.0...1.15)
        let fromRight = FingerScript.Finger.line(id: 1, from: Point(x: 1912, y: 500), to: Point(x: 1620, y: 500), down: 1.0...1.15)
        #expect(Self.events([fromLeft]).map(\.name) == ["back"])
        #expect(!Self.events([fromLeft])[0].takesFingers, "back is not exclusive")
        #expect(Self.events([fromRight]).isEmpty)
    }

    @Test("three fingers swiping left are 'next'; two fingers, or three swiping right, are not")
    func next() {
        func fingers(_ count: Int, by dx: Double) -> [FingerScript.Finger] {
            (0..<count).map { i in
                let start = Point(x: 1000, y: 300 + Double(i) * 100)
                return .line(id: Int32(i + 1), from: start, to: start + Point(x: dx, y: 0), down: 1.0...1.2)
            }
        }
        #expect(Self.events(fingers(3, by: -400)).map(\.name) == ["next"])
        #expect(Self.events(fingers(2, by: -400)).isEmpty)
        #expect(Self.events(fingers(3, by: 400)).isEmpty)
    }
}
