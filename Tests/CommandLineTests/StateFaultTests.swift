import Foundation
import Glibc
import Testing

extension Daemons {
    /// The scene kept across restarts (`--state`), proved by the faults it is for: motiond
    /// killed (SIGKILL) in the middle of a drag or a toss, stopped (SIGTERM), started on a
    /// damaged or hostile file, and writing to a full disk.
    @Suite("The scene kept across faults")
    struct StateFaultTests {
        static let recording = DaemonTests.bundled
        /// The example scene with the card's toss slowed down (the example's spring settles in
        /// a quarter of a second): a toss lasts long enough, some 1.5 s, for the test to see a
        /// write during it and kill motiond before it ends, on a loaded machine too.
        static let configuration: String = {
            let example = (try? String(contentsOfFile: DaemonTests.example, encoding: .utf8)) ?? ""
            return example.replacingOccurrences(of: "spring = { tension = 342, friction = 30 }", with: "spring = { tension = 60, friction = 8 }")
        }()
        /// The example's elements, in its order: what a start from the configuration has.
        static let configured = ["card", "photo", "drawer", "marker"]
        /// Where the test puts the element its client adds: away from the drag's path.
        static let notePosition = (x: 1650.5, y: 140.25)
        static let addNote = #"{"id": 2, "op": "add_element", "element": {"id": "note", "center": [300, 200], "size": [200, 120], "interactions": {"draggable": {}}}}"#
        static let setNote = #"{"id": 3, "op": "set", "stream": "note.position", "value": {"x": 1650.5, "y": 140.25}}"#

        // MARK: Killed and stopped

        @Test("SIGKILL mid-drag: the added element comes back where it was set; the file's card lies on the drag's path; the card carries on to its destination; a client reconnects")
        func killedMidDrag() throws {
            let files = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: files) }
            let state = files.appendingPathComponent("scene.json").path
            // Half speed: the drag lasts 4.4 s, seconds more than the test needs to see it begin and a write after.
            let daemon = try RunningDaemon(["--replay", Self.recording, "--speed", "0.5", "--state", state, "--state-interval", "0.2"], configuration: Self.configuration)
            let control = try Self.controlClient(daemon)
            try Self.addNote(control)
            let watcher = try Self.subscriber(daemon, ["card.*"])

            var seen = try Self.readUntil(watcher, "card.drag began") { Self.isGesture($0, "card.drag", "began") }
            try Self.waitForWrites(control, 2)
            daemon.signal(SIGKILL)
            #expect(daemon.waitForExit(), "motiond outlived SIGKILL")
            // Everything motiond sent before it died is still in the socket: read it to the end.
            while let message = try watcher.next() { seen.append(message) }

