import Foundation
import MotionCore
import DaemonTestSupport
import Testing
import TouchInput
@testable import MotionConfiguration
import MotionWire
@testable import MotionDaemon

/// A reload replaces the scene while fingers may be down. Whatever the reload changes, every
/// gesture a subscriber saw begin later ends: a screen gesture whose pattern the new
/// configuration keeps carries on to its lift, one whose pattern went ends `cancelled`, and a
/// gesture on an element ends `cancelled` (the element is made anew where the configuration
/// puts it). The fingers down at the reload move no element until they lift.
@Suite("Gestures across a reload")
struct ReloadGestureTests {
    /// A draggable card on the left, a photo to pinch on the right; below them, the screen's
    /// empty middle, where the screen-gesture tests press.
    static let elements = """
        [[element]]
        id = "card"
        center = [500, 540]
        size = [600, 600]

        [element.draggable]

        [[element]]
        id = "photo"
        center = [1400, 540]
        size = [600, 600]

        [element.directly_manipulable]
        """

    static let admin = """
        [[screen_gesture]]
        name = "admin"
        gesture = "long_press"
        touches = 2
        duration = 1.0
        """

    static let back = """
        [[screen_gesture]]
        name = "back"
        gesture = "edge_swipe"
        edge = "left"
        """

    /// A 1920 × 1080 screen with `parts` (tables of motiond.toml).
    static func configuration(_ parts: String...) throws -> Configuration {
        try Configuration.parse((["[screen]\nwidth = 1920\nheight = 1080"] + parts).joined(separator: "\n\n"), file: "kiosk.toml")
    }

    /// A daemon on a hand-driven clock and timer, and a client that follows every gesture and
    /// the card's position. Each step returns the lines it made the client hear.
    final class Kiosk {
        let clock = ManualFrameClock(now: 10)
        let scheduler = HandScheduler(now: 10)
        let daemon: Daemon
        private let output = RecordingOutput()
        private let session: ClientSession
        /// Every line the client heard after subscribing, in order.
        private(set) var heard: [JSONInput] = []

        init(_ configuration: Configuration) throws {
            daemon = Daemon(configuration: configuration, clock: clock, idleScheduler: scheduler, controlPolicy: { _ in true })
            session = daemon.connect(output, credentials: nil)
            daemon.receive(#"{"id": 1, "op": "subscribe", "streams": ["screen.gesture", "*.drag", "*.pinch", "card.position"]}"#, from: session)
            let reply = try #require(try output.take().first { $0["id"]?.integer == 1 })
            #expect(reply["ok"]?.bool == true, "\(reply)")
        }

        /// A frame of device 0 at `time`: each contact as (id, phase, x, y).
        @discardableResult
        func frame(_ time: Double, _ contacts: [(Int32, TouchPhase, Double, Double)]) throws -> [JSONInput] {
            try frame(TouchFrame(time: time, contacts: contacts.map { ScreenGestureProtocolTests.contact($0.0, $0.1, $0.2, $0.3) }))
        }

        /// `frame` at its time.
        @discardableResult
        func frame(_ frame: TouchFrame) throws -> [JSONInput] {
            clock.now = frame.time
            daemon.process(frame, from: testPanel)
            return try take()
        }

        /// No frame until `time`: the daemon's timer fires what is due.
        @discardableResult
        func wait(until time: Double) throws -> [JSONInput] {
            clock.now = time
            scheduler.advance(to: time)
            return try take()
        }

        /// The client sends `line` (a request) at `time`.
        @discardableResult
        func request(_ line: String, at time: Double) throws -> [JSONInput] {
            clock.now = time
            scheduler.advance(to: time)
            daemon.receive(Substring(line), from: session)
            return try take()
        }

        /// Reloads `configuration` at `time`.
        @discardableResult
        func reload(_ configuration: Configuration, at time: Double) throws -> [JSONInput] {
            clock.now = time
            scheduler.advance(to: time)
            daemon.reload(configuration)
            return try take()
        }

        private func take() throws -> [JSONInput] {
            let lines = try output.take()
            heard += lines
            return lines
        }

        /// The gestures heard to begin and not heard to end or be cancelled since, as
        /// `stream/name`: none once every finger has lifted.
        var dangling: [String] {
            var open: [String] = []
            for line in heard where line["event"]?.string == "state" {
                let gesture = "\(line["stream"]?.string ?? "")/\(line["name"]?.string ?? "")"
                switch line["state"]?.string {
                case "began": open.append(gesture)
                case "ended", "cancelled": if let index = open.firstIndex(of: gesture) { open.remove(at: index) }
                default: break
                }
            }
            return open
        }
    }

