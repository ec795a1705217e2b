import Foundation
import Glibc
import Testing

/// `motionctl sweep`: what a packager runs on a folder of recordings before a rollout.
@Suite("motionctl sweep")
struct SweepCommandTests {
    @Test("on the repository's recordings: one JSON line per recording and a summary, every device with events accepted and nothing lost, exit 0")
    func fixturesJSON() throws {
        let run = try Run("motionctl", ["sweep", EndToEnd.recordings.path, "--json", "--fail-on-loss"])
        #expect(run.status == 0, "\(run.error)")
        let lines = try run.jsonLines()
        let recordings = lines.dropLast()
        let summary = try #require(lines.last?["summary"] as? [String: Int])
        #expect(recordings.count == summary["recordings"] && recordings.count >= 10, "\(summary)")
        // Each device description without events (.desc) is one; .events files are read with theirs.
        let descriptions = FileManager.default.enumerator(atPath: EndToEnd.recordings.path)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".desc") }.count
        #expect(summary["without_events"] == descriptions && summary["lost_contacts"] == 0, "\(summary)")
        #expect(recordings.contains { ($0["path"] as? String)?.hasSuffix(".events") == true && ($0["devices"] as? [[String: Any]])?.first?["verdict"] as? String == "accepted" },
                "an .events file is swept with the description beside it")
        var accepted = 0
        for recording in recordings {
            let path = try #require(recording["path"] as? String)
            #expect(recording["error"] == nil, "\(path)")
            for device in try #require(recording["devices"] as? [[String: Any]]) {
                switch device["verdict"] as? String {
                case "accepted":
                    accepted += 1
                    #expect((device["contacts"] as? [String: Int])?["lost"] == 0, "\(path)")
                    #expect((device["filters"] as? [String: Any])?["notes"] is [Any], "\(path)")
                    #expect((device["filtered"] as? [String: Int])?["palms"] == 0, "\(path)")
                case "without_events": #expect(path.hasSuffix(".desc"))
                case "refused": #expect(path.hasSuffix(".libinput.yml") && device["device"] as? Int == 0, "\(device)")
                default: Issue.record("\(path): \(device)")
                }
            }
        }
        #expect(accepted == summary["accepted"])
    }

    @Test("a real swipe that palm_size = 60 makes a palm from its landing: the text says LOST and why, --fail-on-loss exits 1, and an entry that selects nothing refuses the rest")
    func loss() throws {
        let directory = try EndToEnd.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let pixel = "aosp-frameworks-base__pixel-tablet-nvt-touchscreen__1f-swipe.evemu"
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("panels/pixel"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: EndToEnd.recordings.appendingPathComponent(pixel), to: directory.appendingPathComponent("panels/pixel/swipe.evemu"))
        try FileManager.default.copyItem(at: EndToEnd.recordings.appendingPathComponent("whot-evemu-devices__atmel-maxtouch__1f-fast-taps-x9.evemu"),
                                         to: directory.appendingPathComponent("panels/atmel.evemu"))
        try "N: panel\nE: 0.100000 0003 0035 \u{1B}]0;owned\u{7}\n".write(to: directory.appendingPathComponent("panels/garbage.evemu"), atomically: true, encoding: .utf8)
        let config = directory.appendingPathComponent("motiond.toml").path
        try "[[device]]\nname = \"NVT*\"\npalm_size = 60\n".write(toFile: config, atomically: true, encoding: .utf8)

        let text = try Run("motionctl", ["sweep", directory.appendingPathComponent("panels").path, "--config", config])
        #expect(text.status == 0, "without --fail-on-loss a loss is reported, not an error: \(text.error)")
        let swipe = try #require(text.lines.firstIndex { $0.hasSuffix("/panels/pixel/swipe.evemu\"") }, "\(text.output)")
        #expect(text.lines[swipe + 1] == "  \"NVTCapacitiveTouchScreen\": accepted; LOST 1 contact", "\(text.output)")
        #expect(text.lines.contains("    contacts: 1 sent by the device, 0 after the filters, 0 cancelled by them, 1 lost"), "\(text.output)")
        #expect(text.lines.contains { $0.hasPrefix("    filtered: stuck 0, palms 1,") }, "\(text.output)")
        #expect(text.lines.contains("  \"Atmel maXTouch Touchscreen\": refused: no [[device]] entry in \(config) selects it"), "\(text.output)")
        let garbage = try #require(text.lines.firstIndex { $0.hasSuffix("/panels/garbage.evemu\"") }, "\(text.output)")
        #expect(text.lines[garbage + 1] == #"  refused: line 2: expected 'E: SECONDS.MICROSECONDS TYPE CODE VALUE' (type and code in hexadecimal, value in decimal); "\u{1B}]0;owned\u{7}" is not a value"#, "\(text.output)")
        #expect(text.lines.last == "3 recordings: 1 accepted, 2 refused, 0 without events; 1 device lost contacts", "\(text.output)")
        let json = try Run("motionctl", ["sweep", directory.appendingPathComponent("panels").path, "--config", config, "--json"]).jsonLines()
        #expect(json.first { ($0["path"] as? String)?.hasSuffix("garbage.evemu") == true }?["error"] as? String == #"line 2: expected 'E: SECONDS.MICROSECONDS TYPE CODE VALUE' (type and code in hexadecimal, value in decimal); "\u{1B}]0;owned\u{7}" is not a value"#)
        #expect(!text.output.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 }, "no escape reaches the terminal")
        #expect(json.last?["summary"] as? [String: Int] == ["recordings": 3, "accepted": 1, "refused": 2, "without_events": 0, "lost_contacts": 1])

        let failing = try Run("motionctl", ["sweep", directory.appendingPathComponent("panels").path, "--config", config, "--fail-on-loss"])
        #expect(failing.status == 1 && failing.output == text.output, "\(failing.error)")
    }

    @Test("a folder that cannot be read exits 1 saying why")
    func unreadable() throws {
        let run = try Run("motionctl", ["sweep", "/nonexistent/recordings"])
        #expect(run.status == 1)
        #expect(run.error == "motionctl: cannot read \"/nonexistent/recordings\": No such file or directory\n", "\(run.error)")
    }

    /// A folder with a real `.events` recording whose `.desc` is a FIFO, one linking to
    /// /dev/zero, and a sparse file one byte over the cap: each refused, none waited on.
    static func hostileFolder() throws -> URL {
        let directory = try EndToEnd.scratch()
        let source = EndToEnd.recordings.appendingPathComponent("p12tic-xorg-integration-tests__touch-dev-n4__up-to-4f.events").path
        for device in ["fifo", "zero", "huge"] {
            try FileManager.default.copyItem(atPath: source, toPath: directory.appendingPathComponent("\(device)__drag.events").path)
        }
        try #require(mkfifo(directory.appendingPathComponent("fifo.desc").path, 0o600) == 0)
        try FileManager.default.createSymbolicLink(atPath: directory.appendingPathComponent("zero.desc").path, withDestinationPath: "/dev/zero")
        let huge = open(directory.appendingPathComponent("huge.desc").path, O_WRONLY | O_CREAT, 0o600)
        try #require(huge >= 0)
        defer { close(huge) }
        try #require(ftruncate(huge, 64 << 20 + 1) == 0)
        return directory
    }

    @Test("an .events file whose .desc is a FIFO, a link to /dev/zero, or a sparse file over 64 MiB: each refused saying why, within 20 s, with no progress line when standard error is not a terminal")
    func hostileDescriptions() throws {
        let directory = try Self.hostileFolder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try Run("motionctl", ["sweep", directory.path, "--json"], deadline: 20)
        #expect(run.status == 0, "\(run.error)")
        let errors = Dictionary(uniqueKeysWithValues: try run.jsonLines().dropLast().map { line in
            (URL(fileURLWithPath: line["path"] as? String ?? "").lastPathComponent, line["error"] as? String ?? "")
        })
        #expect(errors["fifo__drag.events"]?.hasSuffix("fifo.desc\": not a regular file: a FIFO; a recording is a file") == true, "\(errors)")
        #expect(errors["zero__drag.events"]?.hasSuffix("zero.desc\": not a regular file: a character device; a recording is a file") == true, "\(errors)")
        #expect(errors["huge__drag.events"]?.hasSuffix("huge.desc\": larger than 64 MiB (67108865 bytes): a recording is at most 64 MiB, and this is no recording of a touchscreen") == true, "\(errors)")
        #expect(run.error.isEmpty, "no progress line where standard error is no terminal: \(run.error.debugDescription)")
    }

    @Test("on a terminal, standard error shows where the sweep is, and takes the line away before the results")
    func progressOnATerminal() throws {
        let motionctl = Run.productsDirectory.appendingPathComponent("motionctl").path
        // script(1) runs it on a pseudo-terminal; its output is what the terminal showed.
        let run = try Run("script", ["-qec", "\(motionctl) sweep \(EndToEnd.recordings.path)", "/dev/null"], absolute: true, deadline: 60)
        #expect(run.status == 0, "\(run.error)")
        let progress = try #require(run.output.range(of: "\r\u{1B}[Ksweeping: 0 files read; "), "\(run.output.prefix(300).debugDescription)")
        let cleared = try #require(run.output.range(of: "\r\u{1B}[K", options: .backwards))
        #expect(progress.lowerBound <= cleared.lowerBound)
        #expect(run.output[cleared.upperBound...].hasPrefix("\""), "the results start on a clean line: \(run.output[cleared.upperBound...].prefix(80).debugDescription)")
        #expect(run.output.contains("recordings: "), "\(run.output.suffix(200))")
    }
}
