import Foundation
import Testing

extension Daemons {
    /// docs/protocol.md, "A frame's lines": a frame's values come before the gesture events it
    /// began or ended, so a UI reading line by line acts on an `ended` with the element's last
    /// values already in hand.
    @Suite("A frame's lines in order, through the socket")
    struct FrameOrderEndToEndTests {
        @Test("a replayed drag: no value of a frame reaches the client after that frame's drag began or ended")
        func replayedDrag() throws {
            let daemon = try RunningDaemon(["--replay", DaemonTests.bundled, "--loop", "--config", DaemonTests.example])
            let client = try TestClient(daemon.socket)
            _ = try client.next()
            var first: [[String: Any]] = []
            #expect(try client.request(#"{"id": 1, "op": "subscribe", "streams": ["card.*"]}"#, events: &first)["ok"] as? Bool == true)
            var heard: [String] = []  // the drag's states, from the first began on
            var eventTimes: Set<Double> = []  // frames whose drag events were heard
            var valueTimes: Set<Double> = []  // frames whose card.position was heard
            var late: [String] = []
            var movedFirst = 0
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline, heard.count(where: { $0 == "ended" }) < 2 {
                guard let line = try client.next() else { break }
                guard let stream = line["stream"] as? String, let time = line["t"] as? Double else { continue }
                if line["event"] as? String == "state", stream == "card.drag", let state = line["state"] as? String {
                    guard state == "began" || !heard.isEmpty else { continue }  // a drag heard from its start
                    heard.append(state)
                    eventTimes.insert(time)
                    if valueTimes.contains(time) { movedFirst += 1 }
                } else if line["event"] as? String == "value" {
                    if eventTimes.contains(time) { late.append("\(stream) at \(time)") }
                    if stream == "card.position" { valueTimes.insert(time) }
                }
            }
            #expect(heard.count { $0 == "ended" } == 2, "two whole drags within 60 s: \(heard)")
            #expect(late.isEmpty, "values heard after their frame's drag event: \(late)")
            #expect(movedFirst >= 2, "each drag's began came after the move that began it")
            #expect(daemon.stop().status == 0)
        }
    }
}
