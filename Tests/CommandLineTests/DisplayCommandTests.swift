import Foundation
import Testing

/// A second touchscreen on the right-hand display of a 3840 × 1080 screen, as every motionctl
/// command that reads recordings, config check and motiond see it.
@Suite("Displays side by side")
struct DisplayCommandTests {
    static let recording = EndToEnd.repository.appendingPathComponent("data/recordings/atmel-maxtouch-drag-up-down.evemu").path

    /// The Atmel (800 × 480 units) on the right-hand display, turned upside down; an element
    /// on each display.
    static let configuration = """
        [screen]
        width = 3840
        height = 1080
        [[device]]
        name = "*maXTouch*"
        output = [1920, 0, 1920, 1080]
        rotation = 180
        [[element]]
        id = "left"
        center = [960, 540]
        size = [1900, 1060]
        [element.draggable]
        [[element]]
        id = "right"
        center = [2880, 540]
        size = [1900, 1060]
        [element.draggable]
        """

    @Test("frames, gestures and simulate put the recording on the right-hand display, after the rotation; config check and motiond's devices show the rectangle")
    func rightHandDisplay() throws {
        let directory = try EndToEnd.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("motiond.toml").path
        try Self.configuration.write(toFile: file, atomically: true, encoding: .utf8)

        let plain = try Run("motionctl", ["frames", Self.recording, "--json"]).jsonLines()
        let mapped = try Run("motionctl", ["frames", Self.recording, "--json", "--config", file]).jsonLines()
        #expect(plain.count == mapped.count && !mapped.isEmpty)
        for (before, after) in zip(plain, mapped) {
            let a = try #require((before["contacts"] as? [[String: Any]])?.first), b = try #require((after["contacts"] as? [[String: Any]])?.first)
            // Device units (u, v) of 800 × 480: turned 180° onto 1920 × 1080 starting at x = 1920.
            let u = try #require(a["device_x"] as? Double), v = try #require(a["device_y"] as? Double)
            let x = try #require(b["x"] as? Double), y = try #require(b["y"] as? Double)
            #expect(Swift.abs(x - (1920 + (1 - u / 800) * 1920)) < 1e-6 && Swift.abs(y - (1 - v / 480) * 1080) < 1e-6, "\(b)")
        }

        let gestures = try Run("motionctl", ["gestures", Self.recording, "--json", "--config", file])
        #expect(gestures.status == 0, "\(gestures.error)")
        let drags = try gestures.jsonLines().filter { $0["gesture"] as? String == "drag" }
        #expect(!drags.isEmpty)
        let simulated = try Run("motionctl", ["simulate", "--config", file, Self.recording, "--json"])
        #expect(simulated.status == 0, "\(simulated.error)")
        let streams = Set(try simulated.jsonLines().compactMap { $0["stream"] as? String })
        #expect(streams.contains("right.position") && !streams.contains("left.position"), "the drag moves the element on the right-hand display only: \(streams)")

        let check = try Run("motionctl", ["config", "check", file])
        #expect(check.output.contains("name \"*maXTouch*\", output [1920, 0, 1920, 1080]"), "\(check.output)")

        let daemon = try RunningDaemon(["--replay", Self.recording], configuration: Self.configuration)
        let devices = try Run("motionctl", ["devices", "--json", "--socket", daemon.socket]).jsonLines()
        let output = try #require(devices.first?["output"] as? [String: Double])
        #expect(output == ["x": 1920, "y": 0, "width": 1920, "height": 1080])
        #expect((devices.first?["mapping"] as? [String: Any])?["rotation"] as? Int == 180)
        _ = daemon.stop()
    }
}

/// What the filters did, as an operator reads it from motiond: `stats`, `devices` and the log.
@Suite("Filter counts from motiond")
struct FilterCountTests {
    @Test("a replay whose two resting fingers are stuck after 0.3 s: stats and devices count 2 stuck for that device, and the log names the device and where, once per contact")
    func stuckCounted() throws {
        let recording = EndToEnd.recordings.appendingPathComponent("whot-evemu-devices__atmel-maxtouch__2f-touch-hold-release.evemu").path
        let daemon = try RunningDaemon(["--replay", recording], configuration: "[[device]]\nstuck_after = 0.3\n")
        let log = try #require(daemon.logReader).waitUntil(seconds: 60) { String(decoding: $0, as: UTF8.self).contains("the replay ended") }
        let text = String(decoding: log, as: UTF8.self)
        #expect(text.contains("the replay ended"), "\(text)")
        let stats = try #require(try Run("motionctl", ["stats", "--json", "--socket", daemon.socket]).jsonLines().first)
        let filtered = try #require((stats["filtered"] as? [String: [String: Int]])?["replay:\(recording)"], "\(stats)")
        #expect(filtered["stuck"] == 2 && filtered["palms"] == 0 && filtered["jumps"] == 0, "\(filtered)")
        let device = try #require(try Run("motionctl", ["devices", "--json", "--socket", daemon.socket]).jsonLines().first)
        #expect((device["filtered"] as? [String: Int])?["stuck"] == 2)
        #expect((device["filters"] as? [String: Any])?["stuck_after"] as? Double == 0.3)
        let lines = text.split(separator: "\n").filter { $0.contains("stayed put for stuck_after") }
        #expect(lines.count == 2 && lines.allSatisfy { $0.contains("replay:\(recording): contact ") }, "\(text)")
        _ = daemon.stop()
    }

