import Foundation
import Testing

extension Daemons {
    @Suite("motiond reads lines as bytes")
    struct StrictJSONSocketTests {
        static let bundled = EndToEnd.repository.appendingPathComponent("data/recordings/atmel-maxtouch-drag-up-down.evemu").path

        @Test("a line that is not UTF-8 gets bad_json naming the column of the bad byte, and the connection stays usable")
        func invalidUTF8() throws {
            let daemon = try RunningDaemon(["--replay", Self.bundled])
            defer { daemon.stop() }
            let client = try TestClient(daemon.socket)
            #expect(try client.next()?["event"] as? String == "hello")
            // An overlong '/': a reader that repairs bytes would look for a stream named "\u{FFFD}\u{FFFD}".
            client.send(bytes: Array(#"{"id": 1, "op": "get", "stream": ""#.utf8) + [0xC0, 0xAF] + Array("\"}\n".utf8))
            let reply = try #require(try client.next())
            let error = try #require(reply["error"] as? [String: Any], "\(reply)")
            #expect(error["code"] as? String == "bad_json", "\(reply)")
            #expect(error["message"] as? String == "not JSON at column 35: a string is not valid UTF-8", "\(reply)")
            #expect(try client.request(#"{"id": 2, "op": "list"}"#)["ok"] as? Bool == true)
        }
    }
}
