import Foundation
import MotionCore
import DaemonTestSupport
import Testing
import TouchInput
@testable import MotionConfiguration
import MotionWire
@testable import MotionDaemon

/// A reload while motiond keeps its scene makes anew only what the new configuration changes:
/// the elements it changes, drops or adds, the added ones whose id it takes, and those
/// following one of them. Every other element stays as it is (the same objects, where it is,
/// moving as it moves), and so do its streams, which subscribers are not sent again. Every
/// gesture in progress ends `cancelled`, as at any reload. A reload that changes the screen,
/// `[gestures]`, prediction or the screen gestures makes the whole scene anew.
@Suite("A reload that keeps the scene")
struct SceneReloadTests {
    static let card = """
        [[element]]
        id = "card"
        center = [500, 540]
        size = [400, 400]

        [element.tossable]
        destination = [500, 540]
        """

    static let photo = """
        [[element]]
        id = "photo"
        center = [1400, 540]
        size = [400, 400]

        [element.directly_manipulable]
        """

    /// A 1920 × 1080 screen with `parts` (tables of motiond.toml).
    static func configuration(_ parts: String...) throws -> Configuration {
        try Configuration.parse((["[screen]\nwidth = 1920\nheight = 1080"] + parts).joined(separator: "\n\n"), file: "kiosk.toml")
    }

    /// A daemon keeping its scene in a temporary file, on hand-driven clocks, with a client
    /// that has control and follows every stream.
    final class Kiosk {
        let clock = ManualFrameClock(now: 10)
        let scheduler = HandScheduler(now: 10)
        let daemon: Daemon
        private let output = RecordingOutput()
        private let session: ClientSession
        private var nextID = 1
        /// What the daemon's log was told.
        private(set) var warnings: [String] = []

        init(_ configuration: Configuration) throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("motiond-reload-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
            daemon = Daemon(configuration: configuration, clock: clock, idleScheduler: scheduler, controlPolicy: { _ in true })
            _ = try daemon.keepScene(in: StateFile(path: directory.path + "/scene.json"), interval: 2, scheduler: scheduler,
                                     writer: ImmediateStateWriter())
            session = daemon.connect(output, credentials: nil)
            daemon.onEvent = { [unowned self] in
                if case .sceneNote(let note) = $0 { warnings.append(note) } else { warnings.append("\($0)") }
            }
            try request(#""op": "subscribe", "streams": ["*"]"#)
        }

        /// The reply's result to a request (its members after the id), which must succeed.
        @discardableResult
        func request(_ members: String) throws -> JSONInput {
            let id = nextID
            nextID += 1
            daemon.receive(Substring("{\"id\": \(id), \(members)}"), from: session)
            let reply = try #require(try output.take().first { $0["id"]?.integer == id })
            #expect(reply["ok"]?.bool == true, "\(members): \(reply)")
            return reply["result"] ?? .null
        }

        /// Reloads `configuration`; the lines the client heard.
        func reload(_ configuration: Configuration) throws -> [JSONInput] {
            daemon.reload(configuration)
            return try output.take()
        }

        /// A frame of the panel at `time`: each contact as (id, phase, x, y); the lines heard.
        @discardableResult
        func frame(_ time: Double, _ contacts: [(Int32, TouchPhase, Double, Double)]) throws -> [JSONInput] {
            clock.now = time
            daemon.process(TouchFrame(time: time, contacts: contacts.map { ScreenGestureProtocolTests.contact($0.0, $0.1, $0.2, $0.3) }),
                           from: testPanel)
            return try output.take()
        }

        /// Clock frames up to `time`, 120 a second; the lines heard.
        func tick(until time: Double) throws -> [JSONInput] {
            while clock.now < time { clock.tick(at: clock.now + 1.0 / 120) }
            return try output.take()
        }

        func element(_ id: String) -> Element? { daemon.engine.scene.element(id) }

        var order: [String] { daemon.engine.scene.elements.map(\.id) }
    }

    /// The streams of the `value` lines in `lines`.
    static func values(_ lines: [JSONInput]) -> [String] {
        lines.filter { $0["event"]?.string == "value" }.compactMap { $0["stream"]?.string }
    }

