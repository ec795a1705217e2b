import Foundation
import Testing

extension Daemons {
    /// `grab = true` under umockdev: libevdev's grab goes through umockdev's ioctl emulation,
    /// which accepts it. What umockdev cannot show: that other readers then receive nothing
    /// (it does not enforce a grab), and a grab refused with EBUSY (it never refuses).
    @Suite("Device grab")
    struct GrabTests {
        /// motiond with `grab` in its [[device]] on a faked touchscreen; what `devices` says and
        /// what motiond logged.
        func devices(grab: Bool) throws -> (device: [String: Any], log: String) {
            let recording = EndToEnd.recordings.appendingPathComponent("whot-evemu-devices__atmel-maxtouch__1f-drag-up-down.evemu")
            let directory = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: directory) }
            let files = try EndToEnd.convert(recording, into: directory)
            let config = directory.appendingPathComponent("grab.toml").path
            try "[[device]]\nname = \"*\"\ngrab = \(grab)\n\n[[element]]\nid = \"card\"\ncenter = [100, 100]\nsize = [50, 50]\n"
                .write(toFile: config, atomically: true, encoding: .utf8)
            let socket = directory.appendingPathComponent("motiond.sock").path
            // Inside the faked system: motiond, then (once its socket answers, within 60 s)
            // motionctl devices, then a stop.
            let script = """
                "$1" --config "$2" --socket "$3" 2>"$5" &
                daemon=$!
                for _ in $(seq 600); do "$4" stats --socket "$3" >/dev/null 2>&1 && break; sleep 0.1; done
                "$4" devices --json --socket "$3"
                kill $daemon; wait $daemon
                """
            let run = try Run("umockdev-run", [
                "--device", files.device, "--ioctl", "/dev/input/event50=\(files.ioctl)", "--",
                "/bin/sh", "-c", script, "sh", Run.productsDirectory.appendingPathComponent("motiond").path, config, socket,
                Run.productsDirectory.appendingPathComponent("motionctl").path, directory.appendingPathComponent("log").path,
            ], absolute: true, deadline: 120)
            let log = (try? String(contentsOf: directory.appendingPathComponent("log"), encoding: .utf8)) ?? ""
            #expect(run.status == 0, "\(run.error)\n\(log)")
            let device = try #require(try run.jsonLines().first { $0["node"] as? String == "/dev/input/event50" }, "\(run.output)\n\(log)")
            return (device, log)
        }

        @Test("grab = true: the touchscreen is read grabbed, and devices and the log say so")
        func grabbed() throws {
            let (device, log) = try devices(grab: true)
            #expect(device["grabbed"] as? Bool == true)
            #expect(log.contains("using /dev/input/event50 (\"Atmel maXTouch Touchscreen\"), output [0, 0, 1920, 1080], grabbed"), "\(log)")
        }

        @Test("by default the touchscreen is shared")
        func shared() throws {
            let (device, log) = try devices(grab: false)
            #expect(device["grabbed"] as? Bool == false)
            #expect(!log.contains("grabbed"), "\(log)")
        }
    }
}
