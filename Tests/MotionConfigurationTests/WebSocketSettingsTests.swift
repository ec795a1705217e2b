import Foundation
import Glibc
import Testing
@testable import MotionConfiguration

@Suite("WebSocket settings")
struct WebSocketSettingsTests {
    /// Parses `text` expecting an error on `line` whose message contains `message`.
    func refused(_ text: String, line: Int, _ message: String, file: String = "/tmp/kiosk.toml", sourceLocation: SourceLocation = #_sourceLocation) {
        expectRefused(text, line: line, message, file: file, sourceLocation: sourceLocation)
    }

    @Test("listen addresses: IPv4, bracketed IPv6, localhost; anything else with its reason")
    func listenAddresses() throws {
        #expect(try ListenAddress.parse("127.0.0.1:8765").get() == ListenAddress(host: "127.0.0.1", port: 8765))
        #expect(try ListenAddress.parse("[::1]:0").get() == ListenAddress(host: "::1", port: 0))
        #expect(try ListenAddress.parse("localhost:80").get() == ListenAddress(host: "127.0.0.1", port: 80))
        for text in ["127.0.0.1", "::1:8765", "127.0.0.1:65536", "127.0.0.1:-1", "kiosk.local:8765", "[::1]8765", ":8765", "127.0.0.1:８"] {
            #expect(throws: ListenAddressError.self, "\(text)") { try ListenAddress.parse(text).get() }
        }
        #expect(ListenAddress(host: "127.0.0.2", port: 1).isLoopback && ListenAddress(host: "::1", port: 1).isLoopback)
        #expect(!ListenAddress(host: "0.0.0.0", port: 1).isLoopback && !ListenAddress(host: "::", port: 1).isLoopback
            && !ListenAddress(host: "192.168.1.5", port: 1).isLoopback)
    }

    @Test("without allowed_origins, a page from the listener itself may connect, by address or as localhost")
    func defaultOrigins() throws {
        let v4 = try Configuration.parse("[websocket]\nlisten = \"127.0.0.1:0\"\n", file: "k.toml").websocket!
        #expect(v4.origins(boundPort: 8765) == ["http://127.0.0.1:8765", "http://localhost:8765"])
        let v6 = try Configuration.parse("[websocket]\nlisten = \"[::1]:9000\"\n", file: "k.toml").websocket!
        #expect(v6.origins(boundPort: 9000) == ["http://[::1]:9000", "http://localhost:9000"])
        let given = try Configuration.parse("[websocket]\nlisten = \"127.0.0.1:1\"\nallowed_origins = [\"null\", \"https://kiosk.example\"]\n", file: "k.toml").websocket!
        #expect(given.origins(boundPort: 1) == ["null", "https://kiosk.example"])
    }

    @Test("a broken [websocket] is refused with its line and reason")
    func refusals() {
        refused("[websocket]\n", line: 1, "needs listen")
        refused("[websocket]\nlisten = \"0.0.0.0:8765\"\n", line: 2, "allow_remote = true")
        refused("[websocket]\nlisten = \"127.0.0.1\"\n", line: 2, "not HOST:PORT")
        refused("[websocket]\nlisten = \"127.0.0.1:1\"\nallowed_origins = [\"file://\"]\n", line: 3, "write \"null\"")
        refused("[websocket]\nlisten = \"127.0.0.1:1\"\nallowed_origins = [\"http://localhost:8765/\"]\n", line: 3, "not an origin")
        refused("[websocket]\nlisten = \"127.0.0.1:1\"\nport = 3\n", line: 3, "unknown key 'port'")
        refused("[websocket]\nlisten = \"127.0.0.1:1\"\ncontrol_token_file = \"/nonexistent/token\"\n", line: 3, "cannot read the token file")
    }

    @Test("a non-loopback address is allowed when the configuration says so")
    func remote() throws {
        let settings = try Configuration.parse("[websocket]\nlisten = \"0.0.0.0:8765\"\nallow_remote = true\n", file: "k.toml").websocket
        #expect(settings?.listen == ListenAddress(host: "0.0.0.0", port: 8765) && settings?.allowRemote == true)
    }

    @Test("the token file: read relative to the configuration, one line, not readable by everyone")
    func tokenFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("motiond-token-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let token = directory.appendingPathComponent("token").path
        let config = directory.appendingPathComponent("motiond.toml").path
        let text = "[websocket]\nlisten = \"127.0.0.1:1\"\ncontrol_token_file = \"token\"\n"
        try "s3cret-token\n".write(toFile: token, atomically: true, encoding: .utf8)
        chmod(token, 0o640)
        #expect(try Configuration.parse(text, file: config).websocket?.controlToken == "s3cret-token")
        chmod(token, 0o644)
        refused(text, line: 3, "anyone on this machine can read", file: config)
        chmod(token, 0o600)
        try "two\nlines\n".write(toFile: token, atomically: false, encoding: .utf8)
        refused(text, line: 3, "must hold one line", file: config)
        try "".write(toFile: token, atomically: false, encoding: .utf8)
        refused(text, line: 3, "must hold one line", file: config)
    }
}