    /// The `state` lines of `stream` (and `name`, for a screen gesture) in `lines`, as their states.
    static func states(_ lines: [JSONInput], _ stream: String, name: String? = nil) -> [String] {
        lines.filter { $0["event"]?.string == "state" && $0["stream"]?.string == stream && (name == nil || $0["name"]?.string == name) }
            .compactMap { $0["state"]?.string }
    }

    /// Whether `lines` hold a value of `stream`.
    static func hasValue(_ lines: [JSONInput], _ stream: String) -> Bool {
        lines.contains { $0["event"]?.string == "value" && $0["stream"]?.string == stream }
    }

    /// Two fingers on the screen's empty middle, held until 'admin' began (at 11).
    static func holdAdmin(_ kiosk: Kiosk) throws {
        try kiosk.frame(10, [(1, .began, 950, 950), (2, .began, 1050, 950)])
        let held = try kiosk.wait(until: 11.05)
        #expect(states(held, "screen.gesture", name: "admin") == ["began"], "\(held)")
    }

    @Test("the same file reloaded: 'admin' held carries on and ends at the lift; the card's drag ends cancelled, and the rest of its touch moves nothing")
    func sameFile() throws {
        let configuration = try Self.configuration(Self.elements, Self.admin, Self.back)
        let kiosk = try Kiosk(configuration)
        // Two fingers on the card: it drags (20 px, within the long press's slop) and they are 'admin' too.
        try kiosk.frame(10, [(1, .began, 400, 500), (2, .began, 600, 500)])
        let dragging = try kiosk.frame(10.1, [(1, .moved, 420, 500), (2, .moved, 620, 500)])
        #expect(Self.states(dragging, "card.drag") == ["began"], "\(dragging)")
        #expect(Self.states(try kiosk.wait(until: 11.05), "screen.gesture", name: "admin") == ["began"])

        let reloaded = try kiosk.reload(configuration, at: 11.1)
        #expect(Self.states(reloaded, "card.drag") == ["cancelled"], "\(reloaded)")
        #expect(reloaded.first { $0["stream"]?.string == "card.drag" }?["t"]?.number == 11.1)
        #expect(Self.states(reloaded, "screen.gesture").isEmpty, "admin carries on: \(reloaded)")

        let moved = try kiosk.frame(11.2, [(1, .moved, 480, 500), (2, .moved, 680, 500)])
        #expect(!Self.hasValue(moved, "card.position") && Self.states(moved, "card.drag").isEmpty, "\(moved)")
        let lifted = try kiosk.frame(11.5, [(1, .ended, 480, 500), (2, .ended, 680, 500)])
        #expect(Self.states(lifted, "screen.gesture", name: "admin") == ["ended"], "\(lifted)")
        #expect(lifted.first { $0["name"]?.string == "admin" }?["touches"]?.integer == 2)
        #expect(!Self.hasValue(lifted, "card.position") && Self.states(lifted, "card.drag").isEmpty, "\(lifted)")
        #expect(kiosk.dangling.isEmpty, "\(kiosk.dangling)")
    }

    @Test("a reload that removes every screen gesture: 'admin' held ends cancelled at the reload, and nothing more at the lift")
    func patternRemoved() throws {
        let kiosk = try Kiosk(try Self.configuration(Self.elements, Self.admin, Self.back))
        try Self.holdAdmin(kiosk)
        let reloaded = try kiosk.reload(try Self.configuration(Self.elements), at: 11.1)
        #expect(Self.states(reloaded, "screen.gesture", name: "admin") == ["cancelled"], "\(reloaded)")
        #expect(reloaded.first { $0["name"]?.string == "admin" }?["t"]?.number == 11.1)
        let lifted = try kiosk.frame(11.5, [(1, .ended, 950, 950), (2, .ended, 1050, 950)])
        #expect(Self.states(lifted, "screen.gesture").isEmpty, "\(lifted)")
        #expect(kiosk.dangling.isEmpty, "\(kiosk.dangling)")
    }

    @Test("a reload that renames 'admin' to 'menu': 'admin' ends cancelled; 'menu' does not begin on the fingers already down")
    func patternRenamed() throws {
        let kiosk = try Kiosk(try Self.configuration(Self.elements, Self.admin, Self.back))
        try Self.holdAdmin(kiosk)
        let menu = Self.admin.replacingOccurrences(of: "\"admin\"", with: "\"menu\"")
        let reloaded = try kiosk.reload(try Self.configuration(Self.elements, menu, Self.back), at: 11.1)
        #expect(Self.states(reloaded, "screen.gesture") == ["cancelled"] && reloaded.contains { $0["name"]?.string == "admin" }, "\(reloaded)")
        let later = try kiosk.wait(until: 13)
        let lifted = try kiosk.frame(13.1, [(1, .ended, 950, 950), (2, .ended, 1050, 950)])
        #expect(Self.states(later + lifted, "screen.gesture").isEmpty, "\(later + lifted)")
        #expect(kiosk.dangling.isEmpty, "\(kiosk.dangling)")
    }

