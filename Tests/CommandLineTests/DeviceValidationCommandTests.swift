import Foundation
import Testing

/// Recordings and fake devices whose descriptions no panel should send, through the
/// commands and the daemon as a user runs them.
extension Daemons {
    @Suite("Invalid devices, from recordings and live through umockdev")
    struct DeviceValidationCommandTests {
        static let atmel = EndToEnd.recordings.appendingPathComponent("whot-evemu-devices__atmel-maxtouch__1f-drag-up-down.evemu")

        /// The Atmel recording with the first line starting with `line` replaced, written to
        /// `directory` as NAME.evemu; its path and the replaced line's number.
        static func craft(_ name: String, replacing line: String, with replacement: String, in directory: URL) throws -> (path: String, line: Int) {
            var lines = try String(contentsOf: atmel, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let index = try #require(lines.firstIndex { $0.hasPrefix(line) })
            lines[index] = replacement
            let url = directory.appendingPathComponent(name + ".evemu")
            try lines.joined(separator: "\n").write(to: url, atomically: true, encoding: .utf8)
            return (url.path, index + 1)
        }

        /// Runs a program with a deadline (`timeout`), so a hang fails the test instead of the run.
        static func bounded(_ program: String, _ arguments: [String]) throws -> Run {
            let path = program.hasPrefix("/") ? program : Run.productsDirectory.appendingPathComponent(program).path
            return try Run("timeout", ["--kill-after=5", "120", path] + arguments, absolute: true)
        }

        static let refused: [(name: String, line: String, replacement: String, expected: String)] = [
            ("slots", "A: 2f 0 9 0 0 0", "A: 2f 0 2147483647 0 0 0", "ABS_MT_SLOT: 2147483648 slots; motiond reads at most 64"),
            ("mask", "B: 03 03", "B: 03 03 00 00 00 00 80 e0 0a" + String(repeating: " ff", count: 9000), "a bit mask of 9008 bytes"),
            ("inverted", "A: 35 0 799 0 0 0", "A: 35 5000 0 0 0 0", "ABS_MT_POSITION_X: maximum 0 is below minimum 5000"),
            ("flat", "A: 35 0 799 0 0 0", "A: 35 5 5 0 0 0", "ABS_MT_POSITION_X: minimum and maximum are both 5"),
            ("late", "E: 0.000001 0003 0039", "E: 18446744073709551615.000001 0003 0039 0006", "beyond the latest motiond reads"),
        ]

        @Test("motionctl gestures and frames refuse an invalid recording at its line, without crashing", arguments: 0..<refused.count)
        func recordingRefused(index: Int) throws {
            let (name, line, replacement, expected) = Self.refused[index]
            let directory = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: directory) }
            let crafted = try Self.craft(name, replacing: line, with: replacement, in: directory)
            for command in [["gestures", crafted.path], ["frames", crafted.path, "--json"]] {
                let run = try Self.bounded("motionctl", command)
                #expect(run.status == 1, "\(command[0]): \(run.status) \(run.error.suffix(500))")
                #expect(run.error.contains("\(crafted.path):\(crafted.line): "), "\(run.error.suffix(500))")
                #expect(run.error.contains(expected), "\(run.error.suffix(500))")
                #expect(run.output.split(separator: "\n").count <= 1, "nothing replayed but gestures' heading")
            }
        }

