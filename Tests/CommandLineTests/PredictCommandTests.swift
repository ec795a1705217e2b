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
