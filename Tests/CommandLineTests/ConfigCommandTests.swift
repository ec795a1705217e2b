import Foundation
import Testing

@Suite("motionctl config check and simulate")
struct ConfigCommandTests {
    static let example = EndToEnd.repository.appendingPathComponent("config/motiond.toml").path
    static func recording(_ name: String) -> String { EndToEnd.recordings.appendingPathComponent(name + ".evemu").path }

    @Test("config check prints what the example defines")
    func checkExample() throws {
        let run = try Run("motionctl", ["config", "check", Self.example])
        #expect(run.status == 0, "\(run.error)")
        #expect(run.lines.first == "\(Self.example): OK")
        for expected in ["card: centre (866, 830)", "tossable to the nearest of left, middle, right", "photo:", "directly manipulable",
                         "drawer:", "change direction past 100 px/s, vertical", "marker:", "set position on tap (moves its attach destination)"] {
            #expect(run.output.contains(expected), "missing: \(expected)")
        }
    }

    @Test("config check shows what an entry says to believe of a panel's size, and how many quirks motiond ships")
    func checkSizes() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("sizes-\(UUID().uuidString).toml").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try "[[device]]\nids = \"1234:5678\"\nsize_mm = [344, 194]\ntouch_resolution = 95\n".write(toFile: file, atomically: true, encoding: .utf8)
        let run = try Run("motionctl", ["config", "check", file])
        #expect(run.status == 0, "\(run.error)")
        #expect(run.output.contains("ids 0x1234:0x5678, output [0, 0, 1920, 1080] (the whole screen), believed 344 × 194 mm, contact sizes at 95 units/mm"), "\(run.output)")
        #expect(run.output.contains(" shipped with motiond for panels that misdescribe themselves"), "\(run.output)")
    }

    @Test("config check reads the drop-ins beside the file, lists them, and shows the merged result")
    func checkDropIns() throws {
        let directory = try EndToEnd.scratch()
        let file = directory.appendingPathComponent("motiond.toml").path
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("conf.d"), withIntermediateDirectories: true)
        try "[screen]\nwidth = 1920\nheight = 1080\n".write(toFile: file, atomically: true, encoding: .utf8)
        let dropIn = directory.appendingPathComponent("conf.d/50-portrait.toml").path
        try "[screen]\nwidth = 1080\nheight = 1920\n\n[[element]]\nid = \"banner\"\ncenter = [540, 100]\nsize = [1080, 200]\n".write(toFile: dropIn, atomically: true, encoding: .utf8)
        let run = try Run("motionctl", ["config", "check", file])
        #expect(run.status == 0, "\(run.error)")
        #expect(Array(run.lines.prefix(2)) == ["\(file): OK", "  with drop-in \(dropIn)"])
        #expect(run.output.contains("screen: 1080 × 1920 px") && run.output.contains("banner: centre (540, 100)"), "\(run.output)")
        try "[[element]]\nid = \"banner\"\n".write(toFile: dropIn, atomically: true, encoding: .utf8)
        let refused = try Run("motionctl", ["config", "check", file])
        #expect(refused.status == 1 && refused.error.hasPrefix("\(dropIn):1: element 'banner' needs a center"), "\(refused.error)")
    }

    @Test("config check describes the WebSocket listener, and refuses a remote one without allow_remote, on its line")
    func checkWebSocket() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("web-\(UUID().uuidString).toml").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try "[websocket]\nlisten = \"127.0.0.1:8765\"\nallowed_origins = [\"null\"]\n".write(toFile: file, atomically: true, encoding: .utf8)
        let run = try Run("motionctl", ["config", "check", file])
        #expect(run.status == 0, "\(run.error)")
        for expected in ["websocket: http://127.0.0.1:8765/ (live page, /motiond.js) and ws://127.0.0.1:8765/ws, this machine only",
                         "origins allowed: null", "control: none (no control_token_file): WebSocket clients are read-only"] {
            #expect(run.output.contains(expected), "missing: \(expected) in \(run.output)")
        }
        try "[daemon]\nframe_rate = 60\n\n[websocket]\nlisten = \"192.168.1.20:8765\"\n".write(toFile: file, atomically: true, encoding: .utf8)
        let remote = try Run("motionctl", ["config", "check", file])
        #expect(remote.status == 1)
        #expect(remote.error.contains("\(file):5: 192.168.1.20 can be reached from other machines"), "\(remote.error)")
    }

    @Test("config check describes the TUIO targets, and refuses a bad one on its line")
    func checkTUIO() throws {
        let example = try Run("motionctl", ["config", "check", Self.example])
        #expect(example.output.contains("tuio: TUIO 1.1 over UDP to 127.0.0.1:3333, source \"motiond@"), "\(example.output)")
        #expect(example.output.contains("contacts as /tuio/2Dcur; elements card, photo as /tuio/2Dobj"))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tuio-\(UUID().uuidString).toml").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try "[[tuio]]\ntarget = \"192.168.1.20:3333\"\nversion = \"2.0\"\nsource = \"table\"\n".write(toFile: file, atomically: true, encoding: .utf8)
        let remote = try Run("motionctl", ["config", "check", file])
        #expect(remote.status == 0, "\(remote.error)")
        #expect(remote.output.contains("tuio: TUIO 2.0 over UDP to 192.168.1.20:3333, source \"table\": contacts as /tuio2/ptr (another machine: motiond.service allows only loopback"), "\(remote.output)")
        try "[daemon]\nframe_rate = 60\n\n[[tuio]]\ntarget = \"tables.local:3333\"\n".write(toFile: file, atomically: true, encoding: .utf8)
        let broken = try Run("motionctl", ["config", "check", file])
        #expect(broken.status == 1)
        #expect(broken.error.contains("\(file):5: 'tables.local:3333' is not ADDRESS:PORT"), "\(broken.error)")
    }

    @Test("config check refuses a broken file with FILE:LINE: reason and exit code 1")
    func checkBroken() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("broken-\(UUID().uuidString).toml").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try "[daemon]\nframe_rate = 120\n\n[[element]]\nid = \"x\"\ncenter = [1, 2]\nsize = [3, 4]\nopacity = 0.5\n".write(toFile: file, atomically: true, encoding: .utf8)
        let run = try Run("motionctl", ["config", "check", file])
        #expect(run.status == 1)
        #expect(run.error.contains("\(file):8: unknown key 'opacity' in [element[0]]"), "\(run.error)")
        #expect(run.output.isEmpty)
    }

    @Test("simulate: the tablet fling tosses the card to the left snap point, the same bytes every run")
    func simulateFling() throws {
        let arguments = ["simulate", "--config", Self.example, Self.recording("aosp-frameworks-base__pixel-tablet-nvt-touchscreen__1f-swipe"), "--json"]
        let first = try Run("motionctl", arguments), second = try Run("motionctl", arguments)
        #expect(first.status == 0, "\(first.error)")
        #expect(first.output == second.output, "not deterministic")
        let updates = try first.jsonLines()
        #expect(updates.allSatisfy { $0["t"] is Double && $0["stream"] is String && $0["value"] != nil })
        #expect(updates.contains { $0["stream"] as? String == "card.snap" && $0["value"] as? String == "left" })
        let positions = updates.filter { $0["stream"] as? String == "card.position" }.compactMap { $0["value"] as? [String: Double] }
        #expect(positions.last == ["x": 300, "y": 830])
        #expect(updates.last { $0["stream"] as? String == "card.state" }?["value"] as? String == "atRest")
        let times = updates.compactMap { $0["t"] as? Double }
        #expect(zip(times.dropFirst(), times).allSatisfy { $0 >= $1 }, "times in order")
    }

    @Test("simulate --events: the fling's drag begins and ends after its frame's values, as a subscriber hears them")
    func simulateEvents() throws {
        let recording = Self.recording("aosp-frameworks-base__pixel-tablet-nvt-touchscreen__1f-swipe")
        let run = try Run("motionctl", ["simulate", "--config", Self.example, recording, "--events", "--json"])
        #expect(run.status == 0, "\(run.error)")
        let lines = try run.jsonLines()
        let events = lines.filter { $0["state"] != nil }
        #expect(events.map { "\($0["stream"]!) \($0["state"]!)" } == ["card.drag began", "card.drag ended"])
        // Each after its frame's values: the move that began the drag; the toss's snap point
        // and destination chosen at the lift; the spring's frames after.
        let began = try #require(lines.firstIndex { $0["state"] as? String == "began" })
        let ended = try #require(lines.firstIndex { $0["state"] as? String == "ended" })
        #expect(lines[..<began].contains { $0["stream"] as? String == "card.position" && $0["t"] as? Double == events[0]["t"] as? Double })
        #expect(lines[ended - 2]["stream"] as? String == "card.snap" && lines[ended - 1]["stream"] as? String == "card.destination")
        #expect(lines[(ended + 1)...].allSatisfy { ($0["t"] as? Double ?? 0) > events[1]["t"] as? Double ?? 0 })
        // Without --events, the values alone, as before.
        let values = try Run("motionctl", ["simulate", "--config", Self.example, recording, "--json"]).jsonLines()
        #expect(values.count == lines.count - events.count && values.allSatisfy { $0["value"] != nil })
    }

    @Test("simulate: taps anywhere move the marker, which glides there on its spring")
    func simulateTaps() throws {
        let run = try Run("motionctl", ["simulate", "--config", Self.example, Self.recording("whot-evemu-devices__atmel-maxtouch__1f-fast-taps-x9"), "--json"])
        #expect(run.status == 0)
        let positions = try run.jsonLines().filter { $0["stream"] as? String == "marker.position" }.compactMap { $0["value"] as? [String: Double] }
        // The last tap, at (373, 252) on the 800 × 480 panel, is (895.2, 567) on the 1920 × 1080 screen.
        let last = try #require(positions.last)
        #expect(Swift.abs(last["x"]! - 895.2) < 1e-6 && Swift.abs(last["y"]! - 567) < 1e-6)
        #expect(positions.count > 20, "it glides, frame by frame")
    }

    @Test("simulate without a configuration uses the built-in full-screen surface")
    func simulateDefault() throws {
        let run = try Run("motionctl", ["simulate", Self.recording("whot-evemu-devices__ep0430m09__2f-drag-scroll")])
        #expect(run.status == 0)
        #expect(run.output.contains("surface.position"))
    }

    @Test("simulate says so when no [[device]] entry selects the recorded device")
    func simulateUnselected() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("elan-\(UUID().uuidString).toml").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try "[[device]]\nname = \"ELAN*\"\n".write(toFile: file, atomically: true, encoding: .utf8)
        let run = try Run("motionctl", ["simulate", "--config", file, Self.recording("whot-evemu-devices__atmel-maxtouch__1f-fast-taps-x9")])
        #expect(run.status == 1)
        #expect(run.error.contains("selects the recorded device \"Atmel maXTouch Touchscreen\""))
    }
}
