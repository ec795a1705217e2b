import Foundation
import Testing
@testable import TouchInput
import MotionWire
@testable import MotionDaemon

/// docs/operations.md, motiond(8), the Grafana dashboard and the alert rules against the
/// metrics motiond exports (``MetricCatalog``): a metric renamed or added shows here.
extension YAMLNode {
    var scalar: String? { if case .scalar(let text) = content { return text } else { return nil } }
    var sequence: [YAMLNode]? { if case .sequence(let items) = content { return items } else { return nil } }
}

@Suite("Operations docs and contrib")
struct OperationsDocsTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func text(_ path: String) throws -> String {
        try String(contentsOf: repository.appendingPathComponent(path), encoding: .utf8)
    }

    /// The metric names a PromQL expression or a text mentions, a histogram's series
    /// (`_bucket`, `_sum`, `_count`) taken as the histogram. A name in double quotes is a JSON
    /// key (the state file's `"motiond_state"`), not a metric.
    static func metricNames(in text: String) -> Set<String> {
        let pattern = try! NSRegularExpression(pattern: #"(?<!")\b(?:motiond|process)_[a-z_]+"#)
        let range = NSRange(text.startIndex..., in: text)
        return Set(pattern.matches(in: text, range: range).map { match in
            var name = String(text[Range(match.range, in: text)!])
            for suffix in ["_bucket", "_sum", "_count"] where MetricCatalog.definition(named: name) == nil && name.hasSuffix(suffix) {
                name.removeLast(suffix.count)
            }
            return name
        })
    }

    @Test("docs/operations.md and motiond(8) document every metric, and no other")
    func documented() throws {
        let operations = try Self.text("docs/operations.md")
        let manual = try Self.text("man/motiond.8.scd").replacingOccurrences(of: "\\_", with: "_")
        for metric in MetricCatalog.all {
            #expect(operations.contains("| `\(metric.name)` | \(metric.kind.rawValue) |"), "docs/operations.md: \(metric.name)")
            #expect(manual.contains("*\(metric.name)*"), "motiond(8): \(metric.name)")
        }
        let known = Set(MetricCatalog.all.map(\.name))
        for name in Self.metricNames(in: operations).union(Self.metricNames(in: manual)) {
            #expect(known.contains(name), "\(name) is documented but not exported")
        }
    }

    @Test("the Grafana dashboard is JSON for import, and its queries name only exported metrics")
    func dashboard() throws {
        let data = try Data(contentsOf: Self.repository.appendingPathComponent("contrib/grafana/motiond-dashboard.json"))
        let dashboard = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(dashboard["uid"] as? String == "motiond-fleet")
        #expect((dashboard["__inputs"] as? [[String: Any]])?.first?["name"] as? String == "DS_PROMETHEUS")
        let panels = try #require(dashboard["panels"] as? [[String: Any]])
        let expressions = panels.flatMap { ($0["targets"] as? [[String: Any]] ?? []).compactMap { $0["expr"] as? String } }
        #expect(expressions.count >= 25)
        var used: Set<String> = []
        for expression in expressions {
            let names = Self.metricNames(in: expression)
            for name in names { #expect(MetricCatalog.definition(named: name) != nil, "\(name) in \(expression)") }
            used.formUnion(names)
            // Counters are read as rates or increases, never as raw totals.
            for name in names where MetricCatalog.definition(named: name)?.kind == .counter {
                #expect(expression.contains("rate(\(name)") || expression.contains("increase(\(name)"), "\(expression)")
            }
        }
        for wanted in ["motiond_publish_latency_seconds", "motiond_input_frames_total", "motiond_clients", "motiond_devices",
                       "motiond_devices_skipped", "motiond_last_touch_timestamp_seconds", "motiond_contacts_filtered_total"] {
            #expect(used.contains(wanted), "the dashboard shows no \(wanted)")
        }
        // Panels do not overlap on the grid.
        var taken: Set<[Int]> = []
        for panel in panels {
            let grid = try #require(panel["gridPos"] as? [String: Int])
            for x in grid["x"]!..<(grid["x"]! + grid["w"]!) {
                for y in grid["y"]!..<(grid["y"]! + grid["h"]!) { #expect(taken.insert([x, y]).inserted, "\(panel["title"] ?? "") overlaps") }
            }
        }
    }

    @Test("the alert rules are YAML as Prometheus reads them, name only exported metrics, and are the ones docs/operations.md lists")
    func alerts() throws {
        let text = try Self.text("contrib/prometheus/motiond-alerts.yml")
        let document = try #require(try YAMLDocument.compose(text))
        let groups = try #require(document["groups"]?.sequence)
        let rules = groups.flatMap { $0["rules"]?.sequence ?? [] }
        #expect(rules.count == 10)
        let operations = try Self.text("docs/operations.md")
        for rule in rules {
            let alert = try #require(rule["alert"]?.scalar)
            let expression = try #require(rule["expr"]?.scalar)
            #expect(rule["annotations"]?["summary"]?.scalar != nil && rule["annotations"]?["description"]?.scalar != nil, "\(alert)")
            #expect(["critical", "warning", "info"].contains(rule["labels"]?["severity"]?.scalar ?? ""), "\(alert)")
            #expect(operations.contains("| `\(alert)` |"), "docs/operations.md does not list \(alert)")
            for name in Self.metricNames(in: expression) { #expect(MetricCatalog.definition(named: name) != nil, "\(alert): \(name)") }
        }
    }

    @Test("the rules' promtool tests have one group per alert, named after it, each testing only that alert")
    func alertTests() throws {
        let rules = try #require(try YAMLDocument.compose(Self.text("contrib/prometheus/motiond-alerts.yml")))
        let alerts = (rules["groups"]?.sequence ?? []).flatMap { $0["rules"]?.sequence ?? [] }.compactMap { $0["alert"]?.scalar }
        let tests = try #require(try YAMLDocument.compose(Self.text("contrib/prometheus/tests/motiond-alerts.test.yml")))
        #expect(tests["rule_files"]?.sequence?.compactMap(\.scalar) == ["../motiond-alerts.yml"])
        let groups = try #require(tests["tests"]?.sequence)
        #expect(groups.compactMap { $0["name"]?.scalar } == alerts)
        for group in groups {
            let name = group["name"]?.scalar ?? ""
            let evaluations = group["alert_rule_test"]?.sequence ?? []
            #expect(evaluations.allSatisfy { $0["alertname"]?.scalar == name }, "\(name) tests another alert")
            // Not before, and then fired: at least one evaluation without it and one with it.
            #expect(evaluations.contains { $0["exp_alerts"] == nil } && evaluations.contains { $0["exp_alerts"] != nil }, "\(name)")
        }
    }
}
