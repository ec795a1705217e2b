import Foundation
import Testing

@Suite("motionctl spring")
struct SpringCommandTests {
    @Test("--json --at 0.1,0.2 prints the reference values")
    func referenceSamples() throws {
        let run = try Run("motionctl", ["spring", "--json", "--at", "0.1,0.2"])
        #expect(run.status == 0, "\(run.error)")
        let objects = try run.jsonLines()
        try #require(objects.count == 2, "\(run.output)")
        #expect(objects[0]["t"] as? Double == 0.1)
        #expect(Swift.abs(try #require(objects[0]["value"] as? Double) - 0.622017250) < 1e-6)
        #expect(Swift.abs(try #require(objects[0]["velocity"] as? Double) - 6.22766) < 1e-5)
        #expect(Swift.abs(try #require(objects[1]["value"] as? Double) - 0.970531876) < 1e-6)
    }

    @Test("the default run samples at 60 Hz until rest and ends with a rest line at the destination")
    func defaultTrajectory() throws {
        let run = try Run("motionctl", ["spring", "--json"])
        #expect(run.status == 0)
        let objects = try run.jsonLines()
        let last = try #require(objects.last)
        #expect(last["rest"] as? Bool == true)
        let samples = objects.dropLast()
        let restTime = try #require(last["t"] as? Double)
        #expect(restTime > 0.4629 && restTime < 0.6)
        #expect(samples.last?["value"] as? Double == 1.0)
        #expect(samples.last?["t"] as? Double == restTime)
        for (index, sample) in samples.enumerated() {
            #expect(Swift.abs(try #require(sample["t"] as? Double) - Double(index) / 60) < 1e-12)
        }
        let peak = samples.compactMap { $0["value"] as? Double }.max() ?? 0
        #expect(peak > 1.01 && peak < 1.0129, "the overshoot shows: \(peak)")
    }

    @Test("a toss from 0 to 100 at +1000/s, at 120 Hz")
    func toss() throws {
        let run = try Run("motionctl", ["spring", "--json", "--from", "0", "--to", "100", "--velocity", "1000", "--rate", "120"])
        #expect(run.status == 0)
        let samples = try run.jsonLines().dropLast()
        let atTenth = try #require(samples.first { Swift.abs(($0["t"] as? Double ?? 0) - 0.1) < 1e-9 })
        #expect(Swift.abs(try #require(atTenth["value"] as? Double) - 80.4113) < 1e-4)
    }

    @Test("spring constants can be given in Origami or POP units")
    func designerUnits() throws {
        let pop = try Run("motionctl", ["spring", "--bounciness", "4", "--speed", "12"])
        #expect(pop.status == 0)
        #expect(pop.lines.first?.contains("tension 342.1") == true, "\(pop.lines.first ?? "")")
        let origami = try Run("motionctl", ["spring", "--origami-tension", "40", "--origami-friction", "7"])
        #expect(origami.status == 0)
        #expect(origami.lines.first?.contains("tension 230.2") == true)
    }

    @Test("the table lists t, value and velocity in aligned columns and says when it rests")
    func table() throws {
        let run = try Run("motionctl", ["spring", "--at", "0.1,0.2"])
        #expect(run.status == 0)
        #expect(run.lines.count == 4)
        #expect(run.lines[1].contains("value") && run.lines[1].contains("velocity"))
        #expect(run.lines[2].contains("0.622017250"))
        #expect(Set(run.lines[1...].map(\.count)).count == 1, "columns are aligned")
    }

    @Test("bad arguments give a clear error and exit code 2", arguments: [
        (["spring", "--tension", "-3"], "tension must be a positive number"),
        (["spring", "--mass", "-1"], "mass must be a positive number"),
        (["spring", "--friction", "0"], "never comes to rest"),
        (["spring", "--tension", "abc"], "'abc' is invalid"),
        (["spring", "--rate", "0"], "--rate must be a positive number"),
        (["spring", "--at", "0.2,0.1"], "must increase"),
        (["spring", "--at", "0.1,x"], "'x' is not a time"),
        (["spring", "--tension", "300", "--bounciness", "3"], "choose one way"),
        (["spring", "--bounciness", "3"], "go together"),
        (["spring", "--rate", "60", "--at", "0.1"], "not both"),
        (["spring", "--no-such-option"], "Unknown option"),
    ])
    func badArguments(arguments: [String], message: String) throws {
        let run = try Run("motionctl", arguments)
        #expect(run.status == 2)
        #expect(run.error.contains(message), "stderr: \(run.error)")
        #expect(run.output.isEmpty)
    }

