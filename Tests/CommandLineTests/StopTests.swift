import Foundation
import Testing

extension Daemons {
    @Suite("motiond stops cleanly")
    struct StopTests {
        @Test("SIGTERM with a finger down: the client sees its gesture cancelled and the device removed before the bye")
        func touchesCancelledBeforeBye() throws {
            let recording = EndToEnd.recordings.appendingPathComponent("whot-evemu-devices__atmel-maxtouch__1f-drag-up-down.evemu")
            let directory = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: directory) }
            let files = try EndToEnd.convert(recording, into: directory)
            // The first twenty reports: the finger lands on the card, drags it, and stays down.
            var kept: [Substring] = [], reports = 0
            for line in try String(contentsOfFile: files.events, encoding: .utf8).split(separator: "\n") where reports < 20 {
                kept.append(line)
                if line.hasSuffix(" 0000 0000 0") { reports += 1 }
            }
            let held = directory.appendingPathComponent("held.events").path
            try (kept.joined(separator: "\n") + "\n").write(toFile: held, atomically: true, encoding: .utf8)
            let socket = directory.appendingPathComponent("motiond.sock").path

            let run = try Run("umockdev-wrapper", [
                "/usr/bin/python3", EndToEnd.repository.appendingPathComponent("Tests/EndToEnd/stop_with_finger_down.py").path,
                files.device, files.ioctl, held, socket, "card.drag", "--",
                Run.productsDirectory.appendingPathComponent("motiond").path,
                "--config", EndToEnd.repository.appendingPathComponent("config/motiond.toml").path, "--socket", socket,
            ], absolute: true)
            #expect(run.status == 0, "\(run.error)")
            let lines = try run.jsonLines()
            let began = try #require(lines.firstIndex { $0["stream"] as? String == "card.drag" && $0["state"] as? String == "began" },
                                     "the drag never began:\n\(run.output)\n\(run.error)")
            let bye = try #require(lines.firstIndex { $0["event"] as? String == "bye" }, "no bye:\n\(run.output)")
            let stopping = lines[began..<bye]
            #expect(stopping.contains { $0["stream"] as? String == "card.drag" && $0["state"] as? String == "cancelled" },
                    "no cancelled drag before the bye:\n\(run.output)")
            #expect(stopping.contains { $0["event"] as? String == "device" && $0["action"] as? String == "removed" },
                    "no device removed before the bye:\n\(run.output)")
            let stopped = try #require(lines.last)
            #expect(stopped["step"] as? String == "stopped" && stopped["code"] as? Int == 0 && stopped["socket_left"] as? Bool == false, "\(run.output)\n\(run.error)")
            // The log: the panel was let go of, at info level; it did not go away.
            let log = run.error.split(separator: "\n")
            #expect(log.contains { $0.hasPrefix("<6>stopped reading /dev/input/event") && $0.hasSuffix(": motiond is stopping") }, "\(run.error)")
            #expect(!log.contains { $0.contains("went away") }, "\(run.error)")
        }
    }
}