    /// A tossable added by a client at (`x`, 300); with `following`, an attach to that element instead.
    static func added(_ id: String, x: Double, following: String? = nil) -> String {
        let interaction = following.map { #""attach": {"destination": "\#($0)"}"# } ?? #""tossable": {"destination": [\#(x), 300]}"#
        return #""op": "add_element", "element": {"id": "\#(id)", "center": [\#(x), 300], "size": [80, 80], \#(interaction)}"#
    }

    @Test("the same file reloaded keeps every element as it is: the same objects, where they are, a toss in flight going on, and no value sent again")
    func sameFile() throws {
        let kiosk = try Kiosk(try Self.configuration(Self.card, Self.photo))
        try kiosk.request(Self.added("note", x: 200))
        // The card tossed toward the right, a few frames in flight.
        try kiosk.request(#""op": "set", "stream": "card.destination", "value": {"x": 900, "y": 540}"#)
        _ = try kiosk.tick(until: 10.05)
        let before = ["card", "photo", "note"].map { kiosk.element($0) }
        let cardBefore = try #require(kiosk.element("card")).position.value
        #expect(cardBefore != Point(x: 500, y: 540) && cardBefore != Point(x: 900, y: 540))

        let heard = try kiosk.reload(try Self.configuration(Self.card, Self.photo))
        #expect(zip(before, ["card", "photo", "note"].map { kiosk.element($0) }).allSatisfy { $0 === $1 }, "an element was made anew")
        #expect(heard.isEmpty, "\(heard)")
        #expect(kiosk.element("card")?.position.value == cardBefore)
        #expect(kiosk.order == ["card", "photo", "note"])
        #expect(kiosk.warnings.isEmpty, "\(kiosk.warnings)")

        // The toss goes on from where it was.
        let after = try kiosk.tick(until: 12)
        #expect(Self.values(after).contains("card.position"))
        #expect(kiosk.element("card")?.position.value == Point(x: 900, y: 540))
    }

    @Test("a drag in progress ends cancelled at a reload that keeps its element, and the fingers down move nothing until they lift")
    func dragCancelled() throws {
        let kiosk = try Kiosk(try Self.configuration(Self.card, Self.photo))
        try kiosk.frame(10, [(1, .began, 500, 540)])
        let dragging = try kiosk.frame(10.1, [(1, .moved, 560, 540)])
        #expect(dragging.contains { $0["stream"]?.string == "card.drag" && $0["state"]?.string == "began" }, "\(dragging)")
        let heard = try kiosk.reload(try Self.configuration(Self.card, Self.photo))
        #expect(heard.filter { $0["event"]?.string == "state" }.map { "\($0["stream"]?.string ?? "") \($0["state"]?.string ?? "")" }
                == ["card.drag cancelled"], "\(heard)")
        let rest = try kiosk.frame(10.2, [(1, .moved, 700, 540)]) + kiosk.frame(10.3, [(1, .ended, 700, 540)])
        #expect(!Self.values(rest).contains("card.position") && rest.allSatisfy { $0["event"]?.string != "state" }, "\(rest)")
    }

    @Test("an element the reload changes is made anew with its new settings, where it was, in the configuration's order; the others stay as they are")
    func changedElement() throws {
        let kiosk = try Kiosk(try Self.configuration(Self.card, Self.photo))
        try kiosk.request(Self.added("note", x: 200))
        try kiosk.request(#""op": "set", "stream": "photo.position", "value": {"x": 1300, "y": 500}"#)
        let card = kiosk.element("card"), note = kiosk.element("note"), photo = kiosk.element("photo")

        // The photo larger, and listed first.
        let larger = Self.photo.replacingOccurrences(of: "size = [400, 400]", with: "size = [600, 500]")
        let heard = try kiosk.reload(try Self.configuration(larger, Self.card))
        #expect(kiosk.element("card") === card && kiosk.element("note") === note)
        let remade = try #require(kiosk.element("photo"))
        #expect(remade !== photo)
        #expect(remade.size.value == Size(width: 600, height: 500))
        #expect(remade.position.value == Point(x: 1300, y: 500))
        #expect(kiosk.order == ["photo", "card", "note"])
        #expect(Set(Self.values(heard)).isSuperset(of: ["photo.position", "photo.size"]), "\(heard)")
        #expect(!Self.values(heard).contains { $0.hasPrefix("card.") || $0.hasPrefix("note.") }, "\(heard)")
        // What putting the photo back changed is published with the next frame.
        kiosk.daemon.publishPending()
        _ = try kiosk.tick(until: kiosk.clock.now)

        // A frame's values come in the new order: the photo's before the card's, the card's
        // before the note's, as `list` names the streams.
        for id in ["note", "card", "photo"] { kiosk.element(id)?.rotation.value = 0.5 }
        kiosk.daemon.publishPending()
        let frameLines = try kiosk.tick(until: kiosk.clock.now)
        #expect(Self.values(frameLines) == ["photo.rotation", "card.rotation", "note.rotation"], "\(frameLines)")
        let rotations = try kiosk.request(#""op": "list", "streams": ["*.rotation"]"#)
        #expect(rotations["streams"]?.array?.compactMap { $0["stream"]?.string } == ["screen.rotation", "photo.rotation", "card.rotation", "note.rotation"])
    }

    @Test("an element following one the reload makes anew is made anew too, and follows the new one; one following an element the reload drops is dropped, and the log says why")
    func followers() throws {
        let kiosk = try Kiosk(try Self.configuration(Self.card, Self.photo))
        try kiosk.request(Self.added("tag", x: 300, following: "card"))
        try kiosk.request(Self.added("note", x: 200))
        let tag = kiosk.element("tag"), note = kiosk.element("note")

        let larger = Self.card.replacingOccurrences(of: "size = [400, 400]", with: "size = [500, 500]")
        _ = try kiosk.reload(try Self.configuration(larger, Self.photo))
        let remade = try #require(kiosk.element("tag"))
        #expect(remade !== tag && kiosk.element("note") === note)
        #expect(kiosk.order == ["card", "photo", "tag", "note"])
        // The new tag follows the new card.
        try kiosk.request(#""op": "set", "stream": "card.position", "value": {"x": 700, "y": 700}"#)
        _ = try kiosk.tick(until: 14)
        #expect(remade.position.value == Point(x: 700, y: 700))

        _ = try kiosk.reload(try Self.configuration(Self.photo))
        #expect(kiosk.element("tag") == nil && kiosk.element("card") == nil && kiosk.element("note") === note)
        #expect(kiosk.order == ["photo", "note"])
        #expect(kiosk.warnings.contains { $0.hasPrefix("'tag', which a client added, is not restored: no element is called 'card'") }, "\(kiosk.warnings)")
        #expect(kiosk.warnings.contains("'card' is not in the configuration any more: its saved place is dropped"), "\(kiosk.warnings)")
    }

    @Test("a configured element taking the id of one a client added replaces it, and the log says so")
    func takenID() throws {
        let kiosk = try Kiosk(try Self.configuration(Self.card))
        try kiosk.request(Self.added("photo", x: 200))
        try kiosk.request(Self.added("note", x: 300))
        let note = kiosk.element("note")
        _ = try kiosk.reload(try Self.configuration(Self.card, Self.photo))
        #expect(kiosk.element("photo")?.size.value == Size(width: 400, height: 400))
        #expect(kiosk.element("note") === note)
        #expect(kiosk.order == ["card", "photo", "note"])
        #expect(kiosk.warnings == ["'photo', which a client added, is not restored: the configuration now has an element of that name"])
        let elements = try kiosk.request(#""op": "elements""#)
        #expect(elements["elements"]?.array?.first { $0["id"]?.string == "photo" }?["interactions"]?.array?.compactMap(\.string) == ["directly_manipulable"])
    }

    @Test("a reload that changes [gestures] makes every element anew, where it was")
    func gesturesChanged() throws {
        let kiosk = try Kiosk(try Self.configuration(Self.card, Self.photo))
        try kiosk.request(Self.added("note", x: 200))
        try kiosk.request(#""op": "set", "stream": "note.position", "value": {"x": 250, "y": 350}"#)
        let before = ["card", "photo", "note"].map { kiosk.element($0) }
        _ = try kiosk.reload(try Self.configuration("[gestures]\ntap_slop_px = 12", Self.card, Self.photo))
        #expect(zip(before, ["card", "photo", "note"].map { kiosk.element($0) }).allSatisfy { $0 !== $1 })
        #expect(kiosk.element("note")?.position.value == Point(x: 250, y: 350))
        #expect(kiosk.order == ["card", "photo", "note"])
    }
}

