import Glibc
import MotionCore
import DaemonTestSupport
import Testing
import TouchInput
import VirtualTouchscreenTestSupport
@testable import MotionConfiguration
import MotionWire
@testable import MotionDaemon

/// What the apps see on a virtual touchscreen, through the daemon as it runs (frames, the
/// engine's timer, requests, a reload, a panel's events and its unplug), each device a
/// recording read as libinput reads a touchscreen (``LibinputModel``): the sink's routing,
/// claims and cancels in milliseconds. What needs the kernel and libinput themselves (the
/// device uinput makes, udev's tags, the grab, timing) is the kernel lab's.
@Suite("Virtual touchscreens: what the apps see")
struct VirtualTouchscreenSinkTests {
    /// The card claims its touches (the default), the label does not; two fingers held still
    /// for a second anywhere are `admin`, which takes them.
    static let configuration = """
        [screen]
        width = 1920
        height = 1080

        [[device]]
        virtual_touchscreen = "HDMI-A-1"

        [[element]]
        id = "card"
        center = [300, 300]
        size = [200, 200]
        draggable = {}

        [[element]]
        id = "label"
        center = [1600, 300]
        size = [200, 200]
        claim_touches = false

        [[screen_gesture]]
        name = "admin"
        gesture = "long_press"
        touches = 2
        duration = 1.0
        exclusive = true
        """

    static func contact(_ id: Int32, _ phase: TouchPhase, _ x: Double, _ y: Double) -> TouchContact {
        ScreenGestureProtocolTests.contact(id, phase, x, y)
    }

    /// What libinput saw, as `down 0`, `motion 0`, `up 0`, `cancel 0` (the slot), in order.
    static func kinds(_ seen: [LibinputModel.Seen]) -> [String] {
        seen.map { seen in
            switch seen {
            case .down(let slot, _, _): "down \(slot)"
            case .motion(let slot, _, _): "motion \(slot)"
            case .up(let slot): "up \(slot)"
            case .cancel(let slot): "cancel \(slot)"
            }
        }
    }

    /// A daemon whose virtual touchscreens are recordings, with a client to make requests.
    final class Bench {
        let clock = ManualFrameClock(now: 10)
        let scheduler = HandScheduler(now: 10)
        let daemon: Daemon
        let panel = DeviceIdentity(number: 0, node: "/dev/input/event7", name: "Panel")
        /// Every device the daemon made, in order, with its output.
        private(set) var made: [(output: String, device: RecordingVirtualDevice)] = []
        private let client = RecordingOutput()
        private var session: ClientSession?

        init(_ text: String = VirtualTouchscreenSinkTests.configuration) throws {
            daemon = Daemon(configuration: try Configuration.parse(text, file: "v.toml"), clock: clock, idleScheduler: scheduler, controlPolicy: { _ in true })
            daemon.virtualTouchscreens.makeDevice = { [unowned self] output, geometry in
                let device = RecordingVirtualDevice(node: "/dev/input/event\(90 + made.count)")
                device.clock = { [scheduler] in scheduler.now }
                made.append((output, device))
                return VirtualTouchscreen(output: output, geometry: geometry, writer: device)
            }
            _ = daemon.configureSinks()
            session = daemon.connect(client, credentials: nil)
        }

        /// The device made last for `output`.
        func device(_ output: String = "HDMI-A-1", sourceLocation: SourceLocation = #_sourceLocation) throws -> RecordingVirtualDevice {
            try #require(made.last { $0.output == output }?.device, "no virtual touchscreen made for \(output)", sourceLocation: sourceLocation)
        }

        /// One frame of the panel at `time`, the engine's timer run up to it first.
        func frame(_ time: Double, _ contacts: TouchContact...) { frame(time, contacts) }

        func frame(_ time: Double, _ contacts: [TouchContact]) {
            clock.now = time
            scheduler.advance(to: time)
            daemon.process(TouchFrame(time: time, contacts: contacts), from: panel)
        }

