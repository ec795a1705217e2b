import Dispatch
import Foundation
import Glibc
import MotionCore
import Testing
@testable import MotionConfiguration
import MotionWire
@testable import MotionDaemon

/// What motiond may do to the file at its state path: read and replace a regular file that is
/// a state file (or nothing), and leave anything else alone, never blocking on it; one
/// motiond a file; a scene that can always be saved; and writes that append what changed.
@Suite("State file safety")
struct StateFileSafetyTests {
    let limits = ValueLimits(screen: Size(width: 1920, height: 1080))

    private func temporaryDirectory() throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("motiond-safety-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        return url.path
    }

    /// `body` on another thread, failing the test (instead of hanging it) if it takes more
    /// than 10 s; `unblock` is then called to let the thread go.
    private func withDeadline<T: Sendable>(_ what: String, unblock: () -> Void, _ body: @escaping @Sendable () -> T) -> T? {
        let done = DispatchSemaphore(value: 0)
        let result = ResultBox<T>()
        Thread.detachNewThread {
            result.value = body()
            done.signal()
        }
        if done.wait(timeout: .now() + 10) == .timedOut {
            Issue.record("\(what) did not return within 10 s")
            unblock()
            _ = done.wait(timeout: .now() + 10)
            return nil
        }
        return result.value
    }

    // MARK: What is at the path

