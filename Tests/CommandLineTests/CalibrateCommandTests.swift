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

    @Test("--fit refuses pairs whose fit is not finite, in words and in JSON, with the reason and exit 1; it never prints inf, nan or null, and fits touches so large their squares overflow")
    func fitBeyondDoubles() throws {
        let directory = try EndToEnd.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Finite targets near the largest double: the sums of products overflow.
        let overflow = directory.appendingPathComponent("overflow.jsonl").path
        try [(0, 0, "1e300"), (1, 0, "-1e300"), (0, 1, "1e300"), (1, 1, "1.7e308")]
            .map { "{\"device\": [\($0.0), \($0.1)], \"screen\": [\($0.2), 0]}" }.joined(separator: "\n")
            .write(toFile: overflow, atomically: true, encoding: .utf8)
        for json in [false, true] {
            let run = try Run("motionctl", ["calibrate", "--fit", overflow] + (json ? ["--json"] : []))
            #expect(run.status == 1 && run.output.isEmpty, "\(run.output)")
            #expect(run.error.contains("\(overflow): the matrix that fits these pairs is not finite"), "\(run.error)")
        }

        // Touches at 1e160 units, 1e161 from the origin: the matrix is tiny but finite and
        // exact, and the words say why motiond.toml would not take it instead of suggesting it.
        let large = directory.appendingPathComponent("large.jsonl").path
        let targets = [(0.125, 0.125), (0.875, 0.125), (0.125, 0.875), (0.875, 0.875), (0.5, 0.5)]
        try targets.map { "{\"device\": [\($0.0 * 1e160 + 1e161), \($0.1 * 1e160 + 1e161)], \"screen\": [\($0.0), \($0.1)]}" }
            .joined(separator: "\n").write(toFile: large, atomically: true, encoding: .utf8)
        let json = try Run("motionctl", ["calibrate", "--fit", large, "--json"])
        #expect(json.status == 0, "\(json.error)")
        for word in ["null", "inf", "nan"] { #expect(!json.output.lowercased().contains(word), "\(json.output)") }
        let result = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        let matrix = try #require(result["matrix"] as? [Double])
        #expect(Swift.abs(matrix[0] * 1e160 - 1) < 1e-9 && Swift.abs(matrix[4] * 1e160 - 1) < 1e-9, "\(matrix)")
        #expect(Swift.abs(matrix[1]) < 1e-168 && Swift.abs(matrix[3]) < 1e-168, "\(matrix)")
        #expect((result["rms"] as? Double ?? 1) < 1e-9, "\(json.output)")
        let words = try Run("motionctl", ["calibrate", "--fit", large])
        #expect(words.status == 0 && !words.output.contains("as motiond.toml takes it"), "\(words.output)")
        #expect(words.output.contains("motiond.toml refuses it: this calibration matrix maps the whole panel onto"), "\(words.output)")
        for word in ["inf", "nan"] { #expect(!words.output.contains(word), "\(words.output)") }
    }

    @Test("--fit takes lines of up to 4096 bytes and refuses a longer one with its number, from a file and from standard input that has not ended")
    func fitLongLine() throws {
        let directory = try EndToEnd.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let pairs = [(0.1, 0.1), (0.9, 0.1), (0.1, 0.9)].map { "{\"device\": [\($0.0), \($0.1)], \"screen\": [\($0.0), \($0.1)]}" }
        // Each padded with spaces to exactly 4096 bytes: taken.
        let padded = pairs.map { $0 + String(repeating: " ", count: 4096 - $0.utf8.count) }
        let longest = directory.appendingPathComponent("longest.jsonl").path
        try padded.joined(separator: "\n").write(toFile: longest, atomically: true, encoding: .utf8)
        let taken = try Run("motionctl", ["calibrate", "--fit", longest, "--json"])
        #expect(taken.status == 0, "\(taken.error)")

        // One byte more on the third line: refused, naming it.
        let tooLong = directory.appendingPathComponent("too-long.jsonl").path
        try (padded[0] + "\n\n" + padded[1] + " \n" + padded[2] + "\n").write(toFile: tooLong, atomically: true, encoding: .utf8)
        let refused = try Run("motionctl", ["calibrate", "--fit", tooLong])
        #expect(refused.status == 1 && refused.output.isEmpty, "\(refused.output)")
        #expect(refused.error.contains("\(tooLong):3: a line is longer than 4096 bytes"), "\(refused.error)")

        // Standard input whose writer never closes it: the long line is refused as soon as
        // it has been read past the limit, not once the input ends (it never does here).
        let input = Pipe()
        input.fileHandleForWriting.write(Data((pairs[0] + "\n" + String(repeating: "9", count: 5000)).utf8))
        defer { try? input.fileHandleForWriting.close() }
        let streamed = try Run("motionctl", ["calibrate", "--fit", "-"], deadline: 30, input: input.fileHandleForReading)
        #expect(streamed.status == 1 && streamed.error.contains("-:2: a line is longer than 4096 bytes"), "\(streamed.error)")
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

    @Test("--export udev on a rotated, flipped, calibrated panel: the rule selects it by ID_PATH with the composite matrix, to standard output and to a file; stderr says what the matrix leaves out; a panel with no ID_PATH is refused")
    func exportUdev() throws {
        let directory = try EndToEnd.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try EndToEnd.fakePanelScript("export_udev.py", in: directory, deadline: 120)
        #expect(run.status == 0, "\(run.error)\n\(run.output)")
        let steps = Dictionary(try run.jsonLines().compactMap { line in (line["step"] as? String).map { ($0, line) } }, uniquingKeysWith: { first, _ in first })
        let mapping = try #require(steps["mapping"]?["mapping"] as? [String: Any])
        #expect(mapping["rotation"] as? Int == 90 && mapping["flip_horizontal"] as? Bool == true)

        // motiond's order: calibration k, then the flip (x → 1 − x), then the quarter turn
        // ((x, y) → (1 − y, x)): x′ = 1 − (k3·x + k4·y + k5), y′ = 1 − (k0·x + k1·y + k2).
        let k = [1.02, 0.03, -0.015, -0.02, 0.98, 0.025]
        let expected = [-k[3], -k[4], 1 - k[5], -k[0], -k[1], 1 - k[2]]
        let printed = try #require(steps["stdout"])
        #expect(printed["status"] as? Int == 0, "\(printed)")
        let output = try #require(printed["output"] as? String)
        let lines = output.split(separator: "\n")
        #expect(lines.count == 3 && lines[0].hasPrefix("# ") && lines[1].hasPrefix("# Install as /etc/udev/rules.d/61-"), "\(output)")
        #expect(lines.last == #"ACTION!="remove", SUBSYSTEM=="input", KERNEL=="event*", ENV{ID_PATH}=="pci-0000:00:14.0-usb-0:3:1.0", ENV{LIBINPUT_CALIBRATION_MATRIX}="0.02 -0.98 0.975 -1.02 -0.03 1.015""#)
        let matrix = try #require(lines.last?.split(separator: "\"").last).split(separator: " ").compactMap { Double($0) }
        #expect(matrix.count == 6 && zip(matrix, expected).allSatisfy { abs($0 - $1) < 1e-9 }, "\(matrix)")
        let said = printed["said"] as? String ?? ""
        #expect(said.contains("not its output rectangle") && said.contains("nor motiond's filters") && said.contains("rotate and flip it a second time"), "\(said)")

        let file = try #require(steps["file"])
        #expect(file["status"] as? Int == 0 && file["file"] as? String == output, "\(file)")
        #expect((file["leftovers"] as? [String])?.isEmpty == true, "\(file)")
        let again = try #require(steps["again"])
        #expect(again["status"] as? Int == 0, "a rule an export wrote is replaced: \(again)")
        let dash = try #require(steps["dash"])
        #expect(dash["status"] as? Int == 0 && dash["output"] as? String == output, "--output - is standard output: \(dash)")

        // What is not a rule an export wrote stays as it was: no root export may make a
        // configuration, a FIFO, a link to standard output or a device into the rule.
        let refused = try #require(steps["refused"] as? [String: Any])
        let kinds = try #require(refused["expected_kinds"] as? [String: Int])
        for name in ["configuration", "fifo", "stdout_link", "device"] {
            guard let result = refused[name] as? [String: Any] else { continue }  // the device: root only
            #expect(result["status"] as? Int == 1 && (result["output"] as? String)?.isEmpty == true, "\(name): \(result)")
            #expect(result["kind"] as? Int == kinds[name], "\(name) is no longer what it was: \(result)")
            #expect((result["said"] as? String)?.contains("left alone") == true, "\(name): \(result)")
        }
        #expect((refused["configuration"] as? [String: Any])?["contents"] as? String == "[screen]\nwidth = 1920\n")
        #expect((refused["leftovers"] as? [String])?.isEmpty == true, "\(refused)")

        let virtual = try #require(steps["virtual"])
        #expect(virtual["status"] as? Int == 1 && (virtual["output"] as? String)?.isEmpty == true, "\(virtual)")
        #expect((virtual["said"] as? String)?.contains("/dev/input/event62 (\"Calibration Test Panel\") has no ID_PATH in udev") == true, "\(virtual)")
        #expect((virtual["said"] as? String)?.contains("ATTRS{id/vendor}, ATTRS{id/product}") == true, "\(virtual)")
    }
}
