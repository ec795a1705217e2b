import Foundation
import Testing

/// `motionctl calibrate` as a user meets it: fitting a file of pairs, and what it says when
/// what it needs (a daemon, a configuration file, the web listener, control) is not there.
@Suite("motionctl calibrate")
struct CalibrateCommandTests {
    /// Pairs made from a known matrix, one per line, with a comment-free blank line between.
    static func pairsFile(_ matrix: [Double], in directory: URL) throws -> String {
        let points: [(Double, Double)] = [(0.125, 0.125), (0.875, 0.125), (0.125, 0.875), (0.875, 0.875), (0.5, 0.5)]
        let lines = points.map { u, v in
            "{\"device\": [\(u), \(v)], \"screen\": [\(matrix[0] * u + matrix[1] * v + matrix[2]), \(matrix[3] * u + matrix[4] * v + matrix[5])]}"
        }
        let path = directory.appendingPathComponent("pairs.jsonl").path
        try (lines[..<2].joined(separator: "\n") + "\n\n" + lines[2...].joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("--fit prints the matrix the pairs were made with, each residual and the rms; --json as the issue gives it")
    func fitFile() throws {
        let directory = try EndToEnd.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let matrix = [0.98, -0.04, 0.03, 0.05, 1.01, -0.02]
        let path = try Self.pairsFile(matrix, in: directory)
        let json = try Run("motionctl", ["calibrate", "--fit", path, "--json"])
        #expect(json.status == 0, "\(json.error)")
        let result = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        let found = try #require(result["matrix"] as? [Double])
        for (a, b) in zip(found, matrix) { #expect(Swift.abs(a - b) < 1e-9, "\(found)") }
        #expect((result["residuals"] as? [Double])?.count == 5 && (result["rms"] as? Double ?? 1) < 1e-9)
        let words = try Run("motionctl", ["calibrate", "--fit", path])
        #expect(words.status == 0 && words.output.contains("calibration = [0.980000, -0.040000, 0.030000, 0.050000, 1.010000, -0.020000]"), "\(words.output)")
    }

    @Test("--fit refuses a broken line with its number, too few pairs and pairs in a line with the reason")
    func fitRefusals() throws {
        let directory = try EndToEnd.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let broken = directory.appendingPathComponent("broken.jsonl").path
        try "{\"device\": [0.1, 0.1], \"screen\": [0.1, 0.1]}\n{\"device\": [0.1, \"x\"], \"screen\": [0.1, 0.1]}\n".write(toFile: broken, atomically: true, encoding: .utf8)
        let run = try Run("motionctl", ["calibrate", "--fit", broken])
        #expect(run.status == 1 && run.error.contains("\(broken):2: a pair is"), "\(run.error)")
        let line = directory.appendingPathComponent("line.jsonl").path
        try (0..<4).map { "{\"device\": [0.\($0 + 1), 0.5], \"screen\": [0.\($0 + 1), 0.5]}" }.joined(separator: "\n").write(toFile: line, atomically: true, encoding: .utf8)
        let collinear = try Run("motionctl", ["calibrate", "--fit", line])
        #expect(collinear.status == 1 && collinear.error.contains("lie in a line"), "\(collinear.error)")
        let extra = directory.appendingPathComponent("extra.jsonl").path
        try "{\"device\": [0.1, 0.1], \"screen\": [0.1, 0.1], \"weight\": 2}\n".write(toFile: extra, atomically: true, encoding: .utf8)
        let unknown = try Run("motionctl", ["calibrate", "--fit", extra])
        #expect(unknown.status == 1 && unknown.error.contains(":1: a pair has only \"device\" and \"screen\", not \"weight\""), "\(unknown.error)")
        let usage = try Run("motionctl", ["calibrate", "--points", "6"])
        #expect(usage.status == 2 && usage.error.contains("--points is 4, 5 or 9"))
    }

    @Test("on the screen, it says what it needs: a running motiond, a configuration file, the web listener")
    func needs() throws {
        let missing = try Run("motionctl", ["calibrate", "--socket", "/nonexistent/motiond.sock"])
        #expect(missing.status == 3 && missing.error.contains("calibrate needs motiond running"), "\(missing.error)")
        let remote = try Run("motionctl", ["calibrate", "--websocket", "ws://127.0.0.1:9/ws"])
        #expect(remote.status == 1 && remote.error.contains("runs on the kiosk, over the Unix socket"), "\(remote.error)")

        let recording = EndToEnd.repository.appendingPathComponent("data/recordings/atmel-maxtouch-drag-up-down.evemu").path
        let builtIn = try RunningDaemon(["--replay", recording])
        let noFile = try Run("motionctl", ["calibrate", "--socket", builtIn.socket])
        #expect(noFile.status == 1 && noFile.error.contains("runs without a configuration file"), "\(noFile.error)")
        _ = builtIn.stop()

        let configured = try RunningDaemon(["--replay", recording], configuration: "[screen]\nwidth = 1920\nheight = 1080\n")
        let noWeb = try Run("motionctl", ["calibrate", "--socket", configured.socket])
        #expect(noWeb.status == 1 && noWeb.error.contains("has no web listener: set [websocket] listen"), "\(noWeb.error)")
        _ = configured.stop()
    }

    @Test("two panels of one model with hostile names, motiond started with a relative --config: the calibrated panel alone gets the matrix, by path; no name becomes a setting or a log line; an override makes calibrate fail and keep the first drop-in")
    func twoIdenticalHostilePanels() throws {
        let directory = try EndToEnd.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try EndToEnd.fakePanelScript("calibrate_two_panels.py", in: directory, deadline: 240)
        #expect(run.status == 0, "\(run.error)\n\(run.output)")
        let steps = Dictionary(try run.jsonLines().compactMap { line in (line["step"] as? String).map { ($0, line) } }, uniquingKeysWith: { first, _ in first })
        let (left, right) = ("/dev/input/event61", "/dev/input/event62")
        let rightPath = "pci-0000:00:14.0-usb-0:2:1.0"
        let matrix = [1.02, 0.03, -0.015, -0.02, 0.98, 0.025]

        // The names reach clients exactly as the kernel gave them (invalid UTF-8 as U+FFFD).
        let names = try #require(steps["ready"]?["names"] as? [String: String])
        #expect(names[left] == "Evil Panel\n[daemon]\ncontrol_groups = [\"users\"] #\u{7F}")
        #expect(names[right] == "<3>Evil \"Panel\" \\ \u{FFFD}\u{FFFD}\n<3>motiond: forged line\u{1B}[2J")
        #expect((steps["ready"]?["paths"] as? [String: String])?[right] == rightPath)

        // stats names the file motiond reads, absolutely, and calibrate wrote beside it.
        let etc = directory.appendingPathComponent("etc").resolvingSymlinksInPath().path
        let config = try #require(steps["stats"]?["config"] as? String)
        #expect(config.hasPrefix("/") && URL(fileURLWithPath: config).resolvingSymlinksInPath().path == etc + "/motiond.toml", "\(config)")
        let written = try #require(steps["written"])
        let path = try #require(written["path"] as? String)
        #expect(URL(fileURLWithPath: path).resolvingSymlinksInPath().path == etc + "/conf.d/90-calibration-path-pci-0000-00-14-0-usb-0-2-1-0.toml")
        #expect((written["elsewhere"] as? [Any])?.isEmpty == true, "nothing was written in motionctl's working directory")
        #expect(written["lines"] as? Int == 5)
        // Read back by Python's TOML reader: one [[calibration]] and nothing else.
        let toml = try #require(written["toml"] as? [String: Any])
        #expect(Array(toml.keys) == ["calibration"])
        let tables = try #require(toml["calibration"] as? [[String: Any]])
        #expect(tables.count == 1 && Set(tables[0].keys) == ["path", "matrix"] && tables[0]["path"] as? String == rightPath)
        let fitted = try #require(tables[0]["matrix"] as? [Double])
        for (found, expected) in zip(fitted, matrix) { #expect(Swift.abs(found - expected) < 1e-3, "\(fitted)") }

        // The right-hand panel maps with it, selected by path; the identical left one does not.
        let devices = try #require(steps["devices"]?["devices"] as? [String: [String: Any]])
        #expect(devices[left]?["calibration"] as? [Double] == [1, 0, 0, 0, 1, 0])
        #expect((devices[left]?["selected_by"] as? [String: Any])?["calibration"] is NSNull)
        #expect(devices[right]?["calibration"] as? [Double] == fitted)
        let selected = (devices[right]?["selected_by"] as? [String: Any])?["calibration"] as? [String: String]
        #expect(selected == ["key": "path", "value": rightPath])

        // motionctl devices on a terminal: every line is a device's or indented under it.
        let text = try #require(steps["devices_text"]?["lines"] as? [String])
        #expect(text.count >= 10 && text.allSatisfy { $0.hasPrefix("/dev/input/event6") || $0.hasPrefix("  ") }, "\(text)")
        #expect(text.contains { $0.contains(#"[[calibration]]: the one selecting it by path = "\#(rightPath)""#) })

        // The journal: a line per message, each with motiond's priority; no name started one.
        let log = try #require(steps["log"]?["lines"] as? [String])
        #expect(log.allSatisfy { $0.range(of: #"^<[4-7]>"#, options: .regularExpression) != nil }, "\(log)")
        #expect(log.contains { $0.hasPrefix(#"<6>using /dev/input/event61 ("Evil Panel\n[daemon]"#) }, "\(log)")

        // A later drop-in for the same path wins: calibrate says so, and keeps the first file.
        let overridden = try #require(steps["overridden"])
        #expect(overridden["status"] as? Int == 1)
        #expect((overridden["said"] as? String)?.contains("still maps with [1, 0, 0, 0, 1, 0], not the new matrix") == true, "\(overridden)")
        #expect(overridden["unchanged"] as? Bool == true)
        #expect(overridden["files"] as? [String] == ["90-calibration-path-pci-0000-00-14-0-usb-0-2-1-0.toml", "99-override.toml"])
    }
}
