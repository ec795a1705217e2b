import Foundation
import Glibc
import Testing

/// Paths the end-to-end tests need, found from this file's place in the repository.
enum EndToEnd {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let recordings = repository.appendingPathComponent("Tests/Fixtures/recordings")
    static let hotplugScript = repository.appendingPathComponent("Tests/EndToEnd/hotplug.py")
    static let playScript = repository.appendingPathComponent("Tests/EndToEnd/umockdev_play.py")

    static let recordingsWithEvents = [
        "aosp-frameworks-base__pixel-tablet-nvt-touchscreen__1f-swipe",
        "whot-evemu-devices__atmel-maxtouch__1f-drag-up-down",
        "whot-evemu-devices__atmel-maxtouch__1f-fast-taps-x9",
        "whot-evemu-devices__atmel-maxtouch__2f-touch-hold-release",
        "whot-evemu-devices__atmel-maxtouch__4f-drag-down",
        "whot-evemu-devices__ep0430m09__2f-drag-scroll",
        "whot-evemu-devices__ep0430m09__2f-drag-scroll.protocol-a",
    ]

    /// A TCP or UDP port on loopback that nothing listened on a moment ago.
    static func freeLoopbackPort(_ type: __socket_type) throws -> Int {
        let fd = Glibc.socket(AF_INET, Int32(type.rawValue), 0)
        defer { Glibc.close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        try #require(bound, "cannot bind a socket on 127.0.0.1: \(String(cString: strerror(errno)))")
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Runs one of the scripts that drive fake_panel.py's made-up touchscreen, under
    /// umockdev-wrapper, with the built motiond and motionctl and `directory` to work in.
    static func fakePanelScript(_ name: String, in directory: URL, _ extra: [String] = [], deadline: Double) throws -> Run {
        try Run("umockdev-wrapper", [
            "/usr/bin/python3", repository.appendingPathComponent("Tests/EndToEnd/\(name)").path,
            "--motiond", Run.productsDirectory.appendingPathComponent("motiond").path,
            "--motionctl", Run.productsDirectory.appendingPathComponent("motionctl").path,
            "--work", directory.path,
        ] + extra, absolute: true, deadline: deadline)
    }

    /// A fresh directory for one test's files.
    static func scratch() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("motiond-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Converts a recording with `motionctl umockdev`; the three files' paths.
    static func convert(_ recording: URL, into directory: URL, eventNumber: Int = 50) throws -> (device: String, ioctl: String, events: String) {
        let run = try Run("motionctl", ["umockdev", recording.path, "--output-dir", directory.path, "--event-number", "\(eventNumber)"])
        try #require(run.status == 0, "motionctl umockdev failed: \(run.error)")
        let base = directory.appendingPathComponent(recording.deletingPathExtension().lastPathComponent).path
        return (base + ".umockdev", base + ".ioctl", base + ".events")
    }

    /// Runs `motionctl ARGUMENTS` under umockdev with a converted device faked at
    /// /dev/input/event50 and, when given, an evemu events file played on it; `wrapper` (as
    /// `timeout -s INT 3`) runs motionctl.
    ///
    /// Events are played by umockdev_play.py, not umockdev-run's own player, which hands a
    /// reader that fell 4 KB behind part of an event (the script says how).
    static func motionctl(_ arguments: [String], faking files: (device: String, ioctl: String, events: String),
                          playing events: String? = nil, wrapper: [String] = []) throws -> Run {
        let device = ["--device", files.device, "--ioctl", "/dev/input/event50=\(files.ioctl)"]
        let program = ["--"] + wrapper + [Run.productsDirectory.appendingPathComponent("motionctl").path] + arguments
        guard let events else { return try Run("umockdev-run", device + program, absolute: true) }
        return try Run("umockdev-wrapper", ["/usr/bin/python3", playScript.path] + device + ["--evemu-events", "/dev/input/event50=\(events)"] + program,
                       absolute: true)
    }

    /// The frame objects among JSON lines, without their timestamps and device names.
    static func frameContents(_ objects: [[String: Any]]) -> [String] {
        objects.filter { $0["event"] as? String == "frame" }.map { frame in
            let contacts = frame["contacts"] as? [[String: Any]] ?? []
            return contacts.map { contact in
                let mm = (contact["mm"] as? [String: Double]).map { "\($0["x"]!),\($0["y"]!)" } ?? "-"
                return ["slot", "id", "phase", "x", "y", "device_x", "device_y", "pressure", "touch_major"]
                    .map { "\($0)=\(contact[$0].map { "\($0)" } ?? "-")" }.joined(separator: " ") + " mm=\(mm)"
            }.joined(separator: " | ")
        }
    }
}

extension Daemons {
    @Suite("End to end through umockdev: real libudev and libevdev")
    struct UmockdevTests {
        @Test("frames read live equal the frames replayed from the same recording", arguments: EndToEnd.recordingsWithEvents)
        func liveEqualsReplay(name: String) throws {
            try Self.liveEqualsReplay(EndToEnd.recordings.appendingPathComponent(name + ".evemu"))
        }

        /// The phantom recordings with frames to wait for (wake-burst has none: its every
        /// contact is a phantom), but the repeating phantom's, whose one-frame taps only a
        /// replay or a fake panel with exact stamps keeps one frame long (live_phantoms.py).
        static let phantomRecordings = ["edge-swipe", "fast-fingers", "flips", "four-finger-rectangle", "ghosts", "storm", "third-finger-near-corner"]

        @Test("a phantom recording read live gives the frames its replay gives: faults removed, near misses kept, through libudev and libevdev",
              arguments: phantomRecordings)
        func phantomLiveEqualsReplay(name: String) throws {
            try Self.liveEqualsReplay(EndToEnd.repository.appendingPathComponent("Tests/Fixtures/phantoms/\(name).evemu"))
        }

        @Test("a reader that starts 2 s late, after more events were due than the fake node holds, still reads every frame whole")
        func lateReader() throws {
            let recording = EndToEnd.repository.appendingPathComponent("Tests/Fixtures/phantoms/four-finger-rectangle.evemu")
            // The whole recording was due before the reader starts: more than the pty's 4095 bytes.
            let replay = try Run("motionctl", ["frames", recording.path, "--json"])
            let events = try String(contentsOf: recording, encoding: .utf8).split(separator: "\n").filter { $0.hasPrefix("E: ") }
            let lastFrame = try #require(try replay.jsonLines().last { $0["event"] as? String == "frame" }?["t"] as? Double)
            try #require(events.count * 24 > 4095 && lastFrame < 2, "\(events.count) events until \(lastFrame) s")
            try Self.liveEqualsReplay(recording, reader: ["/bin/sh", "-c", "sleep 2; exec \"$0\" \"$@\""])
        }

        /// `reader` (a command to start motionctl with) may delay it.
        static func liveEqualsReplay(_ recording: URL, reader: [String] = []) throws {
            let directory = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: directory) }
            let files = try EndToEnd.convert(recording, into: directory)

            let replay = try Run("motionctl", ["frames", recording.path, "--json"])
            try #require(replay.status == 0, "\(replay.error)")
            let expected = EndToEnd.frameContents(try replay.jsonLines())
            try #require(expected.count > 5)

            // Discovery through libudev, reading through libevdev, on the faked device. The reader
            // stops after as many frames as the replay gave; --timeout only ends a run that hangs.
            let live = try EndToEnd.motionctl(["frames", "--json", "--count", "\(expected.count)", "--timeout", "60"],
                                              faking: files, playing: files.events, wrapper: reader)
            #expect(live.status == 0, "\(live.error)")
            let objects = try live.jsonLines()
            #expect(objects.first?["event"] as? String == "device")
            #expect(objects.first?["action"] as? String == "added")
            #expect(objects.first?["node"] as? String == "/dev/input/event50")
            let actual = EndToEnd.frameContents(objects)
            #expect(actual.count == expected.count)
            for (index, (live, replayed)) in zip(actual, expected).enumerated() where live != replayed {
                Issue.record("frame \(index) differs:\n live:   \(live)\n replay: \(replayed)")
                break
            }
        }

        @Test("a device unplugged with a finger down cancels the contact, and is opened again when it comes back")
        func hotplug() throws {
            let recording = EndToEnd.recordings.appendingPathComponent("whot-evemu-devices__atmel-maxtouch__1f-drag-up-down.evemu")
            let directory = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: directory) }
            let first = try EndToEnd.convert(recording, into: directory)
            let again = try EndToEnd.convert(recording, into: directory.appendingPathComponent("again"), eventNumber: 51)

            // Only the first five frames: the finger lands, moves, and is still down.
            let events = try String(contentsOfFile: first.events, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            var kept: [Substring] = [], reports = 0
            for line in events where reports < 5 {
                kept.append(line)
                if line.hasSuffix(" 0000 0000 0") { reports += 1 }
            }
            let held = directory.appendingPathComponent("held.events").path
            try (kept.joined(separator: "\n") + "\n").write(toFile: held, atomically: true, encoding: .utf8)

            let run = try Run("umockdev-wrapper", [
                "/usr/bin/python3", EndToEnd.hotplugScript.path, first.device, first.ioctl, held, "5", again.device, again.ioctl, "--",
                Run.productsDirectory.appendingPathComponent("motionctl").path, "frames", "--json", "--timeout", "60",
            ], absolute: true)
            #expect(run.status == 0, "\(run.error)")
            let lines = try run.jsonLines()
            let steps = lines.compactMap { $0["step"] as? String }
            #expect(steps == ["unplug", "replug", "done"], "\(run.output)\n\(run.error)")

            let unplug = try #require(lines.firstIndex { $0["step"] as? String == "unplug" })
            let replug = try #require(lines.firstIndex { $0["step"] as? String == "replug" })
            let before = lines[..<unplug].filter { $0["event"] as? String == "frame" }
            #expect(before.count == 5)
            let between = Array(lines[unplug..<replug])
            let cancel = try #require(between.first { $0["event"] as? String == "frame" }, "no frame after the unplug")
            let contacts = try #require(cancel["contacts"] as? [[String: Any]])
            #expect(contacts.count == 1)
            #expect(contacts.first?["phase"] as? String == "cancelled")
            #expect(contacts.first?["id"] as? Int == 6)
            #expect(between.contains { $0["event"] as? String == "device" && $0["action"] as? String == "removed" && $0["node"] as? String == "/dev/input/event50" })
            let after = lines[replug...]
            #expect(after.contains { $0["event"] as? String == "device" && $0["action"] as? String == "added" && $0["node"] as? String == "/dev/input/event51" })
        }

        @Test("after SYN_DROPPED, libevdev resyncs: the finger lost in the gap is cancelled, the drop counted, and input goes on")
        func droppedEvents() throws {
            let recording = EndToEnd.recordings.appendingPathComponent("whot-evemu-devices__atmel-maxtouch__1f-drag-up-down.evemu")
            let directory = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: directory) }
            let files = try EndToEnd.convert(recording, into: directory)
            // Five frames with a finger down, the kernel's SYN_DROPPED, two more frames of the
            // lost finger (ignored: the resync says no finger is down), then a new touch.
            var kept: [String] = [], reports = 0
            for line in try String(contentsOfFile: files.events, encoding: .utf8).split(separator: "\n") where reports < 7 {
                kept.append(String(line))
                guard line.hasSuffix(" 0000 0000 0") else { continue }
                reports += 1
                if reports == 5 { kept.append("E: \(line.split(separator: " ")[1]) 0000 0003 0") }
            }
            kept += ["E: 3.000000 0003 002f 0", "E: 3.000000 0003 0039 99", "E: 3.000000 0003 0035 100",
                     "E: 3.000000 0003 0036 100", "E: 3.000000 0000 0000 0"]
            let events = directory.appendingPathComponent("dropped.events").path
            try (kept.joined(separator: "\n") + "\n").write(toFile: events, atomically: true, encoding: .utf8)