    @Test("a replay of an infrared frame that exchanges two dragging fingers' positions twice: stats and devices count 4 re-paired and no jump, the log names each contact once per exchange, and motionctl gestures sees one drag that ends")
    func exchangesRepaired() throws {
        let recording = EndToEnd.recordings.appendingPathComponent("exchanging/two-finger-pan.evemu").path
        let daemon = try RunningDaemon(["--replay", recording], configuration: "[[device]]\n")
        let log = try #require(daemon.logReader).waitUntil(seconds: 60) { String(decoding: $0, as: UTF8.self).contains("the replay ended") }
        let text = String(decoding: log, as: UTF8.self)
        #expect(text.contains("the replay ended"), "\(text)")
        let stats = try #require(try Run("motionctl", ["stats", "--json", "--socket", daemon.socket]).jsonLines().first)
        let filtered = try #require((stats["filtered"] as? [String: [String: Int]])?["replay:\(recording)"], "\(stats)")
        #expect(filtered["repaired"] == 4 && filtered["jumps"] == 0, "\(filtered)")
        let device = try #require(try Run("motionctl", ["devices", "--json", "--socket", daemon.socket]).jsonLines().first)
        #expect((device["filtered"] as? [String: Int])?["repaired"] == 4)
        #expect(try Run("motionctl", ["devices", "--socket", daemon.socket]).output.contains("4 re-paired"))
        let lines = text.split(separator: "\n").filter { $0.contains("exchanged their positions") }
        #expect(lines.count == 4, "\(text)")
        #expect(lines.filter { $0.contains("replay:\(recording): contact 1's finger was reported at") && $0.contains("in contact 2's slot") }.count == 2, "\(lines)")
        _ = daemon.stop()

        let gestures = try Run("motionctl", ["gestures", recording, "--json", "--recognizers", "drag"])
        #expect(gestures.status == 0, "\(gestures.error)")
        let states = try gestures.jsonLines().compactMap { $0["state"] as? String }
        #expect(states.filter { $0 == "began" }.count == 1 && !states.contains("cancelled") && states.last == "ended", "\(states)")
    }

    @Test("motionctl frames shows a contact the filters cancel as cancelled; --raw shows what the device sent")
    func framesRaw() throws {
        let directory = try EndToEnd.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("motiond.toml").path
        try "[[device]]\nstuck_after = 0.3\n".write(toFile: file, atomically: true, encoding: .utf8)
        let recording = EndToEnd.recordings.appendingPathComponent("whot-evemu-devices__atmel-maxtouch__2f-touch-hold-release.evemu").path
        let phases = { (arguments: [String]) throws -> [String] in
            try Run("motionctl", ["frames", recording, "--json"] + arguments).jsonLines().flatMap { ($0["contacts"] as? [[String: Any]] ?? []).compactMap { $0["phase"] as? String } }
        }
        let filtered = try phases(["--config", file]), raw = try phases(["--config", file, "--raw"])
        #expect(filtered.filter { $0 == "cancelled" }.count == 2 && !filtered.contains("ended"), "\(filtered)")
        #expect(!raw.contains("cancelled") && raw.filter { $0 == "ended" }.count == 2, "\(raw)")
    }

    @Test("live through umockdev, a finger that rests and sends nothing more is cancelled by the stuck timer after stuck_after, counted, logged once, and a second finger is a contact of its own")
    func stuckLive() throws {
        let directory = try EndToEnd.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try EndToEnd.fakePanelScript("live_filters.py", in: directory, deadline: 120)
        #expect(run.status == 0, "\(run.error)\n\(run.output)")
        let steps = Dictionary(uniqueKeysWithValues: try run.jsonLines().compactMap { line in (line["step"] as? String).map { ($0, line) } })
        // On the events' clock, half a second after it landed (the timer may fire late on a busy machine, never early).
        let after = try #require(steps["cancelled"]?["after"] as? Double)
        #expect(after >= 0.5 && after < 10, "\(after)")
        #expect((steps["counted"]?["stats"] as? [String: Int])?["stuck"] == 1 && (steps["counted"]?["devices"] as? [String: Int])?["stuck"] == 1)
        #expect((steps["second"]?["contact"] as? [String: Any])?["id"] as? Int != (steps["down"]?["contact"] as? [String: Any])?["id"] as? Int)
        let log = try #require(steps["log"]?["lines"] as? [String])
        #expect(log.count == 1 && log[0].contains("/dev/input/event61: contact 1 at (960, 540) stayed put for stuck_after"), "\(log)")
    }

