import MotionCore
import Testing
@testable import TouchInput

/// The fixture recordings through the recognizers, checked against what their README says a
/// recognizer should see.
@Suite("Gestures on the real recordings")
struct RecordedGestureTests {
    static func gestures(_ name: String) throws -> (frames: [TouchFrame], events: [RecognizedGesture]) {
        let frames = try RecordingReplay(FixtureRecordings.recording(name)).frames()
        var set = GestureSet()
        return (frames, frames.flatMap { set.update($0) })
    }

    static func began(_ events: [RecognizedGesture], _ kind: GestureKind) -> Int {
        events.filter { $0.kind == kind && $0.state == .began }.count
    }

    @Test("the up-down drag follows the finger: y 379 → 89 → 393")
    func upDownDrag() throws {
        let (frames, events) = try Self.gestures(FixtureRecordings.atmelDrag)
        let start = try #require(frames.first?.contacts.first?.position)
        let drags = events.compactMap { if case .drag(let e) = $0 { return e }; return nil }
        #expect(Self.began(events, .drag) == 1)
        // At every drag update the element (start + translation) is exactly where the finger is.
        for drag in drags where drag.state != .failed {
            let frame = try #require(frames.first { $0.time == drag.time })
            #expect((start + drag.translation).distance(to: frame.contacts[0].position) < 1e-9, "at \(drag.time)")
        }
        let ys = drags.map { start.y + $0.translation.y }
        #expect(start.y == 379)
        let lowest = try #require(ys.min()), final = try #require(ys.last)
        #expect(Swift.abs(lowest - 89) < 1e-9 && Swift.abs(final - 393) < 1e-9)
        #expect(drags.last?.state == .ended)
    }

    @Test("nine taps and no drag")
    func nineTaps() throws {
        let (_, events) = try Self.gestures(FixtureRecordings.atmelTaps)
        let taps = events.compactMap { if case .tap(let e) = $0, e.state == .recognized { return e }; return nil }
        #expect(taps.count == 9)
        #expect(taps.allSatisfy { $0.touches == 1 })
        #expect(Self.began(events, .drag) == 0)
        #expect(Self.began(events, .pinch) == 0 && Self.began(events, .rotate) == 0)
    }

    @Test("the two-finger hold begins no pinch, no rotation and no drag")
    func twoFingerHold() throws {
        let (_, events) = try Self.gestures(FixtureRecordings.atmelHold)
        for kind in [GestureKind.pinch, .rotate, .drag] {
            #expect(Self.began(events, kind) == 0, "\(kind) began")
        }
        #expect(!events.contains { $0.kind == .tap && $0.state == .recognized }, "0.8 s is no tap")
    }

    @Test("the two-finger parallel drag is a pan, not a pinch or a rotation")
    func parallelDrag() throws {
        let (_, events) = try Self.gestures(FixtureRecordings.ep0430)
        #expect(Self.began(events, .drag) == 1)
        #expect(Self.began(events, .pinch) == 0)
        #expect(Self.began(events, .rotate) == 0)
        let drag = try #require(events.compactMap { if case .drag(let e) = $0 { return e }; return nil }.last)
        #expect(drag.translation.y < -250, "toward y = 0: \(drag.translation)")
        // What the README measured: scale about 1.04, angle change about -5.5°, held below the thresholds.
        let pinch = try #require(events.compactMap { if case .pinch(let e) = $0 { return e }; return nil }.last)
        #expect(Swift.abs(pinch.scale - 1.04) < 0.01)
        let rotation = try #require(events.compactMap { if case .rotate(let e) = $0 { return e }; return nil }.last)
        #expect(Swift.abs(rotation.rotation * 180 / .pi - -5.5) < 1)
    }

    @Test("the four-finger drag is one downward drag")
    func fourFingerDrag() throws {
        let (_, events) = try Self.gestures(FixtureRecordings.atmelFour)
        #expect(Self.began(events, .drag) == 1)
        let drags = events.compactMap { if case .drag(let e) = $0 { return e }; return nil }
        #expect(drags.map(\.touches).max() == 4)
        let last = try #require(drags.last)
        #expect(last.state == .ended)
        #expect(last.translation.y > 130 && Swift.abs(last.translation.x) < 20, "\(last.translation)")
        #expect(Self.began(events, .pinch) == 0 && Self.began(events, .rotate) == 0)
    }

    @Test("the tablet fling ends at about 0.9–1.0 m/s up and to the left")
    func tabletFling() throws {
        let (_, events) = try Self.gestures(FixtureRecordings.pixel)
        let end = try #require(events.compactMap { if case .drag(let e) = $0 { return e }; return nil }.last)
        #expect(end.state == .ended)
        // Pixels are device units here (no output size), at 11 units per millimetre.
        let metresPerSecond = end.translationVelocity.length / 11 / 1000
        #expect(metresPerSecond > 0.9 && metresPerSecond < 1.05, "\(metresPerSecond) m/s")
        #expect(end.translationVelocity.x < 0 && end.translationVelocity.y < 0, "up and to the left")
    }
}