        /// Reloads `text` as SIGHUP does: the scene, and with it the sinks (the virtual
        /// touchscreens among them); what they said for the log.
        func reload(_ text: String) throws -> [String] {
            daemon.reload(try Configuration.parse(text, file: "v.toml")).map(\.line)
        }

        /// The result of one request, as a client reads it.
        func request(_ line: String) throws -> JSONInput {
            _ = try client.take()
            daemon.receive(Substring(line), from: try #require(session))
            return try #require(try client.take().first { $0["id"] != nil }?["result"], "no result for \(line)")
        }
    }

    @Test("a touch that begins on an element claiming its touches is never written, wherever it goes; claim_touches = false lets one through; a plain touch is down, moves and lifts")
    func claims() throws {
        let bench = try Bench()
        let device = try bench.device()
        bench.frame(10, Self.contact(1, .began, 300, 300))
        bench.frame(10.05, Self.contact(1, .moved, 900, 700))
        bench.frame(10.1, Self.contact(1, .ended, 900, 700))
        #expect(device.frames.isEmpty, "the claimed touch was written: \(device.frames)")

        bench.frame(10.2, Self.contact(2, .began, 1600, 300))
        bench.frame(10.25, Self.contact(2, .moved, 1610, 300))
        bench.frame(10.3, Self.contact(2, .ended, 1610, 300))
        #expect(device.takeSeen() == [.down(slot: 0, x: 6400, y: 1200), .motion(slot: 0, x: 6440, y: 1200), .up(slot: 0)])

        bench.frame(10.4, Self.contact(3, .began, 1000, 900))
        bench.frame(10.45, Self.contact(3, .moved, 1000, 910.5))
        bench.frame(10.5, Self.contact(3, .ended, 1000, 910.5))
        #expect(device.takeSeen() == [.down(slot: 0, x: 4000, y: 3600), .motion(slot: 0, x: 4000, y: 3642), .up(slot: 0)])
        #expect(device.libinput.problems.isEmpty, "\(device.libinput.problems)")
    }

    @Test("with cancel = \"cancel\", a finger the panel turns MT_TOOL_PALM mid-touch ends in a cancel, never a lift; a palm from its landing is never written; a panel unplugged with a finger down cancels it")
    func palmAndUnplug() throws {
        let bench = try Bench(Self.configuration(cancel: .cancel))
        let device = try bench.device()
        var panel = try RawPanel(bench)
        panel.send([(AbsoluteAxis.slot, 0), (AbsoluteAxis.trackingID, 31), (AbsoluteAxis.positionX, 500), (AbsoluteAxis.positionY, 500)])
        panel.send([(AbsoluteAxis.positionX, 510)])
        panel.send([(AbsoluteAxis.toolType, ToolType.palm), (AbsoluteAxis.positionX, 520)])
        panel.send([(AbsoluteAxis.positionX, 530)])
        panel.send([(AbsoluteAxis.trackingID, -1)])
        #expect(Self.kinds(device.takeSeen()) == ["down 0", "motion 0", "cancel 0"])

        let written = device.frames.count
        panel.send([(AbsoluteAxis.slot, 1), (AbsoluteAxis.toolType, ToolType.palm), (AbsoluteAxis.trackingID, 33), (AbsoluteAxis.positionX, 700), (AbsoluteAxis.positionY, 300)])
        panel.send([(AbsoluteAxis.positionX, 720)])
        panel.send([(AbsoluteAxis.trackingID, -1)])
        #expect(device.frames.count == written, "a palm from its landing was written")

        panel.send([(AbsoluteAxis.slot, 0), (AbsoluteAxis.toolType, ToolType.finger), (AbsoluteAxis.trackingID, 32), (AbsoluteAxis.positionX, 200), (AbsoluteAxis.positionY, 300)])
        panel.send([(AbsoluteAxis.positionY, 320)])
        panel.unplug()
        #expect(Self.kinds(device.takeSeen()) == ["down 0", "motion 0", "cancel 0"])
        #expect(!device.libinput.button && device.libinput.problems.isEmpty, "\(device.libinput.problems)")
    }

