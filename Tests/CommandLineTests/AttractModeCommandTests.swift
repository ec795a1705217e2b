import Foundation
import Testing

/// A kiosk left alone: `screen.idle` and `reset_after` through `motionctl simulate --until`
/// and through a running motiond replaying a recording.
extension Daemons {
    @Suite("Attract mode through simulate and motiond")
    struct AttractModeCommandTests {
        /// The Atmel panel is 800 × 480 units with no resolution: one pixel per unit here.
        static let configuration = """
            [screen]
            width = 800
            height = 480
            idle_after = IDLE

            [[element]]
            id = "card"
            center = [400, 240]
            size = [800, 480]
            reset_after = RESET

            [element.draggable]
            """
        static let recording = EndToEnd.recordings.appendingPathComponent("whot-evemu-devices__atmel-maxtouch__1f-drag-up-down.evemu").path

        static func configuration(idle: Double, reset: Double) -> String {
            Self.configuration.replacingOccurrences(of: "IDLE", with: "\(idle)").replacingOccurrences(of: "RESET", with: "\(reset)")
        }

        static func point(_ value: Any?) -> (x: Double, y: Double)? {
            guard let point = value as? [String: Any], let x = point["x"] as? Double, let y = point["y"] as? Double else { return nil }
            return (x, y)
        }

        @Test("simulate --until runs past the recording: the screen turns idle, the card springs home, every run the same")
        func simulateUntil() throws {
            let directory = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("kiosk.toml").path
            try Self.configuration(idle: 2, reset: 3).write(toFile: file, atomically: true, encoding: .utf8)

            let run = try Run("motionctl", ["simulate", Self.recording, "--config", file, "--until", "8", "--json"])
            #expect(run.status == 0, "\(run.error)")
            let lines = try run.jsonLines()
            // The lift: the recording's last frame, as motionctl frames reads it.
            let frames = try Run("motionctl", ["frames", Self.recording, "--json"]).jsonLines()
            let lift = try #require(frames.last?["t"] as? Double)
            #expect(lift > 2)
            let idle = lines.filter { $0["stream"] as? String == "screen.idle" }
            #expect(idle.count == 1 && idle.first?["value"] as? Bool == true, "\(idle)")
            #expect(abs((idle.first?["t"] as? Double ?? 0) - (lift + 2)) < 1e-9, "idle 2 s after the lift at \(lift)")
            let positions = lines.filter { $0["stream"] as? String == "card.position" }
            let left = try #require(positions.last { ($0["t"] as? Double ?? 0) <= lift }.flatMap { Self.point($0["value"]) })
            #expect(abs(left.y - 240) > 10, "the drag left the card off home: \(left)")
            let home = try #require(positions.last.flatMap { Self.point($0["value"]) })
            #expect(abs(home.x - 400) < 1e-6 && abs(home.y - 240) < 1e-6, "\(home)")
            let firstBack = try #require(positions.first { ($0["t"] as? Double ?? 0) > lift }?["t"] as? Double)
            #expect(firstBack > lift + 3, "nothing moves before reset_after")
            #expect(try Run("motionctl", ["simulate", Self.recording, "--config", file, "--until", "8", "--json"]).output == run.output)

            // Without --until the simulation ends when the drag has come to rest: no reset.
            let plain = try Run("motionctl", ["simulate", Self.recording, "--config", file, "--json"])
            #expect(plain.status == 0 && !plain.output.contains("screen.idle"), "\(plain.output.suffix(300))")
            let refused = try Run("motionctl", ["simulate", Self.recording, "--until", "-1"])
            #expect(refused.status == 2 && refused.error.contains("--until"), "\(refused.error)")
        }

        @Test("a running motiond turns idle after the replayed touch and springs the card home, on its own timer")
        func daemon() throws {
            // The replay starts with motiond, at half speed (the drag lasts 4.4 s). A client that
            // subscribed only after the finger lifted (once, on a loaded machine, after the card
            // was home again) has nothing to judge: motiond is started again, up to three times.
            for attempt in 1...3 {
                let daemon = try RunningDaemon(["--replay", Self.recording, "--speed", "0.5"], configuration: Self.configuration(idle: 0.5, reset: 1.5))
                let (events, idleAt, backHome, farthest) = try Self.readUntilHome(daemon)
                let landed = events.contains { $0["stream"] as? String == "screen.contacts" && ($0["value"] as? [Any])?.isEmpty == false }
                if !landed && attempt < 3 {
                    _ = daemon.stop()
                    continue
                }
                try Self.judge(daemon, events: events, idleAt: idleAt, backHome: backHome, farthest: farthest)
                return
            }
        }

        /// Subscribes to the screen and the card, and reads until the card is back home after
        /// the screen turned idle after a touch; every read has a deadline.
        static func readUntilHome(_ daemon: RunningDaemon) throws -> (events: [[String: Any]], idleAt: Double?, backHome: Bool, farthest: Double) {
            let client = try TestClient(daemon.socket)
            #expect(try client.next()?["event"] as? String == "hello")
            var events: [[String: Any]] = []
            let reply = try client.request(#"{"id": 1, "op": "subscribe", "streams": ["screen.idle", "screen.contacts", "card.position"]}"#, events: &events)
            #expect(reply["error"] == nil, "\(reply)")
            // The screen is idle before the first touch too: only idle after a touch counts.
            var idleAt: Double?, backHome = false, farthest = 0.0, touched = false
            let deadline = Date().addingTimeInterval(60)
            while !backHome, Date() < deadline, let message = try client.next() {
                events.append(message)
                guard message["event"] as? String == "value" else { continue }
                let stream = message["stream"] as? String, time = message["t"] as? Double ?? 0
                if stream == "screen.contacts", (message["value"] as? [Any])?.isEmpty == false { touched = true }
                if stream == "screen.idle", message["value"] as? Bool == true, touched { idleAt = time }
                if stream == "card.position", let p = Self.point(message["value"]) {
                    farthest = max(farthest, abs(p.y - 240))
                    if idleAt != nil, abs(p.x - 400) < 1, abs(p.y - 240) < 1 { backHome = true }
                }
            }
            return (events, idleAt, backHome, farthest)
        }

        static func judge(_ daemon: RunningDaemon, events: [[String: Any]], idleAt: Double?, backHome: Bool, farthest: Double) throws {
            #expect(farthest > 100, "the replayed drag moved the card")
            #expect(idleAt != nil, "screen.idle turned true: \(events.suffix(5))")
            #expect(backHome, "the card came home: \(events.suffix(5))")
            // The lift: the last `screen.contacts` value, `[]`, before the screen turned idle.
            let lift = events.last { $0["stream"] as? String == "screen.contacts" && ($0["value"] as? [Any])?.isEmpty == true && ($0["t"] as? Double ?? .infinity) < (idleAt ?? 0) }?["t"] as? Double
            #expect(lift != nil, "the lift was published")
            if let lift, let idleAt { #expect(idleAt - lift >= 0.5 - 1e-6, "idle no sooner than idle_after after the lift") }
            #expect(daemon.stop().status == 0)
        }
    }
}
