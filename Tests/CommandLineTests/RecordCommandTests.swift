import Foundation
import Testing

extension Daemons {
    @Suite("motionctl record, through umockdev")
    struct RecordCommandTests {
        /// Plays `name` on a faked /dev/input/event50 and runs `motionctl ARGUMENTS` under it.
        static func underUmockdev(_ name: String, _ arguments: [String], wrapper: [String] = []) throws -> Run {
            let recording = EndToEnd.recordings.appendingPathComponent(name + ".evemu")
            let directory = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: directory) }
            let files = try EndToEnd.convert(recording, into: directory)
            return try EndToEnd.motionctl(arguments, faking: files, playing: files.events, wrapper: wrapper)
        }

        static func frames(of path: String) throws -> [String] {
            let replay = try Run("motionctl", ["frames", path, "--json"])
            try #require(replay.status == 0, "\(replay.error)")
            return EndToEnd.frameContents(try replay.jsonLines())
        }

        @Test("a recording of the fake touchscreen replays into the fixture's frames", arguments: [
            "whot-evemu-devices__atmel-maxtouch__1f-drag-up-down", "whot-evemu-devices__atmel-maxtouch__4f-drag-down",
            "whot-evemu-devices__ep0430m09__2f-drag-scroll",
        ])
        func recordsWhatPlays(name: String) throws {
            let expected = try Self.frames(of: EndToEnd.recordings.appendingPathComponent(name + ".evemu").path)
            let output = try EndToEnd.scratch().appendingPathComponent("recorded.evemu")
            // Stops after as many frames as the fixture has; --duration only ends a run that hangs.
            let run = try Self.underUmockdev(name, ["record", "/dev/input/event50", "-o", output.path, "--count", "\(expected.count)", "--duration", "60"])
            #expect(run.status == 0, "\(run.error)")
            #expect(run.error.contains("recorded \(expected.count) frames"), "\(run.error)")
            let recorded = try Self.frames(of: output.path)
            #expect(recorded.count == expected.count)
            for (index, (got, wanted)) in zip(recorded, expected).enumerated() where got != wanted {
                Issue.record("frame \(index) differs:\n recorded: \(got)\n fixture:  \(wanted)")
                break
            }
            // The header names the device as the fixture does, so a daemon selects it the same way.
            let text = try String(contentsOf: output, encoding: .utf8)
            let fixture = try String(contentsOf: EndToEnd.recordings.appendingPathComponent(name + ".evemu"), encoding: .utf8)
            let names = { (t: String) in t.split(separator: "\n").first { $0.hasPrefix("N: ") } }
            #expect(names(text) == names(fixture) && names(text) != nil)
            // And the recording runs through the daemon's replay as through the tools.
            let gestures = try Run("motionctl", ["gestures", output.path, "--json"])
            #expect(gestures.status == 0 && !gestures.output.isEmpty, "\(gestures.error)")
        }

        @Test("without a device argument the first touchscreen is recorded; a name glob or ids that match none are refused")
        func choosing() throws {
            let name = "whot-evemu-devices__atmel-maxtouch__1f-fast-taps-x9"
            let output = try EndToEnd.scratch().appendingPathComponent("taps.evemu")
            let first = try Self.underUmockdev(name, ["record", "-o", output.path, "--count", "3", "--duration", "60"])
            #expect(first.status == 0, "\(first.error)")
            #expect(try Self.frames(of: output.path).count == 3)
            let glob = try Self.underUmockdev(name, ["record", "*maXTouch*", "--count", "2", "--duration", "60"])
            #expect(glob.status == 0 && glob.output.contains("N: Atmel maXTouch Touchscreen"), "\(glob.error)")
            let none = try Self.underUmockdev(name, ["record", "*wacom*", "--count", "2"])
            #expect(none.status == 1 && none.error.contains("no touchscreen matches '*wacom*'"), "\(none.error)")
            let ids = try Self.underUmockdev(name, ["record", "dead:beef", "--count", "2"])
            #expect(ids.status == 1 && ids.error.contains("no touchscreen matches 'dead:beef'"), "\(ids.error)")
        }

        @Test("Ctrl-C ends the recording with a whole file: a prefix of the fixture's frames")
        func interrupted() throws {
            let name = "whot-evemu-devices__atmel-maxtouch__1f-drag-up-down"
            let expected = try Self.frames(of: EndToEnd.recordings.appendingPathComponent(name + ".evemu").path)
            let output = try EndToEnd.scratch().appendingPathComponent("interrupted.evemu")
            // timeout(1) sends SIGINT as Ctrl-C would; however far playback got by then, the
            // file must parse and hold the frames played so far, no more, no fewer.
            let run = try Self.underUmockdev(name, ["record", "-o", output.path], wrapper: ["/usr/bin/timeout", "-s", "INT", "1.5"])
            // 124 is timeout's own status for "had to send the signal".
            #expect(run.status == 124, "\(run.error)")
            #expect(run.error.contains("interrupted"), "\(run.error)")
            let recorded = try Self.frames(of: output.path)
            #expect(recorded.count < expected.count)
            #expect(Array(expected.prefix(recorded.count)) == recorded)
        }
    }
}
