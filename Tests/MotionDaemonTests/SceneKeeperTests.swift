import Foundation
import MotionCore
import DaemonTestSupport
import Testing
@testable import MotionConfiguration
import MotionWire
@testable import MotionDaemon

/// The daemon keeping its scene: changes reach the state file at most an interval apart and
/// never inside a frame; a start restores what fits the configuration and says what does not;
/// a refused file is set aside; a failing write shows in the health and is tried again; a
/// reload carries the scene over and `reset_scene` starts afresh.
@Suite("Keeping the scene")
struct SceneKeeperTests {
    static let configuration = """
        [screen]
        width = 1920
        height = 1080

        [[element]]
        id = "card"
        center = [500, 540]
        size = [400, 400]

        [element.tossable]
        destination = [500, 540]

        [[element]]
        id = "photo"
        center = [1400, 540]
        size = [400, 400]

        [element.directly_manipulable]
        """

    /// A daemon on hand-driven clocks keeping its scene in `directory`/scene.json, with a
    /// client that has control.
    final class Kiosk {
        let clock = ManualFrameClock(now: 10)
        let scheduler = HandScheduler(now: 10)
        let daemon: Daemon
        let file: StateFile
        let output = RecordingOutput()
        let session: ClientSession
        private var nextID = 1

        init(directory: String, interval: Double = 2, state: SceneState? = nil, file name: String = "scene.json") throws {
            file = StateFile(path: directory + "/" + name)
            if let state { try file.replace(with: state, over: nil) }
            daemon = Daemon(configuration: try Configuration.parse(SceneKeeperTests.configuration, file: "kiosk.toml"),
                            clock: clock, idleScheduler: scheduler, controlPolicy: { _ in true })
            restoration = try daemon.keepScene(in: file, interval: interval, scheduler: scheduler, writer: ImmediateStateWriter())
            session = daemon.connect(output, credentials: nil)
        }

        /// What became of the file at start.
        private(set) var restoration: Daemon.Restoration!

        /// The reply's result to `request` (without its id), which must succeed.
        @discardableResult
        func request(_ request: String) throws -> JSONInput {
            let id = nextID
            nextID += 1
            daemon.receive(Substring("{\"id\": \(id), " + request.dropFirst()), from: session)
            let reply = try #require(try output.take().first { $0["id"]?.integer == id })
            #expect(reply["ok"]?.bool == true, "\(request): \(reply)")
            return try #require(reply["result"])
        }

        /// Runs the daemon's timers to `time`.
        func wait(until time: Double) {
            clock.now = time
            scheduler.advance(to: time)
        }

        /// The file as it is now; nil when there is none.
        func saved() throws -> SceneState? {
            try file.read(limits: ValueLimits(screen: Size(width: 1920, height: 1080)))?.contents?.state
        }

        func position(_ id: String) -> Point? { daemon.engine.scene.element(id)?.position.value }

        /// Stops keeping the scene, as a stop does, letting go of the file for another.
        func release() {
            _ = daemon.keepSceneFinally()
        }
    }

    private func temporaryDirectory() throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("motiond-keeper-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        return url.path
    }