    @Test("--svg draws the curve, the destination and the rest time")
    func svg() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("spring-\(UUID().uuidString).svg").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let run = try Run("motionctl", ["spring", "--json", "--svg", path])
        #expect(run.status == 0)
        let svg = try String(contentsOfFile: path, encoding: .utf8)
        #expect(svg.hasPrefix("<svg"))
        #expect(svg.contains("destination 1"))
        #expect(svg.contains("at rest 0.500 s"))
        let samples = try run.jsonLines().count - 1
        let polyline = try #require(svg.split(separator: "\n").first { $0.hasPrefix("<polyline") })
        let points = polyline.split(separator: "\"")[1].split(separator: " ")
        #expect(points.count == samples)

        let unwritable = try Run("motionctl", ["spring", "--svg", "/nonexistent-directory/x.svg"])
        #expect(unwritable.status == 2)
        #expect(unwritable.error.contains("cannot write"))
    }
}

@Suite("Executables")
struct ExecutableTests {
    @Test("--help and --version work on both executables", arguments: ["motiond", "motionctl"])
    func helpAndVersion(executable: String) throws {
        let help = try Run(executable, ["--help"])
        #expect(help.status == 0)
        #expect(help.output.contains("USAGE: \(executable)"))
        let version = try Run(executable, ["--version"])
        #expect(version.status == 0)
        let text = version.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(text.split(separator: ".").count == 3 && text.allSatisfy { $0.isNumber || $0 == "." }, "\(text)")
    }
}

@Suite("motionctl gestures")
struct GesturesCommandTests {
    @Test("every recording replays through the recognizers with the documented JSON keys", arguments: EndToEnd.recordingsWithEvents)
    func everyRecording(name: String) throws {
        let run = try Run("motionctl", ["gestures", EndToEnd.recordings.appendingPathComponent(name + ".evemu").path, "--json"])
        #expect(run.status == 0, "\(run.error)")
        let events = try run.jsonLines()
        #expect(!events.isEmpty)
        for event in events {
            #expect(event["t"] is Double && event["touches"] is Int && event["state"] is String, "\(event)")
            switch event["gesture"] as? String {
            case "drag": #expect(event["translation"] is [String: Double] && event["velocity"] is [String: Double])
            case "pinch": #expect(event["scale"] is Double && event["velocity"] is Double)
            case "rotate": #expect(event["rotation"] is Double && event["velocity"] is Double)
            case "tap": #expect(event["count"] is Int)
            default: Issue.record("unknown gesture in \(event)")
            }
        }
    }

    @Test("--recognizers chooses which run, and a wrong name is a usage error")
    func recognizerChoice() throws {
        let taps = EndToEnd.recordings.appendingPathComponent("whot-evemu-devices__atmel-maxtouch__1f-fast-taps-x9.evemu").path
        // A screen the size of the panel's 800 × 480 units, so that the nine taps are all
        // within the multiple-tap distance; on 1920 × 1080 the ninth lands 63 px from the
        // eighth and starts a new count.
        let panelSized = try EndToEnd.scratch().appendingPathComponent("panel.toml")
        try "[screen]\nwidth = 800\nheight = 480\n".write(to: panelSized, atomically: true, encoding: .utf8)
        let onlyTaps = try Run("motionctl", ["gestures", taps, "--json", "--recognizers", "tap", "--config", panelSized.path])
        let events = try onlyTaps.jsonLines()
        #expect(events.count == 9 && events.allSatisfy { $0["gesture"] as? String == "tap" })
        #expect(events.map { $0["count"] as? Int } == (1...9).map { $0 })
        let wrong = try Run("motionctl", ["gestures", taps, "--recognizers", "drag,fling"])
        #expect(wrong.status == 2 && wrong.error.contains("'fling' is none of them") && wrong.error.contains("long_press"))
        let newer = try Run("motionctl", ["gestures", taps, "--recognizers", "long_press,swipe,edge_swipe", "--json"])
        #expect(newer.status == 0 && newer.output.isEmpty, "nine fast taps are no long press or swipe: \(newer.output)")
        let table = try Run("motionctl", ["gestures", taps, "--config", panelSized.path])
        #expect(table.lines.first?.contains("gesture") == true && table.lines.contains { $0.contains("count 9") })
    }