    @Test("live through umockdev, a palm that lands gives no frame yet is counted and logged as ignored from landing, and so is one that lands as the panel is unplugged")
    func palmsLive() throws {
        let directory = try EndToEnd.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try EndToEnd.fakePanelScript("live_palms.py", in: directory, deadline: 120)
        #expect(run.status == 0, "\(run.error)\n\(run.output)")
        let steps = Dictionary(uniqueKeysWithValues: try run.jsonLines().compactMap { line in (line["step"] as? String).map { ($0, line) } })
        #expect((steps["counted"]?["filtered"] as? [String: Int])?["palms"] == 1, "\(run.output)")
        let first = try #require(steps["counted"]?["log"] as? [String])
        #expect(first.count == 1 && first[0].contains("/dev/input/event61: contact 1 at (960, 540) landed larger than a palm (palm_size): it is ignored from landing"), "\(first)")
        #expect(steps["unplugged"]?["metrics"] as? [String] == [#"motiond_contacts_filtered_total{device="/dev/input/event61",filter="palm"} 2"#], "\(run.output)")
        let both = try #require(steps["unplugged"]?["log"] as? [String])
        #expect(both.count == 2 && both[1].contains("contact 2 at (960, 540) landed larger than a palm"), "\(both)")
        #expect(!both.contains { $0.contains("cancelled") }, "\(both)")
    }

    @Test("live through umockdev, a repeating phantom's taps, a burst at the edge, an optical frame's ghosts and a storm reach no client, and are counted; devices shows the phantom, health the storm until its quiet ends",
          .timeLimit(.minutes(3)))
    func phantomsLive() throws {
        let directory = try EndToEnd.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try EndToEnd.fakePanelScript("live_phantoms.py", in: directory, deadline: 150)
        #expect(run.status == 0, "\(run.error)\n\(run.output)")
        let steps = Dictionary(uniqueKeysWithValues: try run.jsonLines().compactMap { line in (line["step"] as? String).map { ($0, line) } })
        func count(_ step: String, _ filter: String) -> Int? { (steps[step]?["filtered"] as? [String: Int])?[filter] }
        // The phantom: three taps reported before it was known, two held back and lifted unseen.
        #expect(steps["phantom"]?["published"] as? Int == 3 && count("phantom", "phantom_taps") == 2, "\(run.output)")
        let learned = try #require((steps["phantom"]?["learned"] as? [[String: Any]])?.first, "\(run.output)")
        #expect(learned["period"] as? Double == 1.2 && learned["x"] as? Double == 938 && learned["y"] as? Double == 527, "\(learned)")
        let said = steps["phantom"]?["said"] as? [String] ?? []
        #expect(said.contains("a phantom taps at (938, 527) every 1.2 s") && said.contains { $0.hasPrefix("phantoms so far: 0 in dead zones, 2 phantom taps,") }, "\(said)")
        #expect(steps["burst"]?["published"] as? Int == 0 && count("burst", "bursts") == 3, "\(run.output)")
        #expect(steps["ghosts"]?["published"] as? Int == 2 && steps["ghosts"]?["most_at_once"] as? Int == 2 && count("ghosts", "ghosts") == 2, "\(run.output)")
        // The storm: after its first three contacts lifted within 70 ms, every landing was held back (and lifted
        // unseen); its 21st such contact within a second made the panel quiet.
        #expect(count("storm", "storms") == 1 && count("storm", "storm_contacts") == 77, "\(run.output)")
        #expect((steps["storm"]?["published"] as? Int ?? 99) <= 10, "\(run.output)")
        let problems = steps["storm"]?["problems"] as? [String] ?? []
        #expect(problems.count == 1 && problems[0].hasPrefix("/dev/input/event61 flooded 21 contacts within a second that lifted within 70 ms (a touch storm)"), "\(problems)")
        // Healthy again once the quiet ended, unless this machine's load made the loop late (a
        // problem of its own, which a loaded test machine may well have).
        let after = steps["storm"]?["problems_after"] as? [String] ?? ["(none read)"]
        #expect(after.allSatisfy { $0.hasPrefix("the event loop runs") }, "\(after)")
        #expect(after.isEmpty == (steps["storm"]?["healthy_after"] as? String == "ok"), "\(run.output)")
    }
}
