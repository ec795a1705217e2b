import Foundation
import Glibc
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
                (try? Faults.readState(state)).map { $0["note"] == nil && $0["card"] != nil } ?? false
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
            #expect(json.output == "{\"elements\":[{\"id\":\"card\",\"added\":null,\"position\":[300,200.5],\"rotation\":0.25,\"scale\":2,\"destination\":[300,200.5]}]}\n",
                    "the elements as saved_scene gives them")

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

            // An element that would come back under another id than its own.
            let other = files.appendingPathComponent("other.json").path
            try "{\"motiond_state\":2}\n{\"id\":\"card\",\"added\":{\"id\":\"other\",\"center\":[1,1],\"size\":[1,1]},\"position\":[1,2],\"rotation\":0,\"scale\":1,\"destination\":null}\n{\"elements\":1}\n"
                .write(toFile: other, atomically: true, encoding: .utf8)
            let mismatch = try Run("motionctl", ["state", "show", "--file", other, "--config", DaemonTests.example])
            #expect(mismatch.status == 1)
            #expect(mismatch.error.contains("key \"added\": added.id is \"other\", not the element's id"), "\(mismatch.error)")
        }

        @Test("state show --file and clear --file touch only regular state files: a FIFO, a link, a configuration are refused and left as they are, and nothing blocks")
        func onlyStateFiles() throws {
            let files = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: files) }
            let fifo = files.appendingPathComponent("fifo.json").path
            try #require(mkfifo(fifo, 0o600) == 0)
            // No reader: an open that blocks would run to the deadline and fail the test.
            let shown = try Run("motionctl", ["state", "show", "--file", fifo, "--config", DaemonTests.example], deadline: 20)
            #expect(shown.status == 1)
            #expect(shown.error.contains("\(fifo) is a FIFO, not a regular file"), "\(shown.error)")
            let configuration = files.appendingPathComponent("motiond.toml").path
            try FileManager.default.copyItem(atPath: DaemonTests.example, toPath: configuration)
            let link = files.appendingPathComponent("link.json").path
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: configuration)
            for (path, reason) in [(fifo, "is a FIFO, not a regular file"), (configuration, "is not a state file"), (link, "is a symbolic link, not a regular file")] {
                let cleared = try Run("motionctl", ["state", "clear", "--file", path], deadline: 20)
                #expect(cleared.status == 1, "\(path)")
                #expect(cleared.error.contains("not removed: \(path) \(reason)"), "\(cleared.error)")
            }
            var status = stat()
            #expect(lstat(fifo, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO)
            #expect(lstat(link, &status) == 0 && status.st_mode & S_IFMT == S_IFLNK)
            #expect(FileManager.default.contents(atPath: configuration) == FileManager.default.contents(atPath: DaemonTests.example))
        }

        @Test("state clear --file refuses the file of a motiond that is running, naming it, and removes it once that one stopped")
        func clearWhileRunning() throws {
            let files = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: files) }
            let state = files.appendingPathComponent("scene.json").path
            let daemon = try RunningDaemon(["--config", DaemonTests.example, "--state", state])
            try Faults.addNote(try Faults.controlClient(daemon))
            // The state writer's thread writes the file after the change: the test is of a
            // file that is there.
            try Faults.poll("\(state) written") { FileManager.default.fileExists(atPath: state) }
            let refused = try Run("motionctl", ["state", "clear", "--file", state], deadline: 20)
            #expect(refused.status == 1)
            #expect(refused.error.contains("is in use by another motiond (pid \(daemon.process.processIdentifier))"), "\(refused.error)")
            #expect(FileManager.default.fileExists(atPath: state))
            #expect(daemon.stop().status == 0)
            let removed = try Run("motionctl", ["state", "clear", "--file", state], deadline: 20)
            #expect(removed.status == 0, "\(removed.error)")
            #expect(!FileManager.default.fileExists(atPath: state))
        }
    }
}