            let file = try Self.readState(state)
            let card = try #require(file["card"])
            let positions = seen.compactMap { Self.point($0, "card.position") }
            let preDrag = try #require(positions.first, "no card.position at all")
            try #require(!seen.contains { Self.isGesture($0, "card.drag", "ended") || Self.isGesture($0, "card.drag", "cancelled") },
                         "the drag ended before the kill (a slow machine?): the file is not one of the middle of a drag")
            // The file is written from the scene between frames, and every frame's values are
            // sent before the next turn of the loop: the file's position is one the client was
            // sent, not merely near the path. And not the card's place before the drag.
            #expect(positions.contains { $0 == card.position }, "the file's card \(card.position) is not one of the \(positions.count) positions the client saw")
            #expect(card.position != preDrag, "the file was written before the card moved")
            let note = try #require(file["note"], "the added element is not in the file")
            #expect(note.position == Self.notePosition && note.added)

            // Started again on the file: no finger holds the card any more, so it carries on as
            // a drag cut short does, on its spring to its destination (the snap point it left).
            let again = try RunningDaemon(["--state", state, "--state-interval", "0.2"], socket: daemon.socket, configuration: Self.configuration)
            let log = again.log(containing: "restored the scene")
            #expect(log.contains("restored the scene from \(state): 5 element(s), 1 of them added by clients"), "\(log)")
            let after = try Self.controlClient(again)
            #expect(try after.elementIDs() == Self.configured + ["note"])
            #expect(try Self.position(after, "note.position") == Self.notePosition)
            let destination = try #require(card.destination, "a tossable card has a destination")
            try Self.waitForRest(after, "card", at: destination)

            // A client that reconnects is greeted, subscribes again and is sent the value at once.
            let reconnected = try TestClient(daemon.socket)
            #expect(try reconnected.next()?["event"] as? String == "hello")
            var events: [[String: Any]] = []
            #expect(try reconnected.request(#"{"id": 1, "op": "subscribe", "streams": ["card.position"]}"#, events: &events)["ok"] as? Bool == true)
            if events.isEmpty, let message = try reconnected.next() { events.append(message) }
            let first = try #require(events.first)
            #expect(Self.point(first, "card.position").map { $0 == destination } == true, "\(first)")
            #expect(again.stop().status == 0)
        }

        @Test("SIGKILL mid-toss: after a restart the card carries on to the destination in the file and rests there")
        func killedMidToss() throws {
            let files = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: files) }
            let state = files.appendingPathComponent("scene.json").path
            // A machine busy enough lets the toss come within the spring's rest distance of
            // its end before the kill; then a restart has nothing left to move, and the run
            // is tried again (three times at most) rather than judged.
            var killed: (daemon: RunningDaemon, card: Saved, destination: (x: Double, y: Double))?
            for _ in 1...3 where killed == nil {
                try? FileManager.default.removeItem(atPath: state)
                let daemon = try RunningDaemon(["--replay", Self.recording, "--state", state, "--state-interval", "0.2"], configuration: Self.configuration)
                let control = try Self.controlClient(daemon)
                let watcher = try Self.subscriber(daemon, ["card.drag"])
                _ = try Self.readUntil(watcher, "card.drag ended", seconds: 30) { Self.isGesture($0, "card.drag", "ended") }
                try Self.waitForWrites(control, 2)
                // The write counted started after the lift, and the card still moves: it was
                // written in flight. (Checked before the kill: a state reached at rest stays there.)
                let moving = try Self.get(control, "card.state", as: String.self)
                daemon.signal(SIGKILL)
                #expect(daemon.waitForExit(), "motiond outlived SIGKILL")
                guard moving == "active" else { continue }
                let card = try #require(try Self.readState(state)["card"])
                let destination = try #require(card.destination)
                if hypot(card.position.x - destination.x, card.position.y - destination.y) > 2 { killed = (daemon, card, destination) }
            }
            let (daemon, card, destination) = try #require(killed, "in three runs the toss ended before the kill (a slow machine?)")
            let again = try RunningDaemon(["--state", state], socket: daemon.socket, configuration: Self.configuration)
            let after = try Self.controlClient(again)
            try Self.waitForRest(after, "card", at: destination)
            // It got there by moving after the start, from where the file put it: the stream's
            // seq counts the values published since it appeared (0: the card has not moved).
            let reconnected = try Self.subscriber(again, ["card.position"])
            let first = try #require(try Self.readUntil(reconnected, "card.position") { Self.point($0, "card.position") != nil }.last)
            #expect(first["seq"] as? Int ?? 0 > 0, "the card did not move after the restart: \(first); \(card.position); \(again.log(containing: "restored"))")
            #expect(again.stop().status == 0)
        }

        @Test("SIGTERM mid-drag loses nothing: the last card.position before the bye is the file's, the added element comes back, and the restarted card goes on to its destination")
        func stoppedMidDrag() throws {
            let files = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: files) }
            let state = files.appendingPathComponent("scene.json").path
            // A long interval: the file can only hold the stop's scene if the stop writes it.
            let daemon = try RunningDaemon(["--replay", Self.recording, "--speed", "0.5", "--state", state, "--state-interval", "3600"], configuration: Self.configuration)
            let control = try Self.controlClient(daemon)
            try Self.addNote(control)
            let watcher = try Self.subscriber(daemon, ["card.*"])
            var seen = try Self.readUntil(watcher, "card.drag began") { Self.isGesture($0, "card.drag", "began") }
            // Some frames into the drag.
            var moved = 0
            seen += try Self.readUntil(watcher, "twenty positions into the drag") { message in
                if Self.point(message, "card.position") != nil { moved += 1 }
                return moved == 20
            }
            daemon.signal(SIGTERM)
            seen += try Self.readUntil(watcher, "the bye", seconds: 10) { $0["event"] as? String == "bye" }
            let (status, log) = daemon.stop()
            #expect(status == 0, "\(log)")
            // (A replay's finger is not cancelled at a stop, as a touchscreen's is: the drag is
            // still on when the scene is written. Either way the card has no finger after a restart.)
            let last = try #require(seen.compactMap { Self.point($0, "card.position") }.last)

            let file = try Self.readState(state)
            let card = try #require(file["card"])
            #expect(card.position == last, "the file's card \(card.position), the client's last \(last)")
            #expect(file["note"].map { $0.position == Self.notePosition } == true)
            let again = try RunningDaemon(["--state", state], socket: daemon.socket, configuration: Self.configuration)
            let after = try Self.controlClient(again)
            #expect(try after.elementIDs() == Self.configured + ["note"])
            #expect(try Self.position(after, "note.position") == Self.notePosition)
            // The cancelled drag set the card going to its destination; it carries on after the restart.
            let destination = try #require(card.destination)
            if card.position == destination { #expect(try Self.position(after, "card.position") == destination) }
            try Self.waitForRest(after, "card", at: destination)
            #expect(again.stop().status == 0)
        }

        // MARK: Bad files

        /// The damaged state files a start must survive, each with what its refusal says, made
        /// from a file a real motiond wrote (`real`): cut within the scene it wrote whole, or
        /// changed where a damaged or hostile file would be.
        static func badFiles(_ real: [UInt8]) throws -> [(name: String, bytes: [UInt8], reason: String)] {
            let text = String(decoding: real, as: UTF8.self)
            // The end of the first write, the scene whole: a cut before it is damage, not a
            // write cut short.
            let whole = try #require(text.range(of: #"\n\{"elements":[0-9]+\}\n"#, options: .regularExpression)).upperBound.utf16Offset(in: text)
            var files: [(String, [UInt8], String)] = [("cut at 1 of \(real.count) bytes", Array(real.prefix(1)), "the file ends within its first line")]
            files += [whole / 3, whole / 2, whole - 3].map { cut in
                ("cut at \(cut) of \(real.count) bytes", Array(real.prefix(cut)), "the file ends before its first write is complete")
            }
            files += [
                ("format 3", Array(text.replacingOccurrences(of: #"{"motiond_state":2}"#, with: #"{"motiond_state":3}"#).utf8), "format 3; this motiond reads formats 1 and 2"),
                ("a huge id", Array(text.replacingOccurrences(of: #""id":"photo""#, with: "\"id\":\"\(String(repeating: "p", count: 100_000))\"").utf8), "an element id is at most 256 bytes, not 100000"),
                ("an id with a NUL", Array(text.replacingOccurrences(of: #""id":"photo""#, with: #""id":"pho\u0000to""#).utf8), "an element id cannot contain a NUL character"),
                ("a position of 1e300", Array(text.replacingOccurrences(of: #""position":[1400,300]"#, with: #""position":[1e300,300]"#).utf8), "key \"position\": position: x must be within"),
                ("an added element under another id", Array(text.replacingOccurrences(of: #""id":"note","interactions""#, with: #""id":"other","interactions""#).utf8), "added.id is \"other\", not the element's id"),
                ("a count that does not add up", Array(text.replacingOccurrences(of: #"{"elements":5}"#, with: #"{"elements":4}"#).utf8), "the write says it leaves 4 elements, but there are 5"),
                ("16 MiB and more", Array(#"{"motiond_state":2}"#.utf8) + [UInt8](repeating: 0x20, count: 17_000_000), "the file is over 16777216 bytes"),
            ]
            return files
        }

        @Test("a damaged state file never stops a start: motiond starts from the configuration, says why, and keeps the file as FILE.refused, byte for byte")
        func badFilesAreSetAside() throws {
            let files = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: files) }
            let state = files.appendingPathComponent("scene.json").path
            // A real file: the example scene and an added element, written at SIGTERM.
            let writer = try RunningDaemon(["--state", state], configuration: Self.configuration)
            try Self.addNote(try Self.controlClient(writer))
            #expect(writer.stop().status == 0)
            let real = try [UInt8](Data(contentsOf: URL(fileURLWithPath: state)))
            #expect(try Self.readState(state)["note"] != nil)

            for (name, bytes, reason) in try Self.badFiles(real) {
                #expect(bytes != real, "\(name): the damage was not made")
                try Data(bytes).write(to: URL(fileURLWithPath: state))
                let daemon = try RunningDaemon(["--state", state], configuration: Self.configuration)
                let client = try TestClient(daemon.socket)
                _ = try client.next()
                #expect(try client.elementIDs() == Self.configured, "\(name)")
                let (status, log) = daemon.stop()
                #expect(status == 0, "\(name): \(log)")
                #expect(log.contains("<3>the state file \(state) is refused: "), "\(name): \(log)")
                #expect(log.contains(reason), "\(name): the log does not say \"\(reason)\": \(log)")
                #expect(log.contains("; starting from the configuration, the file kept as \(state).refused"), "\(name): \(log)")
                let kept = try? Data(contentsOf: URL(fileURLWithPath: state + ".refused"))
                #expect(kept == Data(bytes), "\(name): FILE.refused holds \(kept?.count ?? -1) bytes, not the \(bytes.count) refused")
                // What the stop wrote in its place is the configuration's scene, read back whole.
                #expect(try Self.readState(state).keys.sorted() == Self.configured.sorted(), "\(name)")
            }
        }

        /// What is not motiond's to replace: a file that is not a state file (a configuration
        /// given as the state path by mistake, garbage), a FIFO, a directory. motiond starts
        /// (it neither blocks on a FIFO nor refuses to run), from the configuration, says why
        /// in the log and in `health`, writes nothing, and leaves the thing as it was.
        @Test("what is not a state file is left alone: a configuration, garbage, a large text, a FIFO, a directory; motiond starts, says why, and writes nothing", arguments: [
            "the configuration", "garbage", "{}", "20 MB of spaces", "a FIFO", "a directory",
        ])
        func notAStateFile(kind: String) throws {
            let files = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: files) }
            let state = files.appendingPathComponent("scene.json").path
            var bytes: Data?
            switch kind {
            case "the configuration": bytes = Data(Self.configuration.utf8)
            case "garbage": bytes = Data([0x00, 0xFF, 0x13, 0x37, 0xC0, 0xAF, 0x7B, 0x0A])
            case "{}": bytes = Data("{}".utf8)
            case "20 MB of spaces": bytes = Data(repeating: 0x20, count: 20_000_000)
            case "a FIFO": try #require(mkfifo(state, 0o600) == 0)
            default: try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: false)
            }
            if let bytes { try bytes.write(to: URL(fileURLWithPath: state)) }
            let expected = kind == "a FIFO" ? "is a FIFO, not a regular file: motiond leaves it alone"
                : kind == "a directory" ? "is a directory, not a regular file: motiond leaves it alone"
                : "is not a state file (it does not begin as a state file does"
            let daemon = try RunningDaemon(["--state", state, "--state-interval", "0.2"], configuration: Self.configuration)
            let client = try Self.controlClient(daemon)
            #expect(try client.elementIDs() == Self.configured)
            let problem = try Self.waitForProblem(client) { $0.hasPrefix("the scene is not being kept across restarts: \(state) ") }
            #expect(problem.contains(expected), "\(problem)")
            try Self.addNote(client)
            let (status, log) = daemon.stop()
            #expect(status == 0, "\(log)")
            #expect(log.contains("<3>\(state) \(expected)"), "\(log)")
            #expect(log.contains("; starting from the configuration\n"), "\(log)")
            #expect(!FileManager.default.fileExists(atPath: state + ".refused"))
            var status2 = stat()
            #expect(lstat(state, &status2) == 0)
            switch kind {
            case "a FIFO": #expect(status2.st_mode & S_IFMT == S_IFIFO)
            case "a directory": #expect(status2.st_mode & S_IFMT == S_IFDIR)
            default: #expect(FileManager.default.contents(atPath: state) == bytes, "\(kind) was changed")
            }
        }

        @Test("a state file motiond may not read (root's, mode 0600, motiond running as another user) is never replaced: health says why until a reload can read it")
        func unreadableFile() throws {
            let files = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: files) }
            // A directory motiond's user (nobody) owns, holding root's file.
            let home = files.appendingPathComponent("home").path
            try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: false)
            try #require(chown(home, 65534, 65534) == 0 && chmod(files.path, 0o755) == 0)
            let state = home + "/scene.json"
            let kept = "{\"motiond_state\":2}\n{\"id\":\"photo\",\"added\":null,\"position\":[222,333],\"rotation\":0,\"scale\":1,\"destination\":null}\n{\"elements\":1}\n"
            try kept.write(toFile: state, atomically: false, encoding: .utf8)
            try #require(chmod(state, 0o600) == 0)
            let daemon = try RunningDaemon(["--state", state, "--state-interval", "0.2"], socket: home + "/motiond.sock", configuration: Self.configuration,
                                           launcher: ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"])
            let client = try TestClient(daemon.socket)
            _ = try client.next()
            let problem = try Self.waitForProblem(client) { $0.hasPrefix("the scene is not being kept across restarts: cannot read \(state): Permission denied") }
            #expect(problem.hasSuffix("motiond leaves it alone"), "\(problem)")
            #expect(try Self.position(client, "photo.position") != (222, 333))
            // A reload reads it again, and still may not.
            daemon.signal(SIGHUP)
            try daemon.waitFor("READY=1")
            #expect(try !Self.stateProblems(client).isEmpty, "still unreadable after the reload")
            // Readable now: the next reload takes it up, with its scene.
            try #require(chmod(state, 0o644) == 0)
            daemon.signal(SIGHUP)
            try daemon.waitFor("READY=1")
            try Self.waitForNoProblem(client)
            let after = try TestClient(daemon.socket)
            _ = try after.next()
            #expect(try Self.position(after, "photo.position") == (222, 333))
            let (status, log) = daemon.stop()
            #expect(status == 0, "\(log)")
            #expect(try Self.readState(state)["photo"].map { $0.position == (222, 333) } == true, "the file's scene was taken up and kept")
            #expect(log.contains("<3>cannot read \(state): Permission denied: motiond leaves it alone; starting from the configuration\n"), "\(log)")
            #expect(log.contains("restored the scene from \(state): 1 element(s)"), "\(log)")
        }

        @Test("a second motiond on the same state file is refused at start, naming the first; the first keeps its scene")
        func twoDaemonsOneFile() throws {
            let files = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: files) }
            let state = files.appendingPathComponent("scene.json").path
            let first = try RunningDaemon(["--state", state], configuration: Self.configuration)
            try Self.addNote(try Self.controlClient(first))
            let second = try Run("motiond", ["--state", state, "--socket", files.appendingPathComponent("second.sock").path, "--config", DaemonTests.example], deadline: 30)
            #expect(second.status == 1)
            #expect(second.error.contains("the state file \(state) is in use by another motiond (pid \(first.process.processIdentifier)): two daemons cannot keep one scene"), "\(second.error)")
            #expect(!FileManager.default.fileExists(atPath: files.appendingPathComponent("second.sock").path), "refused before it bound its socket")
            #expect(first.stop().status == 0)
            #expect(try Self.readState(state)["note"] != nil, "the first's scene is kept")
        }

        // MARK: A full disk

        @Test("past a file-size limit (ulimit -f) writes fail with EFBIG: motiond runs on, says so in health and /healthz until the scene fits again, and stops cleanly")
        func fileSizeLimit() throws {
            let files = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: files) }
            let state = files.appendingPathComponent("scene.json").path
            // 16 blocks: 8 KiB in dash's 512-byte blocks, 16 KiB in bash's; the example scene
            // takes under 1 KiB, and 150 added elements over 20 KiB. SIGXFSZ is left at its
            // default action: motiond must ignore it itself.
            let daemon = try RunningDaemon(["--state", state, "--state-interval", "0.2", "--websocket", "127.0.0.1:0"], configuration: Self.configuration,
                                           launcher: ["/bin/sh", "-c", #"ulimit -f 16 && exec "$0" "$@""#])
            let client = try Self.controlClient(daemon)
            try Self.addNote(client)
            try Self.waitUntilSaved(client, "note", at: Self.notePosition)
            let port = try #require(Int(try daemon.webSocketURL().split(separator: ":").last?.prefix { $0.isNumber } ?? ""))
            for index in 0..<150 {
                let reply = try client.request(#"{"id": 10, "op": "add_element", "element": {"id": "filler-\#(index)", "center": [100, 100], "size": [50, 50], "interactions": {"draggable": {}}}}"#)
                try #require(reply["ok"] as? Bool == true, "\(reply)")
            }
            let tooLarge = "the scene is not being kept across restarts: cannot write "
            _ = try Self.waitForProblem(client) { $0.hasPrefix(tooLarge) && $0.hasSuffix(": File too large") }
            let healthz = try EndToEnd.httpGet(port: port, path: "/healthz")
            #expect(healthz.hasPrefix("HTTP/1.1 503") && healthz.contains(tooLarge), "\(healthz)")
            // The file is whole: the last scene written, before the fillers outgrew the limit.
            let lastWritten = (try Self.savedScene(client)["elements"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            #expect(try Self.readState(state).keys.sorted() == lastWritten.sorted(), "the file keeps the last scene written whole")
            #expect(Set(lastWritten).isSuperset(of: Self.configured + ["note"]) && lastWritten.count < 150, "\(lastWritten)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: files.path).sorted() == ["scene.json", "scene.json.lock"], "no temporary file is left")

            // The scene fits again: the next retry writes it and the problem goes.
            for index in 0..<150 {
                _ = try client.request(#"{"id": 11, "op": "remove_element", "element": "filler-\#(index)"}"#)
            }
            try Self.waitForNoProblem(client)
            #expect(!(try EndToEnd.httpGet(port: port, path: "/healthz")).contains(tooLarge))
            // At the limit again, the final write at SIGTERM fails, and motiond still stops cleanly.
            for index in 0..<150 {
                _ = try client.request(#"{"id": 12, "op": "add_element", "element": {"id": "filler-\#(index)", "center": [100, 100], "size": [50, 50], "interactions": {"draggable": {}}}}"#)
            }
            let (status, log) = daemon.stop()
            #expect(status == 0, "motiond did not survive the file-size limit (128 + 25 is SIGXFSZ): \(log)")
            #expect(log.contains("File too large: the scene of this stop is not kept"), "\(log)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: files.path).sorted() == ["scene.json", "scene.json.lock"], "no temporary file is left")
        }

        /// Whether this process can make a mount namespace and mount a tmpfs in it: root on
        /// this machine, often not on CI (no CAP_SYS_ADMIN, or unshare missing).
        static let mountsTmpfs: Bool = {
            guard let run = try? Run("unshare", ["-m", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"], absolute: true, deadline: 30) else { return false }
            return run.status == 0
        }()

        @Test("a real full disk (a 64 KiB tmpfs filled): writes fail with ENOSPC, motiond says so in health, and writes again once there is room",
              .enabled(if: mountsTmpfs, "needs unshare -m and a tmpfs mount (root); the file-size limit test covers the failing write without them"))
        func fullTmpfs() throws {
            let files = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: files) }
            let disk = files.appendingPathComponent("disk").path
            try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: false)
            let state = disk + "/scene.json"
            // motiond in a mount namespace of its own, where `disk` is the tmpfs; the test
            // reaches it through /proc/PID/root.
            let daemon = try RunningDaemon(["--state", state, "--state-interval", "0.2"], configuration: Self.configuration,
                                           launcher: ["/usr/bin/unshare", "-m", "/bin/sh", "-c", "mount -t tmpfs -o size=64k tmpfs '\(disk)' && exec \"$0\" \"$@\""])
            let inside = "/proc/\(daemon.process.processIdentifier)/root\(disk)"
            let client = try Self.controlClient(daemon)
            try Self.addNote(client)
            try Self.waitUntilSaved(client, "note", at: Self.notePosition)

            let filler = inside + "/filler"
            let fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            try #require(fd >= 0, "cannot create \(filler): \(String(cString: strerror(errno)))")
            let chunk = [UInt8](repeating: 0, count: 4096)
            var filled = 0
            while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 { filled += chunk.count }
            let full = errno
            close(fd)
            try #require(full == ENOSPC, "filling the tmpfs stopped with \(String(cString: strerror(full))) after \(filled) bytes")

            _ = try client.request(#"{"id": 5, "op": "set", "stream": "note.position", "value": {"x": 500, "y": 500}}"#)
            // A few lines appended may still fit in the file's last page; sixty elements do not.
            for index in 0..<60 {
                _ = try client.request(#"{"id": 6, "op": "add_element", "element": {"id": "filler-\#(index)", "center": [100, 100], "size": [50, 50]}}"#)
            }
            _ = try Self.waitForProblem(client) { $0.hasPrefix("the scene is not being kept across restarts: cannot ") && $0.hasSuffix(": No space left on device") }
            #expect(try Self.readState(inside + "/scene.json")["note"].map { $0.position == Self.notePosition } == true, "the file keeps the last scene written whole")
            #expect(unlink(filler) == 0)
            try Self.waitForNoProblem(client)
            try Self.waitUntilSaved(client, "note", at: (500, 500))
            #expect(try Self.readState(inside + "/scene.json")["note"].map { $0.position == (500, 500) } == true)
            #expect(try FileManager.default.contentsOfDirectory(atPath: inside).sorted() == ["scene.json", "scene.json.lock"], "no temporary file is left")
            #expect(daemon.stop().status == 0)
        }

        // MARK: Helpers

        /// An element as the state file holds it.
        struct Saved {
            var position: (x: Double, y: Double)
            var destination: (x: Double, y: Double)?
            var added: Bool
        }

        /// The state file's elements by id, read as any JSON reader would: line by line, each
        /// write's lines applied once its `{"elements":N}` line closes it.
        static func readState(_ path: String) throws -> [String: Saved] {
            let text = try String(contentsOfFile: path, encoding: .utf8)
            func pair(_ value: Any?) -> (x: Double, y: Double)? {
                guard let array = value as? [Double], array.count == 2 else { return nil }
                return (array[0], array[1])
            }
            var result: [String: Saved] = [:]
            var pending: [(String, Saved?)] = []
            for line in text.split(separator: "\n").dropFirst() {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
                if object["elements"] != nil {
                    for (id, saved) in pending { result[id] = saved }
                    pending = []
                } else if let removed = object["removed"] as? String {
                    pending.append((removed, nil))
                } else {
                    let id = try #require(object["id"] as? String)
                    pending.append((id, Saved(position: try #require(pair(object["position"])), destination: pair(object["destination"]),
                                              added: !(object["added"] is NSNull))))
                }
            }
            return result
        }

        /// A connection with control (the tests run as root), past its hello.
        static func controlClient(_ daemon: RunningDaemon) throws -> TestClient {
            let client = try TestClient(daemon.socket)
            let hello = try #require(try client.next())
            try #require(hello["control"] as? Bool == true, "\(hello)")
            return client
        }

        /// A connection subscribed to `streams`, its reply read.
        static func subscriber(_ daemon: RunningDaemon, _ streams: [String]) throws -> TestClient {
            let client = try TestClient(daemon.socket)
            _ = try client.next()
            client.send(#"{"id": 1, "op": "subscribe", "streams": ["# + streams.map { "\"\($0)\"" }.joined(separator: ",") + "]}\n")
            return client
        }

        /// Adds the draggable "note" and puts it at ``notePosition``.
        static func addNote(_ client: TestClient) throws {
            try #require(try client.request(Self.addNote)["ok"] as? Bool == true)
            try #require(try client.request(Self.setNote)["ok"] as? Bool == true)
        }

        /// The messages `client` reads until one satisfies `done` (included), within `seconds`.
        static func readUntil(_ client: TestClient, _ what: String, seconds: Double = 20, _ done: ([String: Any]) -> Bool) throws -> [[String: Any]] {
            var messages: [[String: Any]] = []
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline, let message = try client.next() {
                messages.append(message)
                if done(message) { return messages }
            }
            throw RunningDaemon.Failure(description: "no \(what) within \(Int(seconds)) s; read \(messages.count) messages")
        }

        static func isGesture(_ message: [String: Any], _ stream: String, _ state: String) -> Bool {
            message["stream"] as? String == stream && message["state"] as? String == state
        }

        /// The point a value event of `stream` carries.
        static func point(_ message: [String: Any], _ stream: String) -> (x: Double, y: Double)? {
            guard message["stream"] as? String == stream, let value = message["value"] as? [String: Double],
                  let x = value["x"], let y = value["y"] else { return nil }
            return (x, y)
        }

        static func get<T>(_ client: TestClient, _ stream: String, as type: T.Type = T.self) throws -> T {
            let reply = try client.request(#"{"id": 4, "op": "get", "stream": "\#(stream)"}"#)
            return try #require((reply["result"] as? [String: Any])?["value"] as? T, "\(reply)")
        }

        static func position(_ client: TestClient, _ stream: String) throws -> (x: Double, y: Double) {
            let value: [String: Double] = try get(client, stream)
            return (value["x"] ?? .nan, value["y"] ?? .nan)
        }

        static func savedScene(_ client: TestClient) throws -> [String: Any] {
            try #require(try client.request(#"{"id": 6, "op": "saved_scene"}"#)["result"] as? [String: Any])
        }

        /// Polls `condition` every 20 ms until it holds, for at most `seconds`.
        static func poll(_ what: String, seconds: Double = 20, _ condition: () throws -> Bool) throws {
            let deadline = Date().addingTimeInterval(seconds)
            while try !condition() {
                guard Date() < deadline else { throw RunningDaemon.Failure(description: "\(what): not within \(Int(seconds)) s") }
                usleep(20_000)
            }
        }

        /// Waits until `count` more writes succeeded than now. With two, the last of them
        /// started after this call: a write counted when it ends may have started before.
        static func waitForWrites(_ client: TestClient, _ count: Int) throws {
            let before = try savedScene(client)["writes"] as? Int ?? 0
            try poll("\(count) more state writes") { try savedScene(client)["writes"] as? Int ?? 0 >= before + count }
        }

        /// Waits until the last write that succeeded (as `saved_scene` says) held `id` at `position`.
        static func waitUntilSaved(_ client: TestClient, _ id: String, at position: (x: Double, y: Double)) throws {
            try poll("\(id) written at \(position)") {
                let elements = try savedScene(client)["elements"] as? [[String: Any]] ?? []
                let saved = elements.first { $0["id"] as? String == id }?["position"] as? [Double]
                return saved == [position.x, position.y]
            }
        }

        /// `health`'s problems about the state file.
        static func stateProblems(_ client: TestClient) throws -> [String] {
            let health = try #require(try client.request(#"{"id": 7, "op": "health"}"#)["result"] as? [String: Any])
            return (health["problems"] as? [String] ?? []).filter { $0.hasPrefix("the scene is not being kept") }
        }

        /// The first of `health`'s problems about the state file that satisfies `matching`,
        /// once there is one, within 20 s.
        static func waitForProblem(_ client: TestClient, _ matching: (String) -> Bool) throws -> String {
            var found: String?
            try poll("a state problem in the health report") {
                found = try stateProblems(client).first(where: matching)
                return found != nil
            }
            return found ?? ""
        }

        /// Waits until `health` has no problem about the state file, within 20 s.
        static func waitForNoProblem(_ client: TestClient) throws {
            var last: [String] = []
            do {
                try poll("no state problem in the health report") {
                    last = try stateProblems(client)
                    return last.isEmpty
                }
            } catch { throw RunningDaemon.Failure(description: "\(error); still: \(last)") }
        }

        /// Waits until `id`'s state is atRest, then expects its position to be `destination`.
        static func waitForRest(_ client: TestClient, _ id: String, at destination: (x: Double, y: Double)) throws {
            try poll("\(id) at rest", seconds: 15) { try get(client, "\(id).state", as: String.self) == "atRest" }
            let position = try Self.position(client, "\(id).position")
            #expect(position == destination, "\(id) rests at \(position), not at the file's destination \(destination)")
        }
    }
}
