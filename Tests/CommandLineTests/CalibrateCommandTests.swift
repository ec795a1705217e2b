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
}