    @Test("a reload that changes [gestures]: a long press held carries on to its lift; one not yet begun carries on under the new duration")
    func gesturesChanged() throws {
        let hold = "[[screen_gesture]]\nname = \"hold\"\ngesture = \"long_press\""
        let slow = try Self.configuration("[gestures]\nlong_press_duration = 1.0\ndrag_slop_px = 16", Self.elements, hold)
        let quick = try Self.configuration("[gestures]\nlong_press_duration = 0.4\ndrag_slop_px = 40", Self.elements, hold)
        let kiosk = try Kiosk(slow)
        try kiosk.frame(10, [(1, .began, 1000, 950)])
        #expect(Self.states(try kiosk.wait(until: 11.05), "screen.gesture", name: "hold") == ["began"])
        #expect(Self.states(try kiosk.reload(quick, at: 11.1), "screen.gesture").isEmpty)
        #expect(Self.states(try kiosk.frame(11.5, [(1, .ended, 1000, 950)]), "screen.gesture", name: "hold") == ["ended"])

        // Pressed under 0.4 s, reloaded to 1 s before its time: it begins at 1 s.
        try kiosk.frame(12, [(2, .began, 1000, 950)])
        #expect(Self.states(try kiosk.reload(slow, at: 12.2), "screen.gesture").isEmpty)
        #expect(Self.states(try kiosk.wait(until: 12.6), "screen.gesture").isEmpty, "the old duration no longer counts")
        let began = try kiosk.wait(until: 13.05).filter { $0["stream"]?.string == "screen.gesture" }
        #expect(began.map { $0["state"]?.string } == ["began"] && began.first?["t"]?.number == 13, "\(began)")
        #expect(Self.states(try kiosk.frame(13.2, [(2, .ended, 1000, 950)]), "screen.gesture", name: "hold") == ["ended"])
        #expect(kiosk.dangling.isEmpty, "\(kiosk.dangling)")
    }

