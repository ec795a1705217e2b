import Foundation
import Testing

extension Daemons {
    /// `motionctl state`: what a running motiond keeps, what a file holds without a daemon,
    /// and starting afresh.
    @Suite("motionctl state")
    struct StateCommandTests {
        typealias Faults = StateFaultTests

        @Test("state shows the file and the elements the running motiond keeps; clear starts afresh and writes it at once")
        func running() throws {
            let files = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: files) }
            let state = files.appendingPathComponent("scene.json").path
            let daemon = try RunningDaemon(["--config", DaemonTests.example, "--state", state, "--state-interval", "3600"])
            let control = try Faults.controlClient(daemon)
            try Faults.addNote(control)
            try Faults.poll("the note written") { (try Faults.savedScene(control)["elements"] as? [[String: Any]])?.contains { $0["id"] as? String == "note" } == true }

            let shown = try Run("motionctl", ["state", "--socket", daemon.socket, "--json"])
            #expect(shown.status == 0, "\(shown.error)")
            let saved = try #require(try JSONSerialization.jsonObject(with: Data(shown.output.utf8)) as? [String: Any], "\(shown.output)")
            #expect(saved["file"] as? String == state)
            #expect((saved["elements"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == Faults.configured + ["note"])

            // The interval is an hour: only reset_scene's own write can take the note out of the file.
            let cleared = try Run("motionctl", ["state", "clear", "--socket", daemon.socket])
            #expect(cleared.status == 0, "\(cleared.error)")
            #expect(cleared.output == "the scene is the configuration's again: 4 element(s)\n")
            try Faults.poll("the scene written without the note") {
                (try? String(contentsOfFile: state, encoding: .utf8)).map { !$0.contains("\"note\"") && $0.contains("\"card\"") } ?? false
            }
            #expect(try control.elementIDs() == Faults.configured)
            #expect(daemon.stop().status == 0)
        }

        @Test("state show --file reads a file as a start would: its elements, or why motiond refuses it (exit 1)")
        func file() throws {
            let files = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: files) }
            let good = files.appendingPathComponent("scene.json").path
            let text = "{\"version\":1,\"elements\":[\n{\"id\":\"card\",\"added\":null,\"position\":[300,200.5],\"rotation\":0.25,\"scale\":2,\"destination\":[300,200.5]}\n]}\n"
            try text.write(toFile: good, atomically: true, encoding: .utf8)
            let json = try Run("motionctl", ["state", "show", "--file", good, "--config", DaemonTests.example, "--json"])
            #expect(json.status == 0, "\(json.error)")
            #expect(json.output == text, "the file as motiond would write it again")

            // Past ten screens of the configuration's screen: refused, with the place and the reason.
            let bad = files.appendingPathComponent("scene.json.refused").path
            try text.replacingOccurrences(of: "[300,200.5],\"rotation\"", with: "[30000,200.5],\"rotation\"").write(toFile: bad, atomically: true, encoding: .utf8)
            let refused = try Run("motionctl", ["state", "show", "--file", bad, "--config", DaemonTests.example])
            #expect(refused.status == 1)
            #expect(refused.error.contains("the state file \(bad) is refused: element 0 (\"card\"), key \"position\": position: x must be within"), "\(refused.error)")

            let missing = try Run("motionctl", ["state", "show", "--file", files.appendingPathComponent("none.json").path, "--config", DaemonTests.example])
            #expect(missing.status == 1)
            #expect(missing.error.contains("there is no file"), "\(missing.error)")

            let removed = try Run("motionctl", ["state", "clear", "--file", good])
            #expect(removed.status == 0, "\(removed.error)")
            #expect(!FileManager.default.fileExists(atPath: good))
        }
    }
}
