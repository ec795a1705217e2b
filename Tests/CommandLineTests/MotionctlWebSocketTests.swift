import Foundation
import Glibc
import Testing

extension Daemons {
    /// motionctl over the WebSocket endpoint, as over the socket.
    @Suite("motionctl over WebSocket")
    struct MotionctlWebSocketTests {
        static let bundled = EndToEnd.repository.appendingPathComponent("data/recordings/atmel-maxtouch-drag-up-down.evemu").path

        @Test("status, get, watch and set over --websocket or a URL in --socket; set needs the token")
        func commands() throws {
            let directory = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: directory) }
            let token = directory.appendingPathComponent("token").path
            try "\(UUID().uuidString)\n".write(toFile: token, atomically: true, encoding: .utf8)
            chmod(token, 0o600)
            let example = try String(contentsOf: EndToEnd.repository.appendingPathComponent("config/motiond.toml"), encoding: .utf8)
            let daemon = try RunningDaemon(["--replay", Self.bundled, "--loop"], configuration: example + """

                [websocket]
                listen = "127.0.0.1:0"
                control_token_file = "\(token)"

                """)
            let url = try daemon.webSocketURL()

            let status = try Run("motionctl", ["status", "--websocket", url])
            #expect(status.status == 0 && status.output.contains("motiond 0.1.0 at \(url)"), "\(status.error)")
            let get = try Run("motionctl", ["get", "card.position", "--socket", url])
            #expect(get.status == 0, "\(get.error)")
            let position = try JSONSerialization.jsonObject(with: Data(get.output.utf8)) as? [String: Double]
            #expect(position?["x"] != nil && position?["y"] != nil, "\(get.output)")

            let watch = try Run("motionctl", ["watch", "card.position", "--websocket", url, "--json", "--count", "5"], deadline: 60)
            #expect(watch.status == 0, "\(watch.error)")
            let values = try watch.jsonLines().filter { $0["stream"] as? String == "card.position" }
            #expect(values.count == 5)

            let value = #"{"x": 321, "y": 234}"#
            let refused = try Run("motionctl", ["set", "card.destination", value, "--websocket", url])
            #expect(refused.status == 1 && refused.error.contains("forbidden"), "\(refused.error)")
            let allowed = try Run("motionctl", ["set", "card.destination", value, "--websocket", url, "--token-file", token])
            #expect(allowed.status == 0, "\(allowed.error)")
            let destination = try Run("motionctl", ["get", "card.destination", "--websocket", url])
            #expect(try JSONSerialization.jsonObject(with: Data(destination.output.utf8)) as? [String: Double] == ["x": 321, "y": 234])
            #expect(daemon.stop().status == 0)
        }

        @Test("nothing listening, or a refused handshake: exit code 3 with the reason")
        func cannotConnect() throws {
            let run = try Run("motionctl", ["status", "--websocket", "ws://127.0.0.1:1/ws"])
            #expect(run.status == 3)
            #expect(run.error.contains("cannot connect to motiond at ws://127.0.0.1:1/ws: connection refused"), "\(run.error)")
            let daemon = try RunningDaemon(["--replay", Self.bundled, "--websocket", "127.0.0.1:0"])
            let url = try daemon.webSocketURL()
            let elsewhere = try Run("motionctl", ["status", "--websocket", url.replacingOccurrences(of: "/ws", with: "/nope")])
            #expect(elsewhere.status == 3 && elsewhere.error.contains("HTTP 404"), "\(elsewhere.error)")
            let secure = try Run("motionctl", ["status", "--websocket", url.replacingOccurrences(of: "ws://", with: "wss://")])
            #expect(secure.status == 3 && secure.error.contains("wss:// is not supported"), "\(secure.error)")
            #expect(daemon.stop().status == 0)
        }
    }
}
