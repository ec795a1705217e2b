import Foundation
import Testing

/// `motionctl predict` on the repository's recordings: its output, and what
/// docs/prediction.md says of it.
@Suite("motionctl predict")
struct PredictCommandTests {
    static let recordings = EndToEnd.repository.appendingPathComponent("Tests/Fixtures/recordings")
    static func recording(_ name: String) -> String { recordings.appendingPathComponent(name).path }
    static let drag = recording("whot-evemu-devices__atmel-maxtouch__1f-drag-up-down.evemu")
    static let fling = recording("aosp-frameworks-base__pixel-tablet-nvt-touchscreen__1f-swipe.evemu")

    /// `--json`'s p95 of each predictor, and its unit.
    static func p95(_ path: String, horizon: Double = 0.016) throws -> (unit: String, values: [String: Double]) {
        let run = try Run("motionctl", ["predict", path, "--horizon", "\(horizon)", "--json"], deadline: 120)
        #expect(run.status == 0, "\(run.error)")
        let rows = try run.jsonLines()
        let unit = rows.first?["p95_mm"] != nil ? "mm" : "px"
        return (unit, Dictionary(uniqueKeysWithValues: rows.map { ($0["predictor"] as! String, $0["p95_\(unit)"] as! Double) }))
    }

    @Test("--json: one object per predictor, in millimetres on a panel with a resolution and pixels without; --predictor picks one")
    func json() throws {
        let run = try Run("motionctl", ["predict", Self.fling, "--json"])
        let rows = try run.jsonLines()
        #expect(rows.map { $0["predictor"] as? String } == ["none", "linear", "least_squares", "kalman", "default"])
        for row in rows {
            #expect(Set(row.keys) == ["predictor", "horizon", "mean_mm", "p95_mm", "max_mm", "samples"], "\(row)")
        }
        #expect(try Self.p95(Self.drag).unit == "px")
        let one = try Run("motionctl", ["predict", Self.drag, "--predictor", "kalman", "--json"]).jsonLines()
        #expect(one.count == 1 && one.first?["predictor"] as? String == "kalman")
    }

    @Test("the lag without prediction is what the finger travels in the horizon; the text says each predictor's share of it")
    func text() throws {
        let run = try Run("motionctl", ["predict", Self.drag])
        #expect(run.status == 0)
        #expect(run.output.contains("149 predictions compared 16 ms ahead, errors in screen pixels"), "\(run.output)")
        #expect(run.output.contains("(the lag: where the finger was, against where it is)"))
        let eight = try Self.p95(Self.drag, horizon: 0.008).values["none"]!, sixteen = try Self.p95(Self.drag).values["none"]!
        #expect(sixteen > 1.8 * eight && sixteen < 2.2 * eight, "the lag grows with the horizon: \(eight), \(sixteen)")
    }

    @Test("wrong arguments are refused with exit 2 and the reason", arguments: [["--horizon", "0.2"], ["--horizon", "nan"], ["--predictor", "magic"]])
    func refused(arguments: [String]) throws {
        let run = try Run("motionctl", ["predict", Self.drag] + arguments)
        #expect(run.status == 2 && (run.error.contains("--horizon") || run.error.contains("--predictor")), "\(run.error)")
    }

    @Test("a recording without a contact that moves is refused with exit 1, saying so")
    func nothingToPredict() throws {
        let run = try Run("motionctl", ["predict", Self.recording("whot-evemu-devices__elan-touchscreen-04f3-010c.desc")])
        #expect(run.status == 1 && run.error.contains("nothing to predict"), "\(run.output)\(run.error)")
    }

