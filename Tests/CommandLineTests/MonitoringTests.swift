import Foundation
import Testing

extension Daemons {
    /// What a fleet's monitoring reads of a real motiond: GET /metrics through a real
    /// Prometheus parser (python3-prometheus-client, in Tests/EndToEnd/scrape_metrics.py)
    /// and Prometheus's own linter (`promtool check metrics`), GET /healthz, and `motionctl
    /// status`'s exit code.
    @Suite("Monitoring")
    struct MonitoringTests {
        static let bundled = EndToEnd.repository.appendingPathComponent("data/recordings/atmel-maxtouch-drag-up-down.evemu").path
        static let listener = "\n[websocket]\nlisten = \"127.0.0.1:0\"\n"

        /// Runs the scrape script against `daemon`; fails on each check that failed.
        private func scrape(_ daemon: RunningDaemon, expecting: String, checks: Int) throws {
            let base = try daemon.webSocketURL().replacingOccurrences(of: "ws://", with: "http://").replacingOccurrences(of: "/ws", with: "")
            let run = try Run("/usr/bin/python3", [
                EndToEnd.repository.appendingPathComponent("Tests/EndToEnd/scrape_metrics.py").path, base, expecting,
                Run.productsDirectory.appendingPathComponent("motionctl").path, daemon.socket,
            ], absolute: true, deadline: 120)
            let results = try run.jsonLines().filter { $0["check"] != nil }
            #expect(run.status == 0, "\(run.error)")
            #expect(results.count == checks, "\(results.map { $0["check"] ?? "" })\n\(run.error)")
            for check in results where check["ok"] as? Bool != true {
                Issue.record("\(check["check"] ?? ""): \(check["detail"] ?? "")\nmotiond said:\n\(daemon.log(containing: "", seconds: 0))")
            }
        }

        @Test("replaying: the metrics parse, counters move, the latency histogram fills, /healthz is 200 and motionctl status exits 0")
        func replaying() throws {
            let example = try String(contentsOf: EndToEnd.repository.appendingPathComponent("config/motiond.toml"), encoding: .utf8)
            let daemon = try RunningDaemon(["--replay", Self.bundled, "--loop", "--speed", "4"], configuration: example + Self.listener)
            defer { _ = daemon.stop() }
            try scrape(daemon, expecting: "replaying", checks: 13)
            let status = try Run("motionctl", ["status", "--socket", daemon.socket])
            #expect(status.status == 0 && status.output.contains("\n  healthy\n"), "\(status.output)\(status.error)")
        }

        @Test("no touchscreen: /healthz is 503 with the reason, and motionctl status says it and exits 4")
        func noTouchscreen() throws {
            let daemon = try RunningDaemon([], configuration: Self.listener)
            defer { _ = daemon.stop() }
            try scrape(daemon, expecting: "idle", checks: 8)
            let status = try Run("motionctl", ["status", "--socket", daemon.socket])
            #expect(status.status == 4, "\(status.output)\(status.error)")
            #expect(status.output.contains("unhealthy: no touchscreen is being read"), "\(status.output)")
            let json = try Run("motionctl", ["status", "--json", "--socket", daemon.socket])
            let health = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])["health"] as? [String: Any]
            #expect(json.status == 4 && health?["status"] as? String == "unhealthy" && health?["devices"] as? Int == 0, "\(json.output)")
        }
    }
}