    /// The same recording as a panel with 41 × 68 times as many units and no resolution
    /// (0…32799 by 0…32639, as many resistive and older capacitive panels report).
    static func finerPanel(_ text: String) -> String {
        let factor: [String: Int] = ["00": 41, "35": 41, "01": 68, "36": 68]
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            let fields = line.split(separator: "#", omittingEmptySubsequences: false)[0].split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            if fields.first == "A:", let f = factor[fields[1]] {
                return "A: \(fields[1]) 0 \((Int(fields[3])! + 1) * f - 1) 0 0 0"
            }
            if fields.first == "E:", fields[2] == "0003", let f = factor[fields[3].suffix(2).description], fields[3].hasPrefix("00") {
                return "E: \(fields[1]) 0003 \(fields[3]) \(Int(fields[4])! * f)"
            }
            return String(line)
        }.joined(separator: "\n")
    }

    @Test("thresholds and output are in screen pixels: a panel with 41 times the units gives the same gestures", arguments: [
        "whot-evemu-devices__atmel-maxtouch__1f-fast-taps-x9", "whot-evemu-devices__atmel-maxtouch__1f-drag-up-down",
        "whot-evemu-devices__atmel-maxtouch__4f-drag-down",
    ])
    func screenPixels(name: String) throws {
        let original = EndToEnd.recordings.appendingPathComponent(name + ".evemu")
        let finer = try EndToEnd.scratch().appendingPathComponent("finer.evemu")
        try Self.finerPanel(String(contentsOf: original, encoding: .utf8)).write(to: finer, atomically: true, encoding: .utf8)
        let expected = try Run("motionctl", ["gestures", original.path, "--json"])
        let got = try Run("motionctl", ["gestures", finer.path, "--json"])
        #expect(expected.status == 0 && got.status == 0, "\(expected.error)\(got.error)")
        let (a, b) = (try expected.jsonLines(), try got.jsonLines())
        #expect(a.count == b.count && !a.isEmpty)
        for (x, y) in zip(a, b) {
            #expect(x["gesture"] as? String == y["gesture"] as? String && x["state"] as? String == y["state"] as? String)
            if let t1 = x["translation"] as? [String: Double], let t2 = y["translation"] as? [String: Double] {
                // Within a pixel: the finer panel's units fall between the coarse one's.
                #expect(abs(t1["x"]! - t2["x"]!) < 1 && abs(t1["y"]! - t2["y"]!) < 1, "\(t1) \(t2)")
            }
        }
        if name.hasSuffix("taps-x9") {
            // Still fingers: nine taps, and no drag ever begins on the finer panel either.
            #expect(b.filter { $0["gesture"] as? String == "tap" && $0["state"] as? String == "recognized" }.count == 9)
            #expect(!b.contains { $0["gesture"] as? String == "drag" && $0["state"] as? String == "began" })
        }
    }

    @Test("--config maps the recording onto its screen: half the screen, half the translation")
    func configuredScreen() throws {
        let drag = EndToEnd.recordings.appendingPathComponent("whot-evemu-devices__atmel-maxtouch__1f-drag-up-down.evemu").path
        let config = try EndToEnd.scratch().appendingPathComponent("small.toml")
        try "[screen]\nwidth = 960\nheight = 540\n".write(to: config, atomically: true, encoding: .utf8)
        let full = try Run("motionctl", ["gestures", drag, "--json", "--recognizers", "drag"]).jsonLines()
        let half = try Run("motionctl", ["gestures", drag, "--json", "--recognizers", "drag", "--config", config.path]).jsonLines()
        let farthest = { (events: [[String: Any]]) in
            events.compactMap { ($0["translation"] as? [String: Double])?["y"] }.max { abs($0) < abs($1) }
        }
        let (f, h) = (try #require(farthest(full)), try #require(farthest(half)))
        // The finger goes most of the way up the panel: hundreds of pixels on either screen.
        #expect(abs(f / 2 - h) < 1 && abs(h) > 100, "\(f) \(h)")
    }
}
