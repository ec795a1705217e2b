import Foundation
import Glibc
import Testing

extension Daemons {
    /// The WebSocket endpoint against a real motiond, through a real WebSocket client
    /// (python3-websockets): Tests/EndToEnd/websocket_session.py runs the checks and reports
    /// each; this test fails on any that failed, with motiond's log.
    @Suite("WebSocket endpoint")
    struct WebSocketTests {
        @Test("protocol v1 over WebSocket: hello, values, errors, control by token, origins, pages, limits, slow clients, stop")
        func session() throws {
            let directory = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: directory) }
            let token = directory.appendingPathComponent("token").path
            try "\(UUID().uuidString)-\(UUID().uuidString)\n".write(toFile: token, atomically: true, encoding: .utf8)
            chmod(token, 0o600)
            let config = directory.appendingPathComponent("motiond.toml").path
            let example = try String(contentsOf: EndToEnd.repository.appendingPathComponent("config/motiond.toml"), encoding: .utf8)
            try (example + """

                [websocket]
                listen = "127.0.0.1:0"
                allowed_origins = ["http://allowed.example"]
                control_token_file = "token"

                """).write(toFile: config, atomically: true, encoding: .utf8)
            let run = try Run("/usr/bin/python3", [
                EndToEnd.repository.appendingPathComponent("Tests/EndToEnd/websocket_session.py").path,
                EndToEnd.repository.path, Run.productsDirectory.appendingPathComponent("motiond").path, config,
                EndToEnd.repository.appendingPathComponent("data/recordings/atmel-maxtouch-drag-up-down.evemu").path, token,
            ], absolute: true, deadline: 240)
            let lines = try run.jsonLines()
            let log = lines.last?["log"] as? String ?? "(no log)"
            let checks = lines.filter { $0["check"] != nil }
            #expect(run.status == 0, "\(run.error)")
            // Every check ran (a check that threw reports itself under its function's name).
            #expect(checks.count == 25, "\(checks.map { $0["check"] ?? "" })")
            for check in checks where check["ok"] as? Bool != true {
                Issue.record("\(check["check"] ?? ""): \(check["detail"] ?? "")\nmotiond said:\n\(log)")
            }
        }
    }
}
