import Foundation
import Testing

extension Daemons {
    /// Every subcommand speaks the same way: words on a terminal, JSON when piped or asked.
    @Suite("motionctl on a terminal and in a pipe")
    struct MotionctlVoiceTests {
        static let example = EndToEnd.repository.appendingPathComponent("config/motiond.toml").path

        /// Runs motionctl with a terminal as its output (util-linux's `script` gives it one).
        func onTerminal(_ arguments: [String]) throws -> Run {
            let command = ([Run.productsDirectory.appendingPathComponent("motionctl").path] + arguments).map { "'\($0)'" }.joined(separator: " ")
            return try Run("script", ["-qec", command, "/dev/null"], absolute: true)
        }

        @Test("stats: a table on a terminal, JSON when piped or with --json")
        func stats() throws {
            let daemon = try RunningDaemon(["--replay", DaemonTests.bundled, "--loop"], configuration: try String(contentsOfFile: Self.example, encoding: .utf8))
            let table = try onTerminal(["stats", "--socket", daemon.socket])
            #expect(table.status == 0, "\(table.output)")
            for expected in ["uptime ", "touch frames, ", "frames/s while something moves", "configuration ", "touchscreen(s), ",
                             "tuio           1.1 to 127.0.0.1:3333: ", "client  uid  control  subscriptions  sent  coalesced"] {
                #expect(table.output.contains(expected), "missing \(expected) in \(table.output)")
            }
            #expect(!table.output.contains("{"), "no JSON on a terminal: \(table.output)")
            let piped = try Run("motionctl", ["stats", "--socket", daemon.socket])
            let json = try #require(try piped.jsonLines().first)
            #expect(json["frames"] is Int && json["clients"] is [Any])
            let asked = try onTerminal(["stats", "--json", "--socket", daemon.socket])
            #expect(asked.output.hasPrefix("{"), "\(asked.output)")
        }

        @Test("watch on a terminal: sizes, springs, states and contacts in words, not JSON")
        func watch() throws {
            let daemon = try RunningDaemon(["--replay", DaemonTests.bundled, "--loop"], configuration: try String(contentsOfFile: Self.example, encoding: .utf8))
            let run = try onTerminal(["watch", "card.size", "card.spring", "card.snap", "card.enabled", "--count", "4", "--socket", daemon.socket])
            #expect(run.status == 0, "\(run.output)")
            for expected in ["card.size     520 × 360", "card.spring   tension 342.0, friction 30.0, mass 1", "card.snap     middle", "card.enabled  true"] {
                #expect(run.output.contains(expected), "missing \(expected) in \(run.output)")
            }
            #expect(!run.output.contains("{\""), "\(run.output)")
        }

        @Test("elements, streams and get: words on a terminal, JSON when piped")
        func listings() throws {
            let daemon = try RunningDaemon(["--replay", DaemonTests.bundled], configuration: try String(contentsOfFile: Self.example, encoding: .utf8))
            let elements = try onTerminal(["elements", "--socket", daemon.socket])
            #expect(elements.output.contains("photo  centre (1400.0, 300.0)  size 640 × 420  rotation 0.100"), "\(elements.output)")
            let pipedElements = try Run("motionctl", ["elements", "--socket", daemon.socket]).jsonLines()
            #expect(pipedElements.compactMap { $0["id"] as? String } == ["card", "photo", "drawer", "marker"])
            let streams = try onTerminal(["streams", "--socket", daemon.socket])
            #expect(streams.output.contains("card.destination  (writable)"), "\(streams.output)")
            let pipedStreams = try Run("motionctl", ["streams", "--socket", daemon.socket]).jsonLines()
            #expect(pipedStreams.contains { $0["stream"] as? String == "card.drag" && $0["kind"] as? String == "gesture" })
            let get = try onTerminal(["get", "photo.size", "--socket", daemon.socket])
            #expect(get.output.trimmingCharacters(in: .whitespacesAndNewlines) == "640 × 420", "\(get.output)")
            let pipedGet = try Run("motionctl", ["get", "photo.size", "--socket", daemon.socket])
            #expect(pipedGet.output.contains("\"width\""), "\(pipedGet.output)")
        }
    }
}