        @Test("motiond --replay refuses an invalid recording at its line and exits")
        func replayRefused() throws {
            let directory = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: directory) }
            let crafted = try Self.craft("inverted", replacing: "A: 35 0 799 0 0 0", with: "A: 35 5000 0 0 0 0", in: directory)
            let run = try Self.bounded("motiond", ["--replay", crafted.path, "--socket", directory.appendingPathComponent("s").path,
                                                   "--config", EndToEnd.repository.appendingPathComponent("config/motiond.toml").path])
            #expect(run.status != 0 && run.status != 124, "\(run.status): \(run.error)")
            #expect(run.error.contains("\(crafted.path):\(crafted.line): the device is invalid: ABS_MT_POSITION_X"), "\(run.error)")
        }

        @Test("motiond --replay of a recording with centuries between frames, slowed down, waits instead of trapping")
        func replayFarApart() throws {
            let directory = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: directory) }
            // The second frame 2³² − 1 seconds after the first; at a tenth of the speed, 4·10¹⁹ ns.
            let text = try String(contentsOf: Self.atmel, encoding: .utf8).replacingOccurrences(of: "E: 0.081454 ", with: "E: 4294967295.081454 ")
            let path = directory.appendingPathComponent("far.evemu").path
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            let daemon = try RunningDaemon(["--replay", path, "--speed", "0.1", "--config", EndToEnd.repository.appendingPathComponent("config/motiond.toml").path])
            let client = try TestClient(daemon.socket)
            _ = try client.next()
            // The first frame comes 0.1 s after the start; the second is what must not trap.
            var frames = 0
            for attempt in 0..<600 where frames == 0 {
                let stats = try #require(try client.request(#"{"id": \#(attempt), "op": "stats"}"#)["result"] as? [String: Any])
                frames = stats["frames"] as? Int ?? 0
                if frames == 0 { usleep(50_000) }
            }
            #expect(frames == 1)
            let stopped = daemon.stop()
            #expect(stopped.status == 0, "\(stopped.error)")

            // Offline, the idle centuries are skipped rather than ticked through (5·10¹¹ ticks).
            // The finger rests through them, so the stuck filter is off to let it drag after.
            let configuration = try String(contentsOf: EndToEnd.repository.appendingPathComponent("config/motiond.toml"), encoding: .utf8)
                .replacingOccurrences(of: "flip_vertical = false\n", with: "flip_vertical = false\nstuck_after = 0\n")
            #expect(configuration.contains("stuck_after = 0"))
            let configurationPath = directory.appendingPathComponent("motiond.toml").path
            try configuration.write(toFile: configurationPath, atomically: true, encoding: .utf8)
            let simulated = try Self.bounded("motionctl", ["simulate", "--config", configurationPath, path, "--json"])
            #expect(simulated.status != 124, "motionctl simulate did not finish within 120 s")
            #expect(simulated.output.contains("card.position"))
        }

        @Test("the widest Int32 axis ranges replay: every position and millimetre is a finite number on the screen")
        func extremeRanges() throws {
            let directory = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: directory) }
            var text = try String(contentsOf: Self.atmel, encoding: .utf8)
            text = text.replacingOccurrences(of: "A: 35 0 799 0 0 0", with: "A: 35 -2147483648 2147483647 0 0 10")
                .replacingOccurrences(of: "A: 36 0 479 0 0 0", with: "A: 36 -2147483648 2147483647 0 0 10")
            let path = directory.appendingPathComponent("extreme.evemu").path
            try text.write(toFile: path, atomically: true, encoding: .utf8)

            let frames = try Self.bounded("motionctl", ["frames", path, "--json"])
            #expect(frames.status == 0, "\(frames.error.suffix(500))")
            let contacts = try frames.jsonLines().flatMap { $0["contacts"] as? [[String: Any]] ?? [] }
            try #require(contacts.count > 100)
            for contact in contacts {
                // One pixel per unit: the screen is 2³² pixels wide and high.
                let x = try #require(contact["x"] as? Double), y = try #require(contact["y"] as? Double)
                #expect((0...4_294_967_296).contains(x) && (0...4_294_967_296).contains(y), "\(contact)")
                // A panel billions of units wide is no touchscreen's size: no millimetres are
                // believed, and any given would be finite.
                if let mm = contact["mm"] as? [String: Double] { #expect(mm["x"]!.isFinite && mm["y"]!.isFinite) }
            }
            let gestures = try Self.bounded("motionctl", ["gestures", path, "--json"])
            #expect(gestures.status == 0, "\(gestures.error.suffix(500))")
            #expect(!gestures.output.contains("null"), "a NaN went out as null")
        }

        @Test("motionctl umockdev converts a recording whose times run backwards, keeping them in order")
        func backwardsTimes() throws {
            let directory = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: directory) }
            let crafted = try Self.craft("backwards", replacing: "E: 0.000001 0003 0039", with: "E: 10.000000 0003 0039 6", in: directory)
            let run = try Self.bounded("motionctl", ["umockdev", crafted.path, "--output-dir", directory.path])
            #expect(run.status == 0, "\(run.error.suffix(500))")
            let events = try String(contentsOfFile: directory.appendingPathComponent("backwards.events").path, encoding: .utf8)
            let times = events.split(separator: "\n").filter { $0.hasPrefix("E: ") }.compactMap { Double($0.split(separator: " ")[1]) }
            #expect(times.count > 100 && times == times.sorted())
        }

        /// Converts a crafted recording into umockdev files (unvalidated: that is the point).
        static func fake(_ name: String, replacing line: String, with replacement: String, eventNumber: Int, in directory: URL) throws -> (device: String, ioctl: String) {
            let crafted = try craft(name, replacing: line, with: replacement, in: directory)
            let files = try EndToEnd.convert(URL(fileURLWithPath: crafted.path), into: directory, eventNumber: eventNumber)
            return (files.device, files.ioctl)
        }

        @Test("motionctl devices --local skips a touchscreen with nonsense axes, saying which and why")
        func localSkipped() throws {
            let directory = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: directory) }
            let files = try Self.fake("inverted", replacing: "A: 35 0 799 0 0 0", with: "A: 35 5000 0 0 0 0", eventNumber: 50, in: directory)
            for json in [false, true] {
                let run = try Self.bounded("/usr/bin/umockdev-run", [
                    "--device", files.device, "--ioctl", "/dev/input/event50=\(files.ioctl)", "--",
                    Run.productsDirectory.appendingPathComponent("motionctl").path, "devices", "--local",
                ] + (json ? ["--json"] : []))
                #expect(run.status == 1, "\(run.output) \(run.error)")
                #expect(run.error.contains("none could be used"))
                let reason = "/dev/input/event50 (Atmel maXTouch Touchscreen) is not used: its description is invalid: ABS_MT_POSITION_X: maximum 0 is below minimum 5000"
                if json {
                    let lines = try run.jsonLines()
                    #expect(lines.count == 1 && lines.first?["node"] as? String == "/dev/input/event50" && lines.first?["skipped"] as? String == reason, "\(lines)")
                } else {
                    #expect(run.output == "/dev/input/event50  skipped: \(reason)\n", "\(run.output)")
                }
            }
        }

        @Test("motiond skips touchscreens with nonsense axes, present at start or plugged in later, lists them with the reason until unplugged, and keeps running")
        func daemonSkipped() throws {
            let directory = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: directory) }
            let present = try Self.fake("inverted", replacing: "A: 35 0 799 0 0 0", with: "A: 35 5000 0 0 0 0", eventNumber: 50, in: directory)
            // 100 slots: libevdev takes it (it refuses 2³¹ itself: "Cannot allocate memory").
            let plugged = try Self.fake("slots", replacing: "A: 2f 0 9 0 0 0", with: "A: 2f 0 99 0 0 0", eventNumber: 51, in: directory)
            let socket = directory.appendingPathComponent("motiond.sock").path
            let run = try Self.bounded("/usr/bin/umockdev-wrapper", [
                "/usr/bin/python3", EndToEnd.repository.appendingPathComponent("Tests/EndToEnd/skipped_devices.py").path,
                present.device, present.ioctl, plugged.device, plugged.ioctl, socket,
                Run.productsDirectory.appendingPathComponent("motionctl").path, "--",
                Run.productsDirectory.appendingPathComponent("motiond").path,
                "--config", EndToEnd.repository.appendingPathComponent("config/motiond.toml").path, "--socket", socket,
            ])
            #expect(run.status == 0, "\(run.error)")
            let steps = try run.jsonLines()
            #expect(steps.compactMap { $0["step"] as? String } == ["started", "plugged", "motionctl", "motionctl", "unplugged", "stats", "stopped"], "\(run.output)\n\(run.error)")
            func skipped(_ step: String) -> [String: String] {
                let result = steps.first { $0["step"] as? String == step }?["result"] as? [String: Any]
                let entries = result?["skipped"] as? [[String: String]] ?? []
                return Dictionary(entries.map { ($0["node"] ?? "", $0["reason"] ?? "") }) { $1 }
            }
            let inverted = "ABS_MT_POSITION_X: maximum 0 is below minimum 5000"
            let slots = "ABS_MT_SLOT: 100 slots; motiond reads at most 64"
            #expect(skipped("started")["/dev/input/event50"]?.contains(inverted) == true, "\(run.output)")
            #expect(skipped("plugged")["/dev/input/event51"]?.contains(slots) == true, "\(run.output)")
            #expect(skipped("unplugged").keys.sorted() == ["/dev/input/event50"], "\(run.output)")
            for step in ["started", "plugged", "unplugged"] {
                let result = steps.first { $0["step"] as? String == step }?["result"] as? [String: Any]
                #expect((result?["devices"] as? [Any])?.isEmpty == true)
            }

            let motionctl = steps.filter { $0["step"] as? String == "motionctl" }
            let text = motionctl.first?["output"] as? String ?? ""
            #expect(text.contains("/dev/input/event50  skipped: ") && text.contains(inverted), "\(text)")
            #expect(text.contains("/dev/input/event51  skipped: ") && text.contains(slots), "\(text)")
            let json = (motionctl.last?["output"] as? String ?? "").split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            #expect(json.compactMap { $0["node"] as? String } == ["/dev/input/event50", "/dev/input/event51"], "\(json)")
            #expect((json.last?["skipped"] as? String)?.contains(slots) == true)

            #expect(steps.contains { $0["step"] as? String == "stats" && ($0["result"] as? [String: Any])?["devices"] as? Int == 0 })
            #expect(steps.last?["code"] as? Int == 0, "motiond stopped cleanly after skipping: \(run.error)")
        }
    }
}