    @Test("a reload that shortens stuck_after: 'admin' held carries on, and ends cancelled when the contact filters then cancel its fingers as stuck")
    func filtersChanged() throws {
        let device = { (stuck: Int) in "[[device]]\nname = \"*\"\nstuck_after = \(stuck)" }
        let before = try Self.configuration(device(30), Self.elements, Self.admin)
        let after = try Self.configuration(device(2), Self.elements, Self.admin)
        // The panel's slots and contact filters, as the input thread keeps them across the reload.
        var panel = TouchFrameAssembler(description: Self.panel, filters: try #require(before.devices.first).filters)
        let kiosk = try Kiosk(before)
        let landed = Self.land(on: &panel, at: 10, [(1, 950, 950), (2, 1050, 950)])
        try kiosk.frame(try #require(landed))
        #expect(Self.states(try kiosk.wait(until: 11.05), "screen.gesture", name: "admin") == ["began"])

        panel.configure(mapping: panel.mapper.mapping, filters: try #require(after.devices.first).filters)
        #expect(Self.states(try kiosk.reload(after, at: 11.1), "screen.gesture").isEmpty)
        let expired = panel.expire(at: 12)
        let stuck = try #require(expired, "held still since 10, stuck after 2 s")
        let cancelled = try kiosk.frame(stuck)
        #expect(Self.states(cancelled, "screen.gesture", name: "admin") == ["cancelled"], "\(cancelled)")
        #expect(cancelled.first { $0["name"]?.string == "admin" }?["t"]?.number == 12)
        #expect(kiosk.dangling.isEmpty, "\(kiosk.dangling)")
    }

    @Test("set card.enabled false during its drag: subscribers hear the drag cancelled, and the rest of the touch moves nothing")
    func disabledDuringDrag() throws {
        let kiosk = try Kiosk(try Self.configuration(Self.elements, Self.admin))
        try kiosk.frame(10, [(1, .began, 500, 540)])
        let moving = try kiosk.frame(10.1, [(1, .moved, 560, 540)])
        #expect(Self.states(moving, "card.drag") == ["began"] && Self.hasValue(moving, "card.position"), "\(moving)")

        let disabled = try kiosk.request(#"{"id": 2, "op": "set", "stream": "card.enabled", "value": false}"#, at: 10.15)
        #expect(disabled.contains { $0["id"]?.integer == 2 && $0["ok"]?.bool == true }, "\(disabled)")
        #expect(Self.states(disabled, "card.drag") == ["cancelled"], "\(disabled)")

        var rest: [JSONInput] = []
        rest += try kiosk.frame(10.2, [(1, .moved, 700, 540)])
        rest += try kiosk.frame(10.3, [(1, .ended, 700, 540)])
        #expect(!Self.hasValue(rest, "card.position") && Self.states(rest, "card.drag").isEmpty, "\(rest)")
        #expect(kiosk.dangling.isEmpty, "\(kiosk.dangling)")
    }

    /// A panel whose units are the screen's pixels.
    static let panelX = AxisInfo(minimum: 0, maximum: 1919), panelY = AxisInfo(minimum: 0, maximum: 1079)

    /// A panel whose units are the screen's pixels, with ten slots.
    static let panel: DeviceDescription = {
        var device = DeviceDescription(name: "reload panel")
        device.properties = [InputProperty.direct]
        device.codes[EventType.synchronization] = [SynchronizationCode.report]
        device.codes[EventType.absolute] = [AbsoluteAxis.slot, AbsoluteAxis.trackingID, AbsoluteAxis.positionX, AbsoluteAxis.positionY]
        device.axes[AbsoluteAxis.slot] = AxisInfo(minimum: 0, maximum: 9)
        device.axes[AbsoluteAxis.trackingID] = AxisInfo(minimum: 0, maximum: 65535)
        device.axes[AbsoluteAxis.positionX] = panelX
        device.axes[AbsoluteAxis.positionY] = panelY
        return device
    }()

    /// The frame of contacts landing on `panel` at `time`, each in the slot of its id.
    static func land(on panel: inout TouchFrameAssembler, at time: Double, _ contacts: [(id: Int32, x: Int32, y: Int32)]) -> TouchFrame? {
        for contact in contacts {
            for (code, value) in [(AbsoluteAxis.slot, contact.id), (AbsoluteAxis.trackingID, contact.id), (AbsoluteAxis.positionX, contact.x), (AbsoluteAxis.positionY, contact.y)] {
                _ = panel.consume(InputEvent(time: time, type: EventType.absolute, code: code, value: value))
            }
        }
        return panel.consume(InputEvent(time: time, type: EventType.synchronization, code: SynchronizationCode.report, value: 0))
    }

    @Test("a drag on the card and a pinch on the photo across a reload that keeps the card and removes the photo: both end cancelled; the rest of the touches moves nothing, and the next touch drags the new card")
    func elementGestures() throws {
        let kiosk = try Kiosk(try Self.configuration(Self.elements, Self.admin))
        try kiosk.frame(10, [(1, .began, 500, 540), (3, .began, 1300, 540), (4, .began, 1500, 540)])
        let moving = try kiosk.frame(10.1, [(1, .moved, 540, 540), (3, .moved, 1250, 540), (4, .moved, 1550, 540)])
        #expect(Self.states(moving, "card.drag") == ["began"] && Self.states(moving, "photo.pinch") == ["began"], "\(moving)")

        let withoutPhoto = Self.elements.components(separatedBy: "[[element]]\nid = \"photo\"")[0]
        let reloaded = try kiosk.reload(try Self.configuration(withoutPhoto, Self.admin), at: 10.2)
        #expect(Self.states(reloaded, "card.drag") == ["cancelled"] && Self.states(reloaded, "photo.pinch") == ["cancelled"], "\(reloaded)")

        var rest: [JSONInput] = []
        rest += try kiosk.frame(10.3, [(1, .moved, 600, 540), (3, .moved, 1200, 540), (4, .moved, 1600, 540)])
        rest += try kiosk.frame(10.4, [(1, .ended, 600, 540), (3, .ended, 1200, 540), (4, .ended, 1600, 540)])
        #expect(!Self.hasValue(rest, "card.position") && rest.allSatisfy { $0["event"]?.string != "state" }, "\(rest)")
        #expect(kiosk.dangling.isEmpty, "\(kiosk.dangling)")

        var next: [JSONInput] = []
        next += try kiosk.frame(11, [(5, .began, 500, 540)])
        next += try kiosk.frame(11.1, [(5, .moved, 560, 540)])
        next += try kiosk.frame(11.2, [(5, .ended, 560, 540)])
        #expect(Self.states(next, "card.drag") == ["began", "ended"] && Self.hasValue(next, "card.position"), "\(next)")
    }
}
