import Foundation
import Testing

extension Daemons {
    @Suite("libinput record files through motionctl and motiond")
    struct LibinputRecordingCommandTests {
        static let yaml = EndToEnd.recordings.appendingPathComponent("whot-evemu-devices__atmel-maxtouch__2f-touch-hold-release.libinput.yml").path
        static let evemu = EndToEnd.recordings.appendingPathComponent("whot-evemu-devices__atmel-maxtouch__2f-touch-hold-release.evemu").path

        @Test("frames and gestures read the YAML recording as they read the evemu one")
        func sameAsEvemu() throws {
            for command in [["frames"], ["gestures", "--recognizers", "drag,pinch,rotate"]] {
                let fromYAML = try Run("motionctl", command + [Self.yaml, "--json"])
                let fromEvemu = try Run("motionctl", command + [Self.evemu, "--json"])
                #expect(fromYAML.status == 0 && fromEvemu.status == 0, "\(fromYAML.error)")
                let (a, b) = (try fromYAML.jsonLines(), try fromEvemu.jsonLines())
                #expect(a.count == b.count && !a.isEmpty)
                if command == ["frames"] { #expect(EndToEnd.frameContents(a) == EndToEnd.frameContents(b)) }
                for (x, y) in zip(a, b) {
                    let (tx, ty) = (x["t"] as? Double ?? x["time"] as? Double ?? 0, y["t"] as? Double ?? y["time"] as? Double ?? 0)
                    #expect(abs(tx - ty) < 1e-6)
                }
            }
        }

        @Test("--device chooses among the file's devices: 0 is a keyboard and refused, 5 is not there")
        func choosing() throws {
            let keyboard = try Run("motionctl", ["frames", Self.yaml, "--device", "0"])
            #expect(keyboard.status == 1 && keyboard.error.contains("\"AT Translated Set 2 keyboard\" is not a touchscreen"), "\(keyboard.error)")
            let missing = try Run("motionctl", ["gestures", Self.yaml, "--device", "5"])
            #expect(missing.status == 1 && missing.error.contains("\(Self.yaml):16: --device 5 is not in the recording: it holds 2 devices"), "\(missing.error)")
            let live = try Run("motionctl", ["frames", "--device", "1", "--count", "1"])
            #expect(live.status == 2 && live.error.contains("--device and --config go with a recording"), "\(live.error)")
        }

        @Test("motiond --replay plays the touchscreen of a libinput recording, and --replay-device another")
        func daemonReplay() throws {
            let daemon = try RunningDaemon(["--replay", Self.yaml])
            let client = try TestClient(daemon.socket)
            #expect(try client.next()?["event"] as? String == "hello")
            let reply = try client.request(#"{"id": 1, "op": "devices"}"#)
            let devices = (reply["result"] as? [String: Any])?["devices"] as? [[String: Any]] ?? []
            #expect(devices.map { $0["name"] as? String } == ["Atmel maXTouch Touchscreen"], "\(reply)")
            #expect(daemon.stop().status == 0)

            let directory = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: directory) }
            let refused = try Run("motiond", ["--replay", Self.yaml, "--replay-device", "0", "--socket", directory.appendingPathComponent("s").path,
                                              "--config", EndToEnd.repository.appendingPathComponent("config/motiond.toml").path])
            #expect(refused.status == 1 && refused.error.contains("is not a touchscreen"), "\(refused.error)")
        }
    }
}
