import MotionCore
import DaemonTestSupport
import Testing
@testable import MotionConfiguration
@testable import MotionDaemon

/// A frame's lines reach a client in one write, values first and then the gesture events the
/// frame began, ended, cancelled or recognized (docs/protocol.md, "A frame's lines"): a UI
/// reading line by line never hears a gesture end before the element's last values.
@Suite("A frame's lines, in order, in one write")
struct FrameOrderTests {
    /// What one frame wrote to the client: how many writes, and its lines as (event, stream, t).
    struct Written {
        var writes: Int
        var lines: [(event: String, stream: String, state: String?, time: Double)]
    }

    /// Feeds `frames` to a daemon whose client follows everything; what each frame wrote.
    static func run(_ frames: [TouchFrame]) throws -> [Written] {
        let clock = ManualFrameClock(now: 0)
        // A card to drag on the left, a photo to pinch on the right.
        let configuration = try ReloadGestureTests.configuration(ReloadGestureTests.elements)
        let daemon = Daemon(configuration: configuration, clock: clock, controlPolicy: { _ in true })
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        daemon.receive(#"{"id": 1, "op": "subscribe", "streams": ["*"]}"#, from: session)
        _ = try output.take()
        return try frames.map { frame in
            clock.now = frame.time
            output.writes = 0
            daemon.process(frame, from: testPanel)
            let lines = try output.take().map { line in
                (line["event"]?.string ?? "", line["stream"]?.string ?? "", line["state"]?.string, line["t"]?.number ?? .nan)
            }
            return Written(writes: output.writes, lines: lines)
        }
    }

    @Test("a drag on the card and a pinch on the photo at once: each frame is one write, its values before its gesture events")
    func dragAndPinch() throws {
        // Finger 1 drags the card 300 px to the right; fingers 2 and 3 spread on the photo.
        var frames: [TouchFrame] = []
        for step in 0...30 {
            let t = Double(step) / 100
            let phase: TouchPhase = step == 0 ? .began : step == 30 ? .ended : .moved
            frames.append(TouchFrame(time: t, contacts: [
                ScreenGestureProtocolTests.contact(1, phase, 500 + 10 * Double(step), 540),
                ScreenGestureProtocolTests.contact(2, phase, 1350 - 3 * Double(step), 540),
                ScreenGestureProtocolTests.contact(3, phase, 1450 + 3 * Double(step), 540),
            ]))
        }
        let written = try Self.run(frames)
        var heard: [String: [(String, Int)]] = [:]  // a gesture stream's events: (state, the frame's index)
        for (index, frame) in written.enumerated() where !frame.lines.isEmpty {
            #expect(frame.writes == 1, "frame \(index) took \(frame.writes) writes")
            #expect(Set(frame.lines.map(\.time)) == [frames[index].time], "frame \(index)'s lines carry its time")
            guard let firstEvent = frame.lines.firstIndex(where: { $0.event == "state" }) else { continue }
            #expect(frame.lines[firstEvent...].allSatisfy { $0.event == "state" }, "frame \(index): a value after a gesture event: \(frame.lines)")
            for line in frame.lines[firstEvent...] { heard[line.stream, default: []].append((line.state ?? "", index)) }
        }
        // The card's drag began and ended, and in each of those frames the card's move came
        // first: the one that began it, the last one.
        let drag = try #require(heard["card.drag"])
        #expect(drag.map(\.0) == ["began", "ended"], "\(drag)")
        for (state, index) in drag {
            let values = written[index].lines.prefix { $0.event == "value" }.map(\.stream)
            #expect(values.contains("card.position"), "the card's move before its drag \(state): \(written[index].lines)")
        }
        #expect(heard["photo.pinch"]?.map(\.0) == ["began", "ended"], "the photo's pinch began and ended in frames of their own writes too")
    }
}