    @Test("a change is written after the frame, and the next no sooner than an interval later")
    func writesAtMostEveryInterval() throws {
        let kiosk = try Kiosk(directory: try temporaryDirectory(), interval: 2)
        #expect(try kiosk.saved() == nil)
        try kiosk.request(#"{"op": "set", "stream": "photo.position", "value": {"x": 1300, "y": 500}}"#)
        #expect(try kiosk.saved() == nil, "nothing is written inside the request")
        kiosk.wait(until: 10)
        #expect(try kiosk.saved()?.elements.first { $0.id == "photo" }?.position == Point(x: 1300, y: 500))

        kiosk.wait(until: 10.5)
        try kiosk.request(#"{"op": "set", "stream": "photo.position", "value": {"x": 1200, "y": 500}}"#)
        kiosk.wait(until: 11.99)
        #expect(try kiosk.saved()?.elements.first { $0.id == "photo" }?.position == Point(x: 1300, y: 500), "not before the interval is up")
        kiosk.wait(until: 12)
        #expect(try kiosk.saved()?.elements.first { $0.id == "photo" }?.position == Point(x: 1200, y: 500))
        #expect(kiosk.daemon.keeper?.writes == 2)

        // Nothing changes: nothing is written.
        kiosk.wait(until: 30)
        #expect(kiosk.daemon.keeper?.writes == 2)
    }

    @Test("a start restores what fits the configuration, in order, and names what does not")
    func restoresWhatFits() throws {
        let note = JSONValue.object([("id", "note"), ("center", [100, 100]), ("size", [50, 50]), ("draggable", .object([]))])
        let clash = JSONValue.object([("id", "photo"), ("center", [100, 100]), ("size", [50, 50])])
        let follower = JSONValue.object([("id", "follower"), ("center", [10, 10]), ("size", [5, 5]),
                                         ("attach", .object([("destination", "gone")]))])
        let state = SceneState(elements: [
            .init(id: "card", position: Point(x: 700, y: 300), rotation: 0.5, scale: 2, destination: Point(x: 700, y: 300)),
            .init(id: "gone", position: Point(x: 1, y: 1)),
            .init(id: "photo", added: clash, position: Point(x: 5, y: 5)),
            .init(id: "note", added: note, position: Point(x: 150, y: 160)),
            .init(id: "follower", added: follower, position: Point(x: 10, y: 10)),
        ])
        let kiosk = try Kiosk(directory: try temporaryDirectory(), state: state)
        guard case let .restored(elements, added, notes, _) = kiosk.restoration else { Issue.record("\(String(describing: kiosk.restoration))"); return }
        #expect(elements == 2)
        #expect(added == 1)
        #expect(notes.count == 3, "\(notes)")
        #expect(notes.contains { $0.hasPrefix("'gone' is not in the configuration any more") }, "\(notes)")
        #expect(notes.contains { $0.hasPrefix("'photo', which a client added, is not restored: the configuration now has") }, "\(notes)")
        #expect(notes.contains { $0.hasPrefix("'follower', which a client added, is not restored:") && $0.contains("gone") }, "\(notes)")

        let card = try #require(kiosk.daemon.engine.scene.element("card"))
        #expect(card.position.value == Point(x: 700, y: 300))
        #expect(card.rotation.value == 0.5)
        #expect(card.scale.value == 2)
        #expect(kiosk.daemon.engine.property("card.destination")?.read() == .point(Point(x: 700, y: 300)))
        #expect(kiosk.position("photo") == Point(x: 1400, y: 540), "the configuration's photo, not the clashing one's place")
        #expect(kiosk.position("note") == Point(x: 150, y: 160))
        #expect(kiosk.daemon.engine.scene.elements.map(\.id) == ["card", "photo", "note"])
        // The client's first look is the restored scene, and the note is the client's again.
        #expect(try kiosk.request(#"{"op": "get", "stream": "note.position"}"#)["value"]?["x"]?.number == 150)
        try kiosk.request(#"{"op": "remove_element", "element": "note"}"#)
    }

    @Test("a toss cut short goes on to its destination from where it was, not from the configuration's place")
    func tossCarriesOn() throws {
        let state = SceneState(elements: [.init(id: "card", position: Point(x: 900, y: 700), destination: Point(x: 1500, y: 200))])
        let kiosk = try Kiosk(directory: try temporaryDirectory(), state: state)
        #expect(kiosk.position("card") == Point(x: 900, y: 700))
        var positions: [Point] = []
        for step in 1...240 {
            kiosk.clock.tick(at: 10 + Double(step) / 120)
            positions.append(try #require(kiosk.position("card")))
        }
        let first = try #require(positions.first)
        #expect(first.distance(to: Point(x: 900, y: 700)) < 60, "the first frame starts from the saved place: \(first)")
        #expect(positions.allSatisfy { $0.x >= 899 && $0.y <= 701 }, "never back to the configuration's (500, 540)")
        #expect(try #require(positions.last).distance(to: Point(x: 1500, y: 200)) < 1)
    }

    @Test("a refused file is set aside whole, and the scene is the configuration's")
    func refusedFileSetAside() throws {
        let directory = try temporaryDirectory()
        let bytes = Array(#"{"version":1,"elements":[{"id":"card","added":null,"position":[1e300,0],"rotation":0,"scale":1,"destination":null}]}"#.utf8)
        try Data(bytes).write(to: URL(fileURLWithPath: directory + "/scene.json"))
        let kiosk = try Kiosk(directory: directory)
        guard case let .refused(error, setAside) = kiosk.restoration else { Issue.record("\(String(describing: kiosk.restoration))"); return }
        #expect(setAside == nil)
        #expect(error.refusal?.kind == .outOfRange, "\(error)")
        #expect(error.description.contains("element 0 (\"card\"), key \"position\""), "\(error)")
        #expect(FileManager.default.contents(atPath: directory + "/scene.json.refused") == Data(bytes))
        #expect(!FileManager.default.fileExists(atPath: directory + "/scene.json"))
        #expect(kiosk.position("card") == Point(x: 500, y: 540))
    }

    @Test("a write that fails shows in the health, is tried again after twice the interval, then twice as long each time, and the problem goes when one succeeds")
    func failingWrite() throws {
        let directory = try temporaryDirectory()
        let kiosk = try Kiosk(directory: directory + "/not-yet", interval: 1)
        try kiosk.request(#"{"op": "set", "stream": "photo.position", "value": {"x": 1300, "y": 500}}"#)
        kiosk.wait(until: 10)
        let problem = try #require(kiosk.daemon.health().problems.first { $0.kind == .sceneNotKept })
        #expect(problem.message.contains("No such file or directory"), "\(problem)")
        #expect(kiosk.daemon.keeper?.failedWrites == 1)
        // Nothing changes, yet it is tried again: 2 s later, then 4 s after that.
        kiosk.wait(until: 11.99)
        #expect(kiosk.daemon.keeper?.failedWrites == 1, "not before twice the interval")
        kiosk.wait(until: 12)
        #expect(kiosk.daemon.keeper?.failedWrites == 2)
        // Changes meanwhile do not hurry it.
        try kiosk.request(#"{"op": "set", "stream": "photo.position", "value": {"x": 1250, "y": 500}}"#)
        kiosk.wait(until: 15.99)
        #expect(kiosk.daemon.keeper?.failedWrites == 2, "the second retry waits 4 s")
        kiosk.wait(until: 16)
        #expect(kiosk.daemon.keeper?.failedWrites == 3)
        try FileManager.default.createDirectory(atPath: directory + "/not-yet", withIntermediateDirectories: false)
        kiosk.wait(until: 23.99)
        #expect(kiosk.daemon.keeper?.failedWrites == 3 && kiosk.daemon.keeper?.writes == 0, "the third retry waits 8 s")
        kiosk.wait(until: 24)
        #expect(!kiosk.daemon.health().problems.contains { $0.kind == .sceneNotKept })
        #expect(try kiosk.saved()?.elements.first { $0.id == "photo" }?.position == Point(x: 1250, y: 500))
        let saved = try kiosk.request(#"{"op": "saved_scene"}"#)
        #expect(saved["error"] == .null)
        #expect(saved["writes"]?.integer == 1)
        #expect(saved["failed_writes"]?.integer == 3)
        let metrics = String(decoding: kiosk.daemon.metricsExposition(), as: UTF8.self)
        #expect(metrics.contains("\nmotiond_state_writes_total 1\n"), "\(metrics)")
        #expect(metrics.contains("\nmotiond_state_write_failures_total 3\n"), "\(metrics)")
        // Once one succeeds, the next change waits the interval again.
        try kiosk.request(#"{"op": "set", "stream": "photo.position", "value": {"x": 1200, "y": 500}}"#)
        kiosk.wait(until: 25)
        #expect(try kiosk.saved()?.elements.first { $0.id == "photo" }?.position == Point(x: 1200, y: 500))
    }

    @Test("retries back off up to five minutes, and no further")
    func retriesBackOffToALimit() throws {
        let kiosk = try Kiosk(directory: try temporaryDirectory() + "/never", interval: 0.5)
        try kiosk.request(#"{"op": "set", "stream": "photo.position", "value": {"x": 1300, "y": 500}}"#)
        // Fifteen minutes of a write that cannot succeed: 0.5 s, then 1, 2, … 256, 300, 300.
        kiosk.wait(until: 10 + 15 * 60)
        let failures = try #require(kiosk.daemon.keeper?.failedWrites)
        #expect((10...14).contains(failures), "\(failures) tries in 15 minutes")
        #expect(kiosk.daemon.keeper?.retryDelay == SceneKeeper.longestRetryDelay)
    }

    @Test("a reload carries the scene over; reset_scene starts afresh and is written at once")
    func reloadAndReset() throws {
        let kiosk = try Kiosk(directory: try temporaryDirectory(), interval: 60)
        try kiosk.request(#"{"op": "add_element", "element": {"id": "note", "center": [100, 100], "size": [50, 50]}}"#)
        try kiosk.request(#"{"op": "set", "stream": "photo.position", "value": {"x": 1300, "y": 500}}"#)
        kiosk.wait(until: 10)
        kiosk.daemon.reload(try Configuration.parse(Self.configuration, file: "kiosk.toml"))
        #expect(kiosk.position("photo") == Point(x: 1300, y: 500))
        #expect(kiosk.position("note") == Point(x: 100, y: 100))

        kiosk.wait(until: 11)
        #expect(try kiosk.request(#"{"op": "reset_scene"}"#)["elements"]?.integer == 2)
        #expect(kiosk.position("photo") == Point(x: 1400, y: 540))
        #expect(kiosk.position("note") == nil)
        // Written at once, not 60 s after the last write.
        kiosk.wait(until: 11)
        #expect(try kiosk.saved()?.elements.map(\.id) == ["card", "photo"])
        #expect(try kiosk.saved()?.elements.first { $0.id == "photo" }?.position == Point(x: 1400, y: 540))
    }

    @Test("the last write holds the scene as it is, whatever the interval, and nothing is written after it")
    func finalWrite() throws {
        let kiosk = try Kiosk(directory: try temporaryDirectory(), interval: 60)
        try kiosk.request(#"{"op": "set", "stream": "photo.position", "value": {"x": 1300, "y": 500}}"#)
        kiosk.wait(until: 10)
        try kiosk.request(#"{"op": "set", "stream": "photo.position", "value": {"x": 1100, "y": 400}}"#)
        #expect(kiosk.daemon.keepSceneFinally() == nil)
        #expect(try kiosk.saved()?.elements.first { $0.id == "photo" }?.position == Point(x: 1100, y: 400))
        try kiosk.request(#"{"op": "set", "stream": "photo.position", "value": {"x": 1000, "y": 400}}"#)
        kiosk.wait(until: 200)
        #expect(try kiosk.saved()?.elements.first { $0.id == "photo" }?.position == Point(x: 1100, y: 400))
    }

    @Test("values beyond what a file may hold are kept at the nearest it may; a scene too large for the file is not written")
    func beyondTheFile() throws {
        let directory = try temporaryDirectory()
        let kiosk = try Kiosk(directory: directory, interval: 1)
        // The gestures cannot put an element there, but nothing may write a file the next
        // start would throw away.
        kiosk.daemon.engine.scene.element("photo")?.rotation.value = .infinity
        kiosk.daemon.engine.scene.element("photo")?.position.value = Point(x: 1e9, y: 0)
        let (state, limits) = kiosk.daemon.scene.savedState()
        #expect(state.elements.first { $0.id == "photo" }?.position == Point(x: 11 * 1920, y: 0))
        #expect(state.elements.first { $0.id == "photo" }?.rotation == 0)
        try kiosk.file.replace(with: state, checkedAgainst: limits, over: nil)
        #expect(try kiosk.saved() == state)

        let tooMany = SceneState(elements: (0...SceneState.maximumElements).map { SceneState.Element(id: "e\($0)", position: .zero) })
        #expect { try kiosk.file.replace(with: tooMany, checkedAgainst: limits, over: nil) } throws: { ($0 as? StateFileError)?.cause == .unreadable }
        #expect(try kiosk.saved() == state, "the file is as it was")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["scene.json", "scene.json.lock"], "no temporary file left")
    }
}
