import Foundation
import MotionCore
import DaemonTestSupport
import Testing
@testable import MotionConfiguration
import MotionWire
@testable import MotionDaemon

/// One rule for numbers from outside: what `set`, `add_element` and the configuration give
/// is finite and in range, or refused with `bad_value` naming the field and the range; and
/// an element is never poisoned for its subscribers. (The configuration's side is
/// ConfigurationValueLimitTests, in MotionConfigurationTests.)
@Suite("Values from outside")
struct ValueLimitTests {
    /// Sends `request` and returns its reply (the events before it skipped).
    private func reply(_ daemon: Daemon, _ session: ClientSession, _ output: RecordingOutput, _ request: String) throws -> JSONInput {
        daemon.receive(Substring(request), from: session)
        return try #require(try output.take().last { $0["ok"] != nil })
    }

    /// Runs `frames` frames and returns the marker's positions published meanwhile.
    private func positions(_ clock: ManualFrameClock, _ output: RecordingOutput, frames: Int) throws -> [JSONInput] {
        for _ in 0..<frames { clock.tick(at: clock.now + 1.0 / 60) }
        return try output.take().filter { $0["stream"]?.string == "marker.position" }.compactMap { $0["value"] }
    }

    @Test("the issue's values are refused with bad_value naming the field and the range, and the marker stays finite and movable",
          arguments: [
            (#""marker.destination", "value": {"x": 1e308, "y": -1e308}"#, "marker.destination: x must be within -19200…21120 (10 screens around the 1920×1080 screen)"),
            (#""marker.spring", "value": {"tension": 1e308, "friction": 1e308, "mass": 1e-308}"#, "marker.spring: this spring cannot run: mass must be within 0.001…1000"),
            (#""marker.spring", "value": {"tension": 1e308}"#, "tension must be within 0.001…100000"),
            (#""marker.position", "value": {"x": 1e308, "y": 0}"#, "marker.position: x must be within"),
            (#""marker.size", "value": {"width": 1e308, "height": 10}"#, "marker.size: width must be more than 0 and at most 19200 (10 screens)"),
            (#""marker.destination", "value": {"x": 100, "y": 12000}"#, "y must be within -10800…11880"),
          ])
    func refused(set: String, message: String) throws {
        let (daemon, clock) = try makeDaemon()
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        _ = try reply(daemon, session, output, #"{"id": 1, "op": "subscribe", "streams": ["marker.*"]}"#)
        let refused = try reply(daemon, session, output, #"{"id": 2, "op": "set", "stream": "# + set + "}")
        #expect(refused["ok"]?.bool == false && refused["error"]?["code"]?.string == "bad_value")
        #expect(refused["error"]?["message"]?.string?.contains(message) == true, "\(refused))")
        #expect(try positions(clock, output, frames: 30).allSatisfy { $0["x"]?.number != nil && $0["y"]?.number != nil })
        // Sane values afterwards move it as before.
        #expect(try reply(daemon, session, output, #"{"id": 3, "op": "set", "stream": "marker.destination", "value": {"x": 700, "y": 500}}"#)["ok"]?.bool == true)
        let moved = try positions(clock, output, frames: 120)
        #expect(moved.count > 10)
        #expect(moved.allSatisfy { $0["x"]?.number?.isFinite == true && $0["y"]?.number?.isFinite == true })
        #expect(abs((moved.last?["x"]?.number ?? 0) - 700) < 5, "\(String(describing: moved.last))")
    }

    @Test("add_element with a position or size out of range is refused with the field and range")
    func addElement() throws {
        let (daemon, _) = try makeDaemon()
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        let far = try reply(daemon, session, output, #"{"id": 1, "op": "add_element", "element": {"id": "far", "center": [1e308, 0], "size": [10, 10]}}"#)
        #expect(far["error"]?["code"]?.string == "bad_value" && far["error"]?["message"]?.string?.contains("center: x must be within") == true, "\(far))")
        let huge = try reply(daemon, session, output, #"{"id": 2, "op": "add_element", "element": {"id": "huge", "center": [10, 10], "size": [10, 1e300]}}"#)
        #expect(huge["error"]?["message"]?.string?.contains("size: height must be more than 0 and at most 10800") == true, "\(huge))")
        let spring = try reply(daemon, session, output, #"{"id": 3, "op": "add_element", "element": {"id": "s", "center": [10, 10], "size": [10, 10], "attach": {"destination": [5, 5], "spring": {"tension": 1e9}}}}"#)
        #expect(spring["error"]?["message"]?.string?.contains("tension must be within 0.001…100000") == true, "\(spring))")
    }
}

/// Defence in depth, in the engine: a value that is not finite is never published, and the
/// element goes back to its last finite values.
@Suite("Engine: values that stop being finite")
struct NonFiniteTests {
    @Test("a position forced to NaN is not published, is put back, is reported once, and the element moves again")
    func nanPosition() throws {
        let (daemon, clock) = try makeDaemon()
        var events: [DaemonEvent] = []
        daemon.onEvent = { events.append($0) }
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        daemon.receive(#"{"id": 1, "op": "subscribe", "streams": ["card.*"]}"#, from: session)
        _ = try output.take()
        let card = try #require(daemon.engine.scene.element("card"))
        let before = card.position.value
        for _ in 0..<3 {
            card.position.value = Point(x: .nan, y: .infinity)
            daemon.publishPending()  // as after a command; in a frame the frame's end flushes
            clock.tick(at: clock.now + 1.0 / 60)
        }
        // A number that is not finite would be written as null.
        #expect(!output.lines.joined().contains("null"), "\(output.lines)")
        _ = try output.take()
        #expect(card.position.value == before)
        guard events.count == 1, case let .valuesRepaired(element, streams) = events[0] else {
            Issue.record("one repair was to be told, not \(events)")
            return
        }
        #expect(element == "card" && streams == ["card.position"])
        daemon.receive(#"{"id": 2, "op": "set", "stream": "card.position", "value": {"x": 300, "y": 200}}"#, from: session)
        clock.tick(at: clock.now + 1.0 / 60)
        #expect(card.position.value == Point(x: 300, y: 200))
        #expect(try output.take().contains { $0["stream"]?.string == "card.position" && $0["value"]?["x"]?.number == 300 })
    }
}
