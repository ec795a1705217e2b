import Foundation
import Testing

/// The monitoring recipe under Prometheus's own tool, promtool (Debian's prometheus package,
/// which scripts/install-deps installs): the alert rules load and pass their unit tests
/// (contrib/prometheus/tests), docs/operations.md's scrape configuration loads, and the
/// Grafana dashboard's fleet counts answer 0 rather than nothing.
@Suite("Prometheus rules and dashboard under promtool")
struct PrometheusRulesTests {
    static let rules = EndToEnd.repository.appendingPathComponent("contrib/prometheus/motiond-alerts.yml").path
    static let ruleTests = EndToEnd.repository.appendingPathComponent("contrib/prometheus/tests/motiond-alerts.test.yml").path

    /// Runs promtool with a deadline; a machine without it fails the test, saying how to get it.
    func promtool(_ arguments: [String]) throws -> Run {
        let path = try #require(try? Run.onPath("promtool").path,
                                "promtool is not installed: scripts/install-deps installs Debian's prometheus package, which has it")
        return try Run(path, arguments, deadline: 120)
    }

    /// A scratch directory, removed by the caller.
    func scratch() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("motiond-promtool-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test("promtool takes the alert rules, and each alert fires in its unit tests when documented, not before, not for look-alikes")
    func alertRules() throws {
        let check = try promtool(["check", "rules", Self.rules])
        #expect(check.status == 0, "\(check.output)\(check.error)")
        let test = try promtool(["test", "rules", Self.ruleTests])
        #expect(test.status == 0 && test.output.contains("SUCCESS"), "\(test.output)\(test.error)")
    }

    @Test("the scrape configuration in docs/operations.md is one Prometheus loads")
    func scrapeConfiguration() throws {
        let operations = try String(contentsOf: EndToEnd.repository.appendingPathComponent("docs/operations.md"), encoding: .utf8)
        let blocks = operations.components(separatedBy: "```yaml\n").dropFirst().compactMap { $0.components(separatedBy: "```").first }
        let scrape = try #require(blocks.first { $0.hasPrefix("scrape_configs:") }, "docs/operations.md has no ```yaml block of scrape_configs")
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("prometheus.yml")
        try scrape.write(to: file, atomically: true, encoding: .utf8)
        let check = try promtool(["check", "config", file.path])
        #expect(check.status == 0, "\(check.output)\(check.error)")
    }

    @Test("with no kiosk up, each of the dashboard's fleet counts answers 0, not \"No data\"")
    func fleetCountsWithNoneUp() throws {
        let data = try Data(contentsOf: EndToEnd.repository.appendingPathComponent("contrib/grafana/motiond-dashboard.json"))
        let dashboard = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let panels = try #require(dashboard["panels"] as? [[String: Any]])
        // The stats that count kiosks: a count of nothing is an empty answer unless it says `or vector(0)`.
        let counts = panels.filter { $0["type"] as? String == "stat" }.flatMap { panel in
            (panel["targets"] as? [[String: Any]] ?? []).compactMap { $0["expr"] as? String }.filter { $0.hasPrefix("count(") }
                .map { (title: panel["title"] as? String ?? "", expression: $0) }
        }
        #expect(counts.count >= 3, "\(counts)")
        // Every kiosk down: Prometheus has only its failed scrapes, and another job is up.
        let unitTest: [String: Any] = [
            "evaluation_interval": "1m",
            "tests": [[
                "name": "no kiosk up",
                "interval": "1m",
                "input_series": [
                    ["series": #"up{job="motiond",instance="kiosk-01:8765"}"#, "values": "0x10"],
                    ["series": #"up{job="motiond",instance="kiosk-02:8765"}"#, "values": "0x10"],
                    ["series": #"up{job="node",instance="kiosk-01:9100"}"#, "values": "1x10"],
                ],
                "promql_expr_test": counts.map { ["expr": $0.expression, "eval_time": "5m", "exp_samples": [["labels": "{}", "value": 0]]] },
            ]],
        ]
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("fleet-counts.test.yml")
        // JSON is YAML: promtool reads it as it is.
        try JSONSerialization.data(withJSONObject: unitTest, options: [.prettyPrinted, .sortedKeys]).write(to: file)
        let test = try promtool(["test", "rules", file.path])
        #expect(test.status == 0 && test.output.contains("SUCCESS"), "\(counts.map(\.title)):\n\(test.output)\(test.error)")
    }
}