            let run = try EndToEnd.motionctl(["frames", "--json", "--count", "7", "--timeout", "60"], faking: files, playing: events)
            #expect(run.status == 0, "\(run.error)")
            let lines = try run.jsonLines()
            let phases = lines.filter { $0["event"] as? String == "frame" }.map { frame in
                ((frame["contacts"] as? [[String: Any]]) ?? []).map { "#\($0["id"]!) \($0["phase"]!)" }.joined(separator: ", ")
            }
            #expect(phases == ["#6 began", "#6 moved", "#6 moved", "#6 moved", "#6 moved", "#6 cancelled", "#99 began"])
            #expect(lines.contains { $0["event"] as? String == "dropped" && $0["total"] as? Int == 1 })
        }

        /// Runs `motionctl frames --json` live on a faked recording; the reader's JSON lines.
        func readLive(_ files: (device: String, ioctl: String, events: String), _ arguments: [String]) throws -> [[String: Any]] {
            let run = try EndToEnd.motionctl(["frames", "--json", "--timeout", "60"] + arguments, faking: files, playing: files.events)
            return try run.jsonLines()
        }

        @Test("only selected devices are read; others are skipped, saying why")
        func selection() throws {
            let recording = EndToEnd.recordings.appendingPathComponent("whot-evemu-devices__atmel-maxtouch__1f-fast-taps-x9.evemu")
            let directory = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: directory) }
            let files = try EndToEnd.convert(recording, into: directory)
            for arguments in [["--name", "*maXTouch*"], ["--ids", "0000:0000"], ["--node", "/dev/input/event50"], ["--name", "ELAN*", "--node", "/dev/input/event50"]] {
                let lines = try readLive(files, arguments + ["--count", "1"])
                #expect(lines.first?["action"] as? String == "added", "\(arguments)")
            }
            // Not selected: skipped with the reason, and nothing read (the timeout ends the run).
            let run = try EndToEnd.motionctl(["frames", "--json", "--name", "ELAN*", "--timeout", "0.5"], faking: files)
            let skipped = try run.jsonLines()
            #expect(skipped.count == 1)
            #expect(skipped.first?["action"] as? String == "skipped")
            #expect((skipped.first?["reason"] as? String)?.contains("not selected") == true)
            #expect(run.status == 1 && run.error.contains("timed out"))
        }

        @Test("a calibration matrix set by udev (LIBINPUT_CALIBRATION_MATRIX) maps the frames")
        func udevCalibration() throws {
            let recording = EndToEnd.recordings.appendingPathComponent("whot-evemu-devices__atmel-maxtouch__1f-fast-taps-x9.evemu")
            let directory = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: directory) }
            let files = try EndToEnd.convert(recording, into: directory)
            // A mirrored panel: x′ = 1 − x, as a hwdb entry or udev rule would say.
            let device = try String(contentsOfFile: files.device, encoding: .utf8)
                .replacingOccurrences(of: "E: ID_INPUT_TOUCHSCREEN=1\nE: MAJOR", with: "E: ID_INPUT_TOUCHSCREEN=1\nE: LIBINPUT_CALIBRATION_MATRIX=-1 0 1 0 1 0\nE: MAJOR")
            try #require(device.contains("LIBINPUT_CALIBRATION_MATRIX"))
            try device.write(toFile: files.device, atomically: true, encoding: .utf8)

            let lines = try readLive(files, ["--count", "4"]).filter { $0["event"] as? String == "frame" }
            try #require(lines.count == 4)
            for frame in lines {
                let contact = try #require((frame["contacts"] as? [[String: Any]])?.first)
                let deviceX = try #require(contact["device_x"] as? Double)
                // One pixel per unit on this 800-unit panel, mirrored.
                #expect(Swift.abs(try #require(contact["x"] as? Double) - (800 - deviceX)) < 1e-9)
            }
        }

        @Test("motionctl devices describes a touchscreen found through udev and opened with libevdev")
        func devices() throws {
            let recording = EndToEnd.recordings.appendingPathComponent("aosp-frameworks-base__pixel-tablet-nvt-touchscreen__1f-swipe.evemu")
            let directory = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: directory) }
            let files = try EndToEnd.convert(recording, into: directory)
            let run = try EndToEnd.motionctl(["devices", "--local", "--json"], faking: files)
            #expect(run.status == 0, "\(run.error)")
            let device = try #require(try run.jsonLines().first)
            #expect(device["node"] as? String == "/dev/input/event50")
            #expect(device["name"] as? String == "NVTCapacitiveTouchScreen")
            #expect(device["bus"] as? String == "spi")
            #expect(device["vendor"] as? String == "0x0603")
            #expect(device["kind"] as? String == "multitouch")
            #expect(device["slots"] as? Int == 10)
            let size = try #require(device["size_mm"] as? [String: Double])
            #expect(Swift.abs(size["width"]! - 1599.0 / 11) < 1e-9)
            let axes = try #require(device["axes"] as? [[String: Any]])
            let x = try #require(axes.first { $0["name"] as? String == "ABS_MT_POSITION_X" })
            #expect(x["max"] as? Int == 1599 && x["resolution"] as? Int == 11)

            let text = try EndToEnd.motionctl(["devices", "--local"], faking: files)
            #expect(text.output.contains("size 145.4 × 232.6 mm"))
            #expect(text.output.contains("multitouch touchscreen, 10 slots"))
        }

        @Test("motionctl devices without a daemon scans this machine, says so in one line, and exits 0 when it found a touchscreen")
        func devicesWithoutDaemon() throws {
            let recording = EndToEnd.recordings.appendingPathComponent("aosp-frameworks-base__pixel-tablet-nvt-touchscreen__1f-swipe.evemu")
            let directory = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: directory) }
            let files = try EndToEnd.convert(recording, into: directory)
            let socket = directory.appendingPathComponent("nobody-listens.sock").path
            let run = try EndToEnd.motionctl(["devices", "--socket", socket, "--json"], faking: files)
            #expect(run.status == 0, "\(run.error)")
            #expect(try run.jsonLines().first?["name"] as? String == "NVTCapacitiveTouchScreen")
            let said = run.error.split(separator: "\n")
            #expect(said.count == 1 && said[0].hasPrefix("motionctl: motiond does not answer at \(socket)") && said[0].hasSuffix("scanning this machine instead"), "\(run.error)")
            // With nothing to find, the scan says why, as --local does.
            let empty = try Run("umockdev-run", ["--", Run.productsDirectory.appendingPathComponent("motionctl").path, "devices", "--socket", socket], absolute: true)
            #expect(empty.status == 1 && empty.error.contains("scanning this machine instead") && empty.error.contains("no input devices at all"), "\(empty.error)")
        }

        @Test("a device udev calls a touchscreen but that is a touchpad is refused, saying so")
        func refusesTouchpad() throws {
            let directory = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: directory) }
            // A touchpad's header (a Synaptics clickpad): pointer property, BTN_TOOL_FINGER.
            let header = """
                # EVEMU 1.3
                N: SynPS/2 Synaptics TouchPad
                I: 0011 0002 0007 01b1
                P: 05 00 00 00 00 00 00 00
                B: 00 0b 00 00 00 00 00 00 00
                B: 01 00 00 00 00 00 00 00 00
                B: 01 00 00 00 00 00 00 00 00
                B: 01 01 00 00 00 00 00 00 00
                B: 01 20 e5 00 00 00 00 00 00
                B: 03 03 00 00 11 00 80 60 06
                A: 00 1472 5648 0 0 75
                A: 01 1408 4806 0 0 129
                A: 2f 0 1 0 0 0
                A: 35 1472 5648 0 0 75
                A: 36 1408 4806 0 0 129
                A: 39 0 65535 0 0 0
                """
            let recording = directory.appendingPathComponent("touchpad.evemu")
            try header.write(to: recording, atomically: true, encoding: .utf8)
            let files = try EndToEnd.convert(recording, into: directory)
            let run = try EndToEnd.motionctl(["devices", "--local"], faking: files)
            #expect(run.status == 1)
            #expect(run.output.contains("/dev/input/event50 (SynPS/2 Synaptics TouchPad) is not used: it is a touchpad"), "\(run.output)")
            #expect(run.error.contains("none could be used"))
        }

        @Test("with no input devices at all, motionctl devices says so and how to try motiond without one")
        func noDevices() throws {
            let run = try Run("umockdev-run", ["--", Run.productsDirectory.appendingPathComponent("motionctl").path, "devices", "--local"], absolute: true)
            #expect(run.status == 1)
            #expect(run.error.contains("no input devices at all"))
            #expect(run.error.contains("--replay"))
        }
    }
}
