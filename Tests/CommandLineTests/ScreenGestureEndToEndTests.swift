import Foundation
import Testing

/// `[[screen_gesture]]` on a live touchscreen faked by umockdev, through motiond and its
/// socket, as a kiosk's UI reads it (Tests/EndToEnd/live_screen_gestures.py).
@Suite("Screen gestures, live")
struct ScreenGestureEndToEndTests {
    @Test("two fingers held still are 'admin' exactly a second after they landed, begun by the daemon's timer with no frame; a swipe in from the left edge is 'back'")
    func live() throws {
        let directory = try EndToEnd.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try EndToEnd.fakePanelScript("live_screen_gestures.py", in: directory, deadline: 120)
        #expect(run.status == 0, "\(run.error)\n\(run.output)")
        let steps = Dictionary(uniqueKeysWithValues: try run.jsonLines().compactMap { line in (line["step"] as? String).map { ($0, line) } })

        let admin = try #require(steps["admin"]?["event"] as? [String: Any])
        #expect(admin["name"] as? String == "admin" && admin["gesture"] as? String == "long_press" && admin["state"] as? String == "began")
        #expect(admin["touches"] as? Int == 2)
        let landed = try #require(steps["admin"]?["landed"] as? Double), began = try #require(admin["t"] as? Double)
        #expect(abs(began - landed - 1.0) < 1e-6, "began \(began - landed) s after the landing")
        let ended = try #require(steps["admin_ended"]?["event"] as? [String: Any])
        #expect(ended["name"] as? String == "admin" && ended["state"] as? String == "ended")

        let back = try #require(steps["back"]?["event"] as? [String: Any])
        #expect(back["name"] as? String == "back" && back["gesture"] as? String == "edge_swipe" && back["state"] as? String == "recognized")
        #expect(back["edge"] as? String == "left" && (back["distance"] as? Double ?? 0) >= 80)
    }
}
