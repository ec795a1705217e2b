import MotionCore
import Testing
@testable import TouchInput

/// Long press and swipe on the fixture recordings, as the README says each should go: the
/// two-finger hold is a long press, the Pixel Tablet's fling a swipe up, and the drags and
/// taps neither (and the taps stay taps).
@Suite("Long press and swipe on the real recordings")
struct RecordedLongPressAndSwipeTests {
    static let kinds: Set<GestureKind> = [.drag, .pinch, .rotate, .tap, .longPress, .swipe]

    static func events(_ name: String) throws -> (frames: [TouchFrame], events: [RecognizedGesture]) {
        let frames = try RecordingReplay(FixtureRecordings.recording(name)).frames()
        var set = GestureSet(kinds)
        var events: [RecognizedGesture] = []
        for frame in frames {
            // The panel sends nothing while the fingers are still: wake the set at its
            // deadline, as the daemon and motionctl gestures do.
            if let deadline = set.nextDeadline, deadline < frame.time { set.advance(to: deadline, into: &events) }
            set.update(frame, into: &events)
        }
        return (frames, events)
    }

    static func longPresses(_ events: [RecognizedGesture]) -> [LongPressEvent] {
        events.compactMap { if case .longPress(let e) = $0 { return e }; return nil }
    }

    static func swipes(_ events: [RecognizedGesture]) -> [SwipeEvent] {
        events.compactMap { if case .swipe(let e) = $0 { return e }; return nil }
    }

    @Test("the Atmel two-finger hold: a long press of two fingers, begun 0.5 s after the second landed, ended at the lift")
    func hold() throws {
        let (frames, events) = try Self.events(FixtureRecordings.atmelHold)
        let presses = Self.longPresses(events)
        #expect(presses.filter { $0.state == .began }.count == 1 && presses.last?.state == .ended)
        let secondLanding = try #require(frames.first { $0.contacts.count == 2 }?.time)
        let began = try #require(presses.first { $0.state == .began })
        #expect(abs(began.time - (secondLanding + 0.5)) < 1e-9, "began at \(began.time)")
        #expect(began.touches == 2 && presses.last?.touches == 2)
        #expect(!presses.contains { $0.state == .failed })
        #expect(Self.swipes(events).isEmpty)
    }

    @Test("the Pixel Tablet's fling is a one-finger swipe up, and no long press")
    func fling() throws {
        let (_, events) = try Self.events(FixtureRecordings.pixel)
        let swipes = Self.swipes(events)
        #expect(swipes.count == 1 && swipes.first?.direction == .up && swipes.first?.touches == 1, "\(swipes)")
        #expect(!Self.longPresses(events).contains { $0.state == .began })
    }

    @Test("drags and taps are neither, and the nine taps are still nine taps", arguments: [
        FixtureRecordings.atmelDrag, FixtureRecordings.atmelFour, FixtureRecordings.ep0430, FixtureRecordings.atmelTaps,
    ])
    func neither(name: String) throws {
        let (_, events) = try Self.events(name)
        #expect(Self.swipes(events).isEmpty)
        #expect(!Self.longPresses(events).contains { $0.state == .began })
        if name == FixtureRecordings.atmelTaps {
            #expect(events.filter { if case .tap(let e) = $0 { return e.state == .recognized }; return false }.count == 9)
        }
    }
}