    /// A recording on the generated clean panel (10 units/mm, 345 × 194 mm) of `contacts`
    /// one after another, each samples (time in seconds, x and y in device units) and lifted
    /// 8 ms after its last.
    static func recording(of contacts: [[(time: Double, x: Int, y: Int)]], in directory: URL, named name: String) throws -> String {
        let panel = try String(contentsOfFile: Self.recording("generated/curve.clean.evemu"), encoding: .utf8)
        var lines = panel.split(separator: "\n").filter { !$0.hasPrefix("E:") }.map(String.init)
        func event(_ time: Double, _ type: Int, _ code: Int, _ value: Int) {
            lines.append("E: \(String(format: "%.6f", time)) \(String(format: "%04x %04x", type, code)) \(value)")
        }
        for (index, samples) in contacts.enumerated() {
            for (number, sample) in samples.enumerated() {
                if number == 0 {
                    event(sample.time, 3, 0x39, index + 1)
                    event(sample.time, 1, 0x14a, 1)
                }
                event(sample.time, 3, 0x35, sample.x)
                event(sample.time, 3, 0x36, sample.y)
                event(sample.time, 3, 0x00, sample.x)
                event(sample.time, 3, 0x01, sample.y)
                event(sample.time, 0, 0, 0)
            }
            let lift = (samples.last?.time ?? 0) + 0.008
            event(lift, 3, 0x39, -1)
            event(lift, 1, 0x14a, 0)
            event(lift, 0, 0, 0)
        }
        let path = directory.appendingPathComponent(name).path
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("nothing predicted after the filters and the horizon is refused with exit 1 and the reason, not a table of zeros: a one-sample contact, contacts shorter than the horizon, a contact the jump filter cancels at every sample")
    func nothingScored() throws {
        let directory = try EndToEnd.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        // One sample, lifted 8 ms later.
        let one = try Self.recording(of: [[(time: 1.0, x: 1000, y: 1000)]], in: directory, named: "one.evemu")
        // Three drags of three samples 4 ms apart: each ends 16 ms after it lands.
        var drags: [[(time: Double, x: Int, y: Int)]] = []
        for drag in 0..<3 {
            drags.append((0..<3).map { step in (time: 1.0 + Double(drag) + 0.004 * Double(step), x: 1000 + 10 * step, y: 1000) })
        }
        let short = try Self.recording(of: drags, in: directory, named: "short.evemu")
        // 10,000 samples 1 ms apart, each in the opposite corner (330 mm away): each is a jump
        // of more than jump_mm (50), cancelled and begun again.
        var corners: [(time: Double, x: Int, y: Int)] = []
        for step in 0..<10_000 {
            let far = step % 2 == 1
            corners.append((time: 1.0 + 0.001 * Double(step), x: far ? 3300 : 100, y: far ? 1800 : 100))
        }
        let jumping = try Self.recording(of: [corners], in: directory, named: "corners.evemu")
        let cases: [(path: String, said: String)] = [
            (one, "1 contact(s) of two samples or more, the longest lasting 8 ms"),
            (short, "3 contact(s) of two samples or more, the longest lasting 16 ms"),
            (jumping, "the contact filters cancelled 9999 contacts that jumped"),
        ]
        for (path, said) in cases {
            for json in [false, true] {
                let run = try Run("motionctl", ["predict", path, "--horizon", "0.017"] + (json ? ["--json"] : []))
                #expect(run.status == 1 && run.output.isEmpty, "\(run.output)")
                #expect(run.error.contains("nothing to predict 17 ms ahead"), "\(run.error)")
                #expect(run.error.contains(said), "\(run.error)")
            }
        }
        // At 15 ms each short drag's landing is compared with where it lifted: a table.
        let shorter = try Run("motionctl", ["predict", short, "--horizon", "0.015", "--json"])
        #expect(shorter.status == 0, "\(shorter.error)")
        let compared = try shorter.jsonLines().first?["samples"] as? Int
        #expect(compared == 3, "\(shorter.output)")
    }

    @Test("--svg draws the 95th percentile against the horizon, a line per predictor")
    func svg() throws {
        let directory = try EndToEnd.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("p.svg").path
        let run = try Run("motionctl", ["predict", Self.drag, "--svg", file])
        #expect(run.status == 0, "\(run.error)")
        let svg = try String(contentsOfFile: file, encoding: .utf8)
        #expect(svg.hasPrefix("<svg") && svg.components(separatedBy: "<polyline").count - 1 == 5)
        #expect(svg.contains("horizon (ms)") && svg.contains(">default</text>"))
    }

    @Test("the default is at or below Chromium's Kalman predictor's p95 on every real recording, at 8, 16 and 25 ms",
          arguments: ["aosp-frameworks-base__pixel-tablet-nvt-touchscreen__1f-swipe.evemu", "whot-evemu-devices__atmel-maxtouch__1f-drag-up-down.evemu",
                      "whot-evemu-devices__atmel-maxtouch__1f-fast-taps-x9.evemu", "whot-evemu-devices__atmel-maxtouch__2f-touch-hold-release.evemu",
                      "whot-evemu-devices__atmel-maxtouch__4f-drag-down.evemu", "whot-evemu-devices__ep0430m09__2f-drag-scroll.evemu",
                      "whot-evemu-devices__ep0430m09__2f-drag-scroll.protocol-a.evemu"])
    func beatsKalman(name: String) throws {
        for horizon in [0.008, 0.016, 0.025] {
            let p95 = try Self.p95(Self.recording(name), horizon: horizon).values
            #expect(p95["default"]! <= p95["kalman"]!, "\(name) at \(horizon) s: \(p95)")
        }
    }

    @Test("on smooth generated movement on a clean panel the default leaves at most a quarter of the lag", arguments: ["curve.clean.evemu", "wave.clean.evemu"])
    func smooth(name: String) throws {
        let p95 = try Self.p95(Self.recording("generated/" + name)).values
        #expect(p95["default"]! <= 0.25 * p95["none"]!, "\(p95)")
    }

    @Test("docs/prediction.md's tables are what motionctl predict measures (scripts/prediction-table)")
    func documented() throws {
        let run = try Run("/usr/bin/python3", [EndToEnd.repository.appendingPathComponent("scripts/prediction-table").path,
                                               Run.productsDirectory.appendingPathComponent("motionctl").path], absolute: true, deadline: 300)
        #expect(run.status == 0, "\(run.error)")
        let doc = try String(contentsOf: EndToEnd.repository.appendingPathComponent("docs/prediction.md"), encoding: .utf8)
        let begin = try #require(doc.range(of: "<!-- prediction-table:begin -->\n")), end = try #require(doc.range(of: "<!-- prediction-table:end -->"))
        #expect(String(doc[begin.upperBound..<end.lowerBound]) == run.output.trimmingCharacters(in: .newlines) + "\n",
                "regenerate the table with scripts/prediction-table")
    }
}