    @Test("with cancel = \"cancel\", a screen gesture that takes the fingers after they began cancels them at once, on the engine's timer; nothing of them is written after, their lift included")
    func takenFingers() throws {
        let bench = try Bench(Self.configuration(cancel: .cancel))
        let device = try bench.device()
        bench.frame(10, Self.contact(1, .began, 1000, 800), Self.contact(2, .began, 1600, 300))
        #expect(device.takeSeen().count == 2, "both shown: the empty screen's and the label's")
        bench.clock.now = 11.05
        bench.scheduler.advance(to: 11.05)
        #expect(Self.kinds(device.takeSeen()).sorted() == ["cancel 0", "cancel 1"], "admin took them")
        let written = device.frames.count
        bench.frame(11.2, Self.contact(1, .moved, 1010, 800), Self.contact(2, .moved, 1610, 300))
        bench.frame(11.3, Self.contact(1, .ended, 1010, 800), Self.contact(2, .ended, 1610, 300))
        #expect(device.frames.count == written, "written after the take: \(device.frames.suffix(from: written))")
        #expect(!device.libinput.button && device.libinput.problems.isEmpty, "\(device.libinput.problems)")
    }

    @Test("with cancel = \"cancel\", `lock` cancels every finger down on the virtual touchscreen; those fingers, and those landing during the lock, stay out until they lift, even once it ended")
    func lock() throws {
        let bench = try Bench(Self.configuration(cancel: .cancel))
        let device = try bench.device()
        bench.frame(10, Self.contact(1, .began, 1000, 800))
        bench.frame(10.05, Self.contact(1, .moved, 1000, 810), Self.contact(2, .began, 1200, 800))
        _ = device.takeSeen()
        bench.clock.now = 10.1
        let locked = try bench.request(#"{"id": 1, "op": "lock", "for": 1}"#)
        #expect(locked["locked"]?.bool == true)
        #expect(Self.kinds(device.takeSeen()).sorted() == ["cancel 0", "cancel 1"])
        bench.frame(10.5, Self.contact(1, .moved, 1000, 820), Self.contact(2, .moved, 1200, 820), Self.contact(3, .began, 1400, 800))
        bench.frame(11.5, Self.contact(1, .moved, 1000, 830), Self.contact(2, .ended, 1200, 820), Self.contact(3, .moved, 1400, 830))
        #expect(!bench.daemon.engine.isLocked)
        bench.frame(11.6, Self.contact(1, .ended, 1000, 830), Self.contact(3, .moved, 1400, 840))
        #expect(device.takeSeen().isEmpty, "a finger of the lock shown")
        bench.frame(11.7, Self.contact(3, .ended, 1400, 840), Self.contact(4, .began, 500, 900))
        #expect(device.takeSeen() == [.down(slot: 0, x: 2000, y: 3600)], "a finger landing after the lock")
        #expect(device.libinput.problems.isEmpty, "\(device.libinput.problems)")
    }

    /// The configuration with the virtual touchscreen ending cancelled touches as `cancel` says.
    static func configuration(cancel: CancelledTouchEnding) -> String {
        configuration(virtual: "[[virtual_touchscreen]]\noutput = \"HDMI-A-1\"\ncancel = \"\(cancel.rawValue)\"\n\n[[device]]\nvirtual_touchscreen = \"HDMI-A-1\"\n")
    }

    /// The configuration with the virtual touchscreen `table` (none when empty).
    static func configuration(virtual table: String) -> String {
        configuration.replacingOccurrences(of: "[[device]]\nvirtual_touchscreen = \"HDMI-A-1\"\n", with: table)
    }

    @Test("a reload that removes the virtual touchscreen with a finger down cancels the finger and closes the device; one keeping it changes nothing shown")
    func reloadRemovesOrKeeps() throws {
        let bench = try Bench()
        let device = try bench.device()
        bench.frame(10, Self.contact(1, .began, 1000, 800))
        _ = device.takeSeen()
        #expect(try bench.reload(Self.configuration) == [], "the same configuration keeps the device")
        bench.frame(10.1, Self.contact(1, .moved, 1000, 810))
        bench.frame(10.2, Self.contact(1, .ended, 1000, 810))
        #expect(device.takeSeen() == [.motion(slot: 0, x: 4000, y: 3240), .up(slot: 0)])

        bench.frame(10.3, Self.contact(2, .began, 1000, 800))
        _ = device.takeSeen()
        let notes = try bench.reload(Self.configuration(virtual: ""))
        #expect(notes == ["virtual touchscreen HDMI-A-1 removed"])
        #expect(Self.kinds(device.takeSeen()) == ["cancel 0"])
        #expect(device.isClosed)
        bench.frame(10.4, Self.contact(2, .ended, 1000, 800))
        #expect(device.writesAfterClose == 0 && bench.daemon.virtualOutputs.isEmpty)
        #expect(!device.libinput.button && device.libinput.problems.isEmpty, "\(device.libinput.problems)")
    }

    @Test("a reload that changes the virtual touchscreen's area cancels the finger on the old device; the new one shows only fingers landing after; one added shows only those too")
    func reloadChangesOrAdds() throws {
        let bench = try Bench(Self.configuration(virtual: ""))
        #expect(bench.made.isEmpty)
        bench.frame(10, Self.contact(1, .began, 1000, 800))
        _ = try bench.reload(Self.configuration)
        let added = try bench.device()
        bench.frame(10.1, Self.contact(1, .moved, 1000, 810), Self.contact(2, .began, 1200, 800))
        #expect(added.takeSeen() == [.down(slot: 0, x: 4800, y: 3200)], "only the finger landing after the reload")

        let halfScreen = "[[virtual_touchscreen]]\noutput = \"HDMI-A-1\"\narea = [960, 0, 960, 1080]\n\n[[device]]\nvirtual_touchscreen = \"HDMI-A-1\"\n"
        let notes = try bench.reload(Self.configuration(virtual: halfScreen))
        #expect(notes.first == "virtual touchscreen HDMI-A-1 removed" && notes.count == 2, "\(notes)")
        let changed = try bench.device()
        #expect(Self.kinds(added.takeSeen()) == ["cancel 0"])
        #expect(added.isClosed && changed !== added)
        bench.frame(10.2, Self.contact(1, .ended, 1000, 810), Self.contact(2, .moved, 1210, 800), Self.contact(3, .began, 1500, 100))
        #expect(changed.takeSeen() == [.down(slot: 0, x: 2160, y: 400)], "the area's corner is the device's 0, 0")
        #expect(added.writesAfterClose == 0 && changed.libinput.problems.isEmpty && added.libinput.problems.isEmpty)
    }

    @Test("stats and health count what the recording shows: frames written, fingers cancelled and dropped, writes refused (a problem until one goes through), across a reload that makes the device anew")
    func counters() throws {
        let bench = try Bench(Self.configuration(cancel: .cancel))
        let device = try bench.device()
        bench.frame(10, Self.contact(1, .began, 1000, 800))
        bench.clock.now = 10.1
        _ = try bench.request(#"{"id": 1, "op": "lock", "for": 1}"#)
        bench.frame(11.5, Self.contact(1, .ended, 1000, 800))
        bench.frame(11.6, (2...22).map { Self.contact(Int32($0), .began, 40 * Double($0), 900) })
        func entry() throws -> JSONInput {
            try #require(try bench.request(#"{"id": 2, "op": "stats"}"#)["virtual_touchscreens"]?.array?.first)
        }
        var counted = try entry()
        #expect(counted["output"]?.string == "HDMI-A-1" && counted["node"]?.string == device.node)
        #expect(counted["frames_written"]?.integer == device.frames.count && device.frames.count == 4, "\(counted)")
        #expect(counted["fingers_cancelled"]?.integer == 1 && counted["fingers_dropped"]?.integer == 1, "\(counted)")

        device.refusing = ENODEV
        bench.frame(11.7, (2...22).map { Self.contact(Int32($0), .moved, 40 * Double($0), 910) })
        // Health's other problem here: no panel is plugged in.
        let failing = bench.daemon.health().problems
        #expect(failing.contains { $0.kind == .virtualTouchscreenFailing && $0.about == "HDMI-A-1" && $0.message.contains("refused 1 frames") }, "\(failing)")
        device.refusing = nil
        bench.frame(11.8, (2...22).map { Self.contact(Int32($0), .moved, 40 * Double($0), 920) })
        let recovered = bench.daemon.health().problems
        #expect(!recovered.contains { $0.kind == .virtualTouchscreenFailing }, "\(recovered)")
        counted = try entry()
        #expect(counted["write_failures"]?.integer == 1 && counted["last_write_error"]?.string == String(cString: strerror(ENODEV)), "\(counted)")

        let written = device.frames.count
        _ = try bench.reload(Self.configuration(virtual: "[[virtual_touchscreen]]\noutput = \"HDMI-A-1\"\narea = [0, 0, 960, 1080]\n\n[[device]]\nvirtual_touchscreen = \"HDMI-A-1\"\n"))
        counted = try entry()
        #expect(counted["frames_written"]?.integer == device.frames.count && device.frames.count > written, "the cancel of the reload counts, and the old device's frames stay: \(counted)")
        #expect(counted["fingers_cancelled"]?.integer == 21 && counted["write_failures"]?.integer == 1, "\(counted)")
    }
}

/// A panel as the input reads it: its events through the frame assembler and the contact
/// filters its `[[device]]` entry sets, each frame to the daemon, and its unplug as
/// ``TouchDevice`` hands it on: the fingers down cancelled in a last frame, then removed.
struct RawPanel {
    let bench: VirtualTouchscreenSinkTests.Bench
    let identity: DeviceIdentity
    var assembler: TouchFrameAssembler
    var time = 20.0

    /// 0…999 × 0…599 units, ten slots, the tool type: as many a panel is.
    init(_ bench: VirtualTouchscreenSinkTests.Bench) throws {
        var description = DeviceDescription(name: "Raw panel")
        description.properties = [InputProperty.direct]
        description.codes[EventType.key] = [KeyCode.touch]
        description.axes = [
            AbsoluteAxis.slot: AxisInfo(minimum: 0, maximum: 9), AbsoluteAxis.trackingID: AxisInfo(minimum: 0, maximum: 65535),
            AbsoluteAxis.positionX: AxisInfo(minimum: 0, maximum: 999, resolution: 4), AbsoluteAxis.positionY: AxisInfo(minimum: 0, maximum: 599, resolution: 4),
            AbsoluteAxis.toolType: AxisInfo(minimum: 0, maximum: 2),
        ]
        description.codes[EventType.absolute] = Set(description.axes.keys)
        identity = DeviceIdentity(number: 1, node: "/dev/input/event8", description: description)
        let match = try #require(bench.daemon.configuration.match(identity))
        assembler = TouchFrameAssembler(description: description, mapping: match.mapping, filters: match.filters)
        self.bench = bench
    }

    /// One report of `axes` (code, value), 10 ms after the last.
    mutating func send(_ axes: [(UInt16, Int32)]) {
        time += 0.01
        for (code, value) in axes { hand(assembler.consume(InputEvent(time: time, type: EventType.absolute, code: code, value: value))) }
        hand(assembler.consume(InputEvent(time: time, type: EventType.synchronization, code: SynchronizationCode.report, value: 0)))
    }

    mutating func unplug() {
        time += 0.01
        hand(assembler.cancelAll(at: time))
        bench.daemon.input(.removed(identity))
    }

    private func hand(_ frame: TouchFrame?) {
        guard let frame else { return }
        bench.clock.now = frame.time
        bench.scheduler.advance(to: frame.time)
        bench.daemon.input(.frame(frame, from: identity))
    }
}