    @Test("a FIFO at the state path is refused at once, never opened blocking, and left a FIFO; the scene is not kept and health says why")
    func fifo() throws {
        let directory = try temporaryDirectory()
        let path = directory + "/scene.json"
        try #require(mkfifo(path, 0o600) == 0)
        let file = StateFile(path: path)
        let error = withDeadline("reading a FIFO", unblock: {
            // A reader blocked in open(2) is let go by a writer opening the FIFO.
            let fd = open(path, O_WRONLY | O_NONBLOCK)
            if fd >= 0 { close(fd) }
        }) { [limits] in
            Result { () throws(StateFileError) in try file.read(limits: limits) }.failure
        }
        let refusal = try #require(error ?? nil)
        #expect(refusal.cause == .notRegular && refusal.leavesFileAlone, "\(refusal)")
        #expect(refusal.description == "\(path) is a FIFO, not a regular file: motiond leaves it alone")

        let kiosk = try SceneKeeperTests.Kiosk(directory: directory, interval: 1)
        guard case .leftAlone(let reason) = kiosk.restoration else { Issue.record("\(String(describing: kiosk.restoration))"); return }
        #expect(reason.cause == .notRegular)
        try kiosk.request(#"{"op": "set", "stream": "photo.position", "value": {"x": 1300, "y": 500}}"#)
        kiosk.wait(until: 20)
        #expect(kiosk.daemon.keepSceneFinally()?.cause == .notRegular)
        #expect(kiosk.daemon.keeper?.writes == 0)
        #expect(kiosk.daemon.health().problems.contains(HealthProblem(.sceneNotKept, "the scene is not being kept across restarts: \(path) is a FIFO, not a regular file: motiond leaves it alone")))
        var status = stat()
        #expect(lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO, "still a FIFO")
        #expect(!FileManager.default.fileExists(atPath: path + ".refused"))
    }

    @Test("a device node, a symbolic link and a directory at the state path are left as they are")
    func notRegularFiles() throws {
        let directory = try temporaryDirectory()
        var cases: [(name: String, make: (String) -> Bool, kind: mode_t)] = [
            ("a symbolic link to a state file", { path in
                let target = path + ".target"
                _ = try? StateFile(path: target).replace(with: SceneState(elements: []), over: nil)
                return symlink(target, path) == 0
            }, S_IFLNK),
            ("a directory", { mkdir($0, 0o700) == 0 }, S_IFDIR),
        ]
        // A copy of /dev/null (as the real one would be broken by a rename over it); only
        // where this process may make device nodes.
        if mknod(directory + "/probe", S_IFCHR | 0o666, dev_t(1 << 8 | 3)) == 0 {
            unlink(directory + "/probe")
            cases.append(("a character device", { mknod($0, S_IFCHR | 0o666, dev_t(1 << 8 | 3)) == 0 }, S_IFCHR))
        }
        for (index, item) in cases.enumerated() {
            let sub = directory + "/\(index)"
            try FileManager.default.createDirectory(atPath: sub, withIntermediateDirectories: false)
            try #require(item.make(sub + "/scene.json"), "\(item.name)")
            let kiosk = try SceneKeeperTests.Kiosk(directory: sub, interval: 1)
            guard case .leftAlone(let reason) = kiosk.restoration else { Issue.record("\(item.name): \(String(describing: kiosk.restoration))"); continue }
            #expect(reason.cause == .notRegular, "\(item.name): \(reason)")
            try kiosk.request(#"{"op": "set", "stream": "photo.position", "value": {"x": 1300, "y": 500}}"#)
            kiosk.wait(until: 20)
            _ = kiosk.daemon.keepSceneFinally()
            var status = stat()
            #expect(lstat(sub + "/scene.json", &status) == 0 && status.st_mode & S_IFMT == item.kind, "\(item.name) is still there")
            #expect(!FileManager.default.fileExists(atPath: sub + "/scene.json.refused"), "\(item.name)")
        }
    }

    @Test("a file that is not a state file (the configuration, by mistake) is left byte for byte, not set aside and not replaced")
    func foreignFile() throws {
        let directory = try temporaryDirectory()
        let path = directory + "/scene.json"
        let configuration = Data(SceneKeeperTests.configuration.utf8)
        try configuration.write(to: URL(fileURLWithPath: path))
        let kiosk = try SceneKeeperTests.Kiosk(directory: directory, interval: 1)
        guard case .leftAlone(let reason) = kiosk.restoration else { Issue.record("\(String(describing: kiosk.restoration))"); return }
        #expect(reason.cause == .foreign && reason.refusal?.kind == .notAStateFile, "\(reason)")
        try kiosk.request(#"{"op": "add_element", "element": {"id": "note", "center": [100, 100], "size": [50, 50]}}"#)
        kiosk.wait(until: 20)
        #expect(kiosk.daemon.keepSceneFinally() != nil)
        #expect(FileManager.default.contents(atPath: path) == configuration)
        #expect(!FileManager.default.fileExists(atPath: path + ".refused"))
        let saved = try kiosk.request(#"{"op": "saved_scene"}"#)
        #expect(saved["error"]?.string?.contains("is not a state file") == true, "\(saved)")
    }

    @Test("a reload reads a file that was left alone again, and keeps the scene once it is a state file")
    func reloadTakesUpTheFile() throws {
        let directory = try temporaryDirectory()
        let path = directory + "/scene.json"
        try Data("not a scene".utf8).write(to: URL(fileURLWithPath: path))
        let kiosk = try SceneKeeperTests.Kiosk(directory: directory, interval: 1)
        guard case .leftAlone = kiosk.restoration else { Issue.record("\(String(describing: kiosk.restoration))"); return }
        let configuration = try Configuration.parse(SceneKeeperTests.configuration, file: "kiosk.toml")
        kiosk.daemon.reload(configuration)
        #expect(kiosk.daemon.keeper?.leftAlone != nil, "still not a state file")
        // A change while the file is left alone is not written, and does not stop the writes
        // that follow once it is taken up.
        try kiosk.request(#"{"op": "set", "stream": "card.position", "value": {"x": 700, "y": 700}}"#)
        kiosk.wait(until: 11)
        // The operator puts a state file there.
        unlink(path)
        let state = SceneState(elements: [.init(id: "photo", position: Point(x: 222, y: 333))])
        try StateFile(path: path).replace(with: state, over: nil)
        kiosk.daemon.reload(configuration)
        #expect(kiosk.daemon.keeper?.leftAlone == nil)
        #expect(kiosk.position("photo") == Point(x: 222, y: 333))
        // The scene taken up (the configuration's card, the file's photo) is written.
        kiosk.wait(until: 13)
        #expect(try kiosk.saved()?.elements.map(\.id) == ["card", "photo"], "\(String(describing: try? kiosk.saved()))")
        try kiosk.request(#"{"op": "set", "stream": "photo.position", "value": {"x": 1300, "y": 500}}"#)
        kiosk.wait(until: 20)
        #expect(try kiosk.saved()?.elements.first { $0.id == "photo" }?.position == Point(x: 1300, y: 500))
    }

    @Test("a file put in place of the one motiond wrote is not replaced: the scene is no longer kept, and health says why")
    func fileReplacedWhileRunning() throws {
        let directory = try temporaryDirectory()
        let path = directory + "/scene.json"
        let kiosk = try SceneKeeperTests.Kiosk(directory: directory, interval: 1)
        try kiosk.request(#"{"op": "set", "stream": "photo.position", "value": {"x": 1300, "y": 500}}"#)
        kiosk.wait(until: 10)
        #expect(kiosk.daemon.keeper?.writes == 1)
        // Someone copies another file over it (a new inode).
        let other = Data("[daemon]\n".utf8)
        try other.write(to: URL(fileURLWithPath: path + ".new"))
        try #require(rename(path + ".new", path) == 0)
        try kiosk.request(#"{"op": "set", "stream": "photo.position", "value": {"x": 1200, "y": 500}}"#)
        kiosk.wait(until: 20)
        #expect(FileManager.default.contents(atPath: path) == other)
        #expect(kiosk.daemon.keeper?.leftAlone?.cause == .replaced)
        #expect(kiosk.daemon.health().problems.contains { $0.kind == .sceneNotKept && $0.message.contains("was put in place of the file motiond wrote") })
    }

    @Test("a refused state file is not set aside over something that is not a regular file; it is then left alone")
    func setAsideOverADirectory() throws {
        let directory = try temporaryDirectory()
        let path = directory + "/scene.json"
        let torn = Array(#"{"version":1,"elements":[{"id""#.utf8)
        try Data(torn).write(to: URL(fileURLWithPath: path))
        try FileManager.default.createDirectory(atPath: path + ".refused", withIntermediateDirectories: false)
        let kiosk = try SceneKeeperTests.Kiosk(directory: directory, interval: 1)
        guard case .refused(_, let setAside?) = kiosk.restoration else { Issue.record("\(String(describing: kiosk.restoration))"); return }
        #expect(setAside.cause == .notRegular)
        try kiosk.request(#"{"op": "set", "stream": "photo.position", "value": {"x": 1300, "y": 500}}"#)
        kiosk.wait(until: 20)
        _ = kiosk.daemon.keepSceneFinally()
        #expect(FileManager.default.contents(atPath: path) == Data(torn), "the refused file stays as it was")
    }

    // MARK: One motiond a file

    @Test("a second keeper of the same file is refused, naming the first's process; the lock goes with the first")
    func oneDaemonAFile() throws {
        let directory = try temporaryDirectory()
        let first = try SceneKeeperTests.Kiosk(directory: directory, interval: 1)
        let error = try #require(throws: StateFileError.self) { _ = try SceneKeeperTests.Kiosk(directory: directory, interval: 1) }
        #expect(error.problem == .inUse(holder: getpid()), "\(error)")
        #expect(error.description == "the state file \(directory)/scene.json is in use by another motiond (pid \(getpid())): two daemons cannot keep one scene")
        // `motionctl state clear --file` takes the same lock.
        #expect(throws: StateFileError.self) { _ = try StateFile(path: directory + "/scene.json").lock() }
        withExtendedLifetime(first) {}
        first.release()
        #expect(try StateFile(path: directory + "/scene.json").lock() != nil, "free once the first is gone")
    }

    // MARK: A scene that can always be saved

    @Test("add_element refuses an element that would make the scene too large to save, with the reason; what was added is still saved")
    func unsavableSceneRefused() throws {
        let directory = try temporaryDirectory()
        let kiosk = try SceneKeeperTests.Kiosk(directory: directory, interval: 1)
        // Elements whose add_element objects take 60 KB each, added as a request adds them,
        // without parsing 8 MB of requests first.
        let padding = JSONValue.string(String(repeating: "x", count: 60_000))
        var added = 0
        var refusal: ProtocolError?
        for index in 0..<400 {
            let id = "n\(index)"
            let settings = try ElementInput.settings(from: JSONInput(parsing: Substring(#"{"id": "\#(id)", "center": [10, 10], "size": [5, 5]}"#)), limits: limits)
            do {
                try kiosk.daemon.scene.add(settings, object: .object([("id", .string(id)), ("center", [10, 10]), ("size", [5, 5]), ("note", padding)]))
                added += 1
            } catch {
                refusal = error
                break
            }
        }
        let error = try #require(refusal, "400 elements of 60 KB were all added")
        #expect(error.code == .badValue)
        #expect(error.message.hasPrefix("'n\(added)' is not added, so that the scene can still be saved: the scene would take up to"), "\(error)")
        #expect((130...140).contains(added), "\(added) added: 8 MiB of 60 KB elements")
        // A request past the limit is refused the same way, and the connection goes on.
        let points = (0..<1000).map { #""snap-point-with-a-long-name-\#($0)": [\#($0), 10]"# }.joined(separator: ", ")
        kiosk.daemon.receive(Substring(#"{"id": 1, "op": "add_element", "element": {"id": "late", "center": [10, 10], "size": [5, 5], "interactions": {"tossable": {"snap_points": {\#(points)}}}}}"#), from: kiosk.session)
        let reply = try #require(try kiosk.output.take().first { $0["id"]?.integer == 1 })
        #expect(reply["error"]?["code"]?.string == "bad_value" && reply["error"]?["message"]?.string?.contains("so that the scene can still be saved") == true, "\(reply)")
        // Removing one makes room again.
        try kiosk.request(#"{"op": "remove_element", "element": "n0"}"#)
        try kiosk.request(#"{"op": "add_element", "element": {"id": "small", "center": [10, 10], "size": [5, 5]}}"#)
        // And the scene, at the limit, is saved: every write is read back before it is made.
        kiosk.wait(until: 20)
        #expect(kiosk.daemon.keeper?.failure == nil, "\(String(describing: kiosk.daemon.keeper?.failure))")
        #expect(kiosk.daemon.keeper?.writes == 1)
        #expect(kiosk.daemon.keeper?.saved?.elements.count == 2 + added)
    }

    // MARK: Writes that append what changed

    /// Bytes written while one card is dragged for `writes` writes, in a scene with `resting`
    /// elements at rest.
    private func bytesWhileDragging(resting: Int, writes: Int) throws -> Int {
        let kiosk = try SceneKeeperTests.Kiosk(directory: try temporaryDirectory(), interval: 1)
        for index in 0..<resting {
            try kiosk.request(#"{"op": "add_element", "element": {"id": "rest\#(index)", "center": [\#(index % 1900), 500], "size": [10, 10]}}"#)
        }
        kiosk.wait(until: 11)
        let before = try #require(kiosk.daemon.keeper?.bytesWritten)
        for step in 1...writes {
            try kiosk.request(#"{"op": "set", "stream": "photo.position", "value": {"x": \#(1000 + step), "y": 500}}"#)
            kiosk.wait(until: 11 + Double(step))
        }
        #expect(kiosk.daemon.keeper?.writes == 1 + writes)
        // Read back, the file is the scene.
        #expect(try kiosk.saved() == kiosk.daemon.scene.savedState().state)
        return try #require(kiosk.daemon.keeper?.bytesWritten) - before
    }

    @Test("the bytes written while one element moves do not grow with the elements at rest")
    func writesAppendWhatChanged() throws {
        let few = try bytesWhileDragging(resting: 2, writes: 30)
        let many = try bytesWhileDragging(resting: 500, writes: 30)
        #expect(few > 0)
        // The same lines but for the count of elements each write closes with.
        #expect(many <= few + 30 * 4, "\(many) bytes with 500 elements at rest, \(few) with 2")
    }

    @Test("appended writes read back as the scene; a write cut short is ignored, and the next write is whole")
    func appendedAndCutShort() throws {
        let directory = try temporaryDirectory()
        let path = directory + "/scene.json"
        let kiosk = try SceneKeeperTests.Kiosk(directory: directory, interval: 1)
        try kiosk.request(#"{"op": "add_element", "element": {"id": "note", "center": [100, 100], "size": [50, 50]}}"#)
        kiosk.wait(until: 10)
        let whole = try #require(FileManager.default.contents(atPath: path)).count
        try kiosk.request(#"{"op": "set", "stream": "photo.position", "value": {"x": 1300, "y": 500}}"#)
        kiosk.wait(until: 11)
        try kiosk.request(#"{"op": "remove_element", "element": "note"}"#)
        kiosk.wait(until: 12)
        let bytes = try #require(FileManager.default.contents(atPath: path))
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasSuffix("\n{\"removed\":\"note\"}\n{\"elements\":2}\n"), "\(text)")
        let contents = try StateContents(reading: Array(bytes), limits: limits)
        #expect(contents.wholeBytes == whole && contents.appendedBytes == bytes.count - whole && contents.cutShortBytes == 0)
        #expect(contents.state == kiosk.daemon.scene.savedState().state)

        // Every cut inside the appended writes reads as the last complete one.
        let afterMove = try #require(text.range(of: "{\"removed\"")).lowerBound.utf16Offset(in: text)
        for cut in whole..<bytes.count {
            let read = try StateContents(reading: Array(bytes.prefix(cut)), limits: limits)
            #expect(read.state.elements.map(\.id) == (cut < bytes.count ? ["card", "photo", "note"] : ["card", "photo"]), "cut at \(cut)")
            #expect(read.state.elements.contains { $0.id == "photo" && $0.position.x == 1300 } == (cut >= afterMove), "cut at \(cut)")
        }

        // A start after a write cut short ignores it and writes whole next.
        kiosk.release()
        try Data(bytes + Array(#"{"id":"card","add"#.utf8)).write(to: URL(fileURLWithPath: path))
        let again = try SceneKeeperTests.Kiosk(directory: directory, interval: 1)
        guard case .restored(_, _, _, let cutShort) = again.restoration else { Issue.record("\(String(describing: again.restoration))"); return }
        #expect(cutShort == 17)
        try again.request(#"{"op": "set", "stream": "photo.position", "value": {"x": 1100, "y": 500}}"#)
        again.wait(until: 20)
        let rewritten = try StateContents(reading: Array(try #require(FileManager.default.contents(atPath: path))), limits: limits)
        #expect(rewritten.appendedBytes == 0 && rewritten.cutShortBytes == 0, "written whole")
        #expect(rewritten.state.elements.first { $0.id == "photo" }?.position.x == 1100)
    }

    @Test("appended lines that contradict the scene are refused: a count that does not add up, a removal of nothing, a second header")
    func appendedContradictions() throws {
        let head = "{\"motiond_state\":2}\n" + #"{"id":"card","added":null,"position":[1,2],"rotation":0,"scale":1,"destination":null}"# + "\n{\"elements\":1}\n"
        for (tail, kind) in [
            ("{\"elements\":2}\n", SceneStateError.Kind.inconsistent),
            ("{\"removed\":\"photo\"}\n{\"elements\":0}\n", .inconsistent),
            ("{\"motiond_state\":2}\n{\"elements\":1}\n", .missingKey),
            ("{\"removed\":7}\n{\"elements\":0}\n", .wrongType),
            ("garbage\n{\"elements\":1}\n", .notJSON),
        ] as [(String, SceneStateError.Kind)] {
            #expect(throws: SceneStateError.self, "\(tail)") { _ = try StateContents(reading: Array((head + tail).utf8), limits: limits) }
            do { _ = try StateContents(reading: Array((head + tail).utf8), limits: limits) } catch {
                #expect(error.kind == kind, "\(tail): \(error)")
                #expect(error.line != nil, "\(error)")
            }
        }
        // A partial last line, with nothing after it, is a write cut short.
        #expect(try StateContents(reading: Array((head + "garbage").utf8), limits: limits).cutShortBytes == 7)
    }

    // MARK: Consistency

    @Test("an element whose added object names another id (or none) is refused, in both formats")
    func addedIDMustMatch() throws {
        let element = #"{"id":"card","added":{"id":"other","center":[1,1],"size":[1,1]},"position":[1,2],"rotation":0,"scale":1,"destination":null}"#
        let noID = #"{"id":"card","added":{"center":[1,1],"size":[1,1]},"position":[1,2],"rotation":0,"scale":1,"destination":null}"#
        for text in ["{\"motiond_state\":2}\n\(element)\n{\"elements\":1}\n", #"{"version":1,"elements":["# + element + "]}",
                     "{\"motiond_state\":2}\n\(noID)\n{\"elements\":1}\n"] {
            let error = try #require(throws: SceneStateError.self) { _ = try SceneState(reading: Array(text.utf8), limits: limits) }
            #expect(error.kind == .badID && error.key == "added", "\(error)")
        }
    }
}

private final class ResultBox<T>: @unchecked Sendable {
    var value: T?
}

extension Result {
    /// The error, if it is one.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
