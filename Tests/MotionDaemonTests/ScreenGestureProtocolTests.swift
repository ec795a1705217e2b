import Foundation
import MotionCore
import DaemonTestSupport
import Testing
@testable import MotionConfiguration
@testable import MotionDaemon

/// `[[screen_gesture]]` through the daemon: subscribers of `screen.gesture` hear the pattern's
/// name, whatever element is under the fingers, and an exclusive pattern cancels the element's
/// gesture on the fingers it takes.
@Suite("Screen gestures over the protocol")
struct ScreenGestureProtocolTests {
    static let configuration = """
        [screen]
        width = 1920
        height = 1080

        [[element]]
        id = "card"
        center = [960, 540]
        size = [1200, 800]

        [element.draggable]

        [[screen_gesture]]
        name = "admin"
        gesture = "long_press"
        touches = 2
        duration = 1.0
        exclusive = true

        [[screen_gesture]]
        name = "back"
        gesture = "edge_swipe"
        edge = "left"
        """

    static func contact(_ id: Int32, _ phase: TouchPhase, _ x: Double, _ y: Double) -> TouchContact {
        fingerContact(id, phase, x, y)
    }

    @Test("two fingers held still on the card for a second are 'admin', woken by the daemon's timer with no frame; the card's drag is cancelled when it takes them")
    func admin() throws {
        let clock = ManualFrameClock(now: 10)
        let scheduler = HandScheduler(now: 10)
        let daemon = Daemon(configuration: try Configuration.parse(Self.configuration, file: "x.toml"), clock: clock,
                            idleScheduler: scheduler, controlPolicy: { _ in true })
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        let hello = try #require(try output.take().first)
        #expect(hello["streams"]?.array?.compactMap(\.string).contains("screen.gesture") == true)
        daemon.receive(#"{"id": 1, "op": "subscribe", "streams": ["screen.gesture", "card.drag"]}"#, from: session)
        _ = try output.take()

        // Two fingers land on the card; the first moves enough to start the card's drag (but
        // stays within the long press's slop of 32 px), then both hold still: no frames.
        clock.now = 10
        daemon.process(TouchFrame(time: 10, contacts: [Self.contact(1, .began, 900, 500), Self.contact(2, .began, 1000, 500)]), from: testPanel)
        clock.now = 10.1
        daemon.process(TouchFrame(time: 10.1, contacts: [Self.contact(1, .moved, 920, 500), Self.contact(2, .moved, 1020, 500)]), from: testPanel)
        let dragging = try output.take()
        #expect(dragging.contains { $0["stream"]?.string == "card.drag" && $0["state"]?.string == "began" }, "\(dragging)")

        clock.now = 11.05
        scheduler.advance(to: 11.05)
        let held = try output.take()
        let admin = try #require(held.first { $0["stream"]?.string == "screen.gesture" })
        #expect(admin["name"]?.string == "admin" && admin["gesture"]?.string == "long_press" && admin["state"]?.string == "began")
        #expect(admin["t"]?.number == 11.0 && admin["touches"]?.integer == 2)

        // The next frame: the card hears its fingers cancelled, and its drag ends so.
        clock.now = 11.2
        daemon.process(TouchFrame(time: 11.2, contacts: [Self.contact(1, .stationary, 920, 500), Self.contact(2, .stationary, 1020, 500)]), from: testPanel)
        let after = try output.take()
        #expect(after.contains { $0["stream"]?.string == "card.drag" && $0["state"]?.string == "cancelled" }, "\(after)")
        // They lift: 'admin' ends, and the card hears nothing more of them.
        clock.now = 11.5
        daemon.process(TouchFrame(time: 11.5, contacts: [Self.contact(1, .ended, 920, 500), Self.contact(2, .ended, 1020, 500)]), from: testPanel)
        let lifted = try output.take()
        #expect(lifted.contains { $0["name"]?.string == "admin" && $0["state"]?.string == "ended" })
        #expect(!lifted.contains { $0["stream"]?.string == "card.drag" })
    }

    @Test("a swipe in from the left edge is 'back'; one finger held half a second is nothing")
    func back() throws {
        let clock = ManualFrameClock(now: 10)
        let daemon = Daemon(configuration: try Configuration.parse(Self.configuration, file: "x.toml"), clock: clock, controlPolicy: { _ in true })
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        daemon.receive(#"{"id": 1, "op": "subscribe", "streams": ["screen.gesture"]}"#, from: session)
        _ = try output.take()
        for step in 0...6 {
            let t = 10 + Double(step) / 60
            clock.now = t
            let phase: TouchPhase = step == 0 ? .began : step == 6 ? .ended : .moved
            daemon.process(TouchFrame(time: t, contacts: [Self.contact(1, phase, 8 + Double(step) * 60, 500)]), from: testPanel)
        }
        let events = try output.take().filter { $0["stream"]?.string == "screen.gesture" }
        #expect(events.count == 1 && events.first?["name"]?.string == "back" && events.first?["edge"]?.string == "left"
                && events.first?["state"]?.string == "recognized", "\(events)")
    }
}
