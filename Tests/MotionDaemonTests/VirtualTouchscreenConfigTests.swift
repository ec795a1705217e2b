import MotionCore
import DaemonTestSupport
import Testing
import TouchInput
@testable import MotionConfiguration
@testable import MotionDaemon

/// The configuration of virtual touchscreens, what the input grabs for them, which touches
/// the apps may have, and what motiond does without uinput. The devices themselves are
/// made in the real-kernel lab, where uinput exists.
@Suite("Virtual touchscreens: configuration, claims and failures")
struct VirtualTouchscreenConfigTests {
    /// An eGalax panel as udev names it.
    static let panel = DeviceIdentity(number: 3, node: "/dev/input/event5", path: "pci-0000:00:14.0-usb-0:2:1.0",
                                      name: "eGalax Inc. eGalaxTouch EXC3000", vendor: 0x0eef, product: 0xc000)

    @Test("a [[device]] naming an output makes its virtual touchscreen over the entry's output; a table gives the area and size")
    func settings() throws {
        let implicit = try Configuration.parse("""
            [[device]]
            node = "/dev/input/event5"
            output = [0, 0, 960, 1080]
            virtual_touchscreen = "HDMI-A-1"
            """, file: "x.toml")
        #expect(implicit.virtualTouchscreens == [VirtualTouchscreenSettings(output: "HDMI-A-1", area: Rect(x: 0, y: 0, width: 960, height: 1080))])
        let declared = try Configuration.parse("""
            [[virtual_touchscreen]]
            output = "DP-2"
            area = [960, 0, 960, 1080]
            size_mm = [264, 297]

            [[device]]
            virtual_touchscreen = "DP-2"
            """, file: "x.toml")
        let settings = try #require(declared.virtualTouchscreens.first)
        #expect(declared.virtualTouchscreens.count == 1 && settings.output == "DP-2" && settings.definedAt == "x.toml:2")
        #expect(settings.geometry(on: declared.screen).area == Rect(x: 960, y: 0, width: 960, height: 1080))
        #expect(settings.geometry(on: declared.screen).resolution == (15, 15))
        #expect(try Configuration.parse("", file: "x.toml").virtualTouchscreens.isEmpty, "off unless asked for")
        #expect(implicit.virtualTouchscreens.first?.cancel == .withdraw && settings.cancel == .withdraw, "touches taken away are withdrawn by default")
        let cancelling = try Configuration.parse("[[virtual_touchscreen]]\noutput = \"DP-2\"\ncancel = \"cancel\"\n", file: "x.toml")
        #expect(cancelling.virtualTouchscreens.first?.cancel == .cancel)
        let portrait = try Configuration.parse("[screen]\nwidth = 800\nheight = 1280\n[[virtual_touchscreen]]\noutput = \"DP-2\"\ntransform = \"rotate-90\"\n", file: "x.toml")
        let turned = try #require(portrait.virtualTouchscreens.first)
        #expect(turned.transform == .rotated90 && implicit.virtualTouchscreens.first?.transform == .normal)
        #expect(turned.geometry(on: portrait.screen).maximum == (5119, 3199), "the device's axes are the output's unturned mode's")
    }

    @Test("refused with file, line and reason: a name that is no connector's, one defined twice, two entries giving one output different areas")
    func refusals() {
        func refusal(_ text: String) -> String {
            do { _ = try Configuration.parse(text, file: "x.toml"); return "accepted" } catch { return error.description }
        }
        #expect(refusal("[[device]]\nvirtual_touchscreen = \"HDMI A 1\"\n").contains("x.toml:2"))
        #expect(refusal("[[device]]\nvirtual_touchscreen = \"HDMI A 1\"\n").contains("ASCII letters, digits"))
        #expect(refusal("[[virtual_touchscreen]]\noutput = \"DP-1\"\n[[virtual_touchscreen]]\noutput = \"DP-1\"\n").contains("defined twice"))
        #expect(refusal("[[virtual_touchscreen]]\narea = [0, 0, 10, 10]\n").contains("names its output"))
        #expect(refusal("[[virtual_touchscreen]]\noutput = \"DP-1\"\narea = [0, 0, 5000, 10]\n").contains("reaches past the screen"))
        let tiny = refusal("[[virtual_touchscreen]]\noutput = \"DP-1\"\nsize_mm = [1e-300, 1e-300]\n")
        #expect(tiny.contains("x.toml:3") && tiny.contains("each between 20 and 5000"), "\(tiny)")
        #expect(refusal("[[virtual_touchscreen]]\noutput = \"DP-1\"\nsize_mm = [300, 5001]\n").contains("x.toml:3"))
        let ending = refusal("[[virtual_touchscreen]]\noutput = \"DP-1\"\ncancel = \"lift\"\n")
        #expect(ending.contains("x.toml:3") && ending.contains("cancel is \"withdraw\"") && ending.contains("not \"lift\""), "\(ending)")
        let turn = refusal("[[virtual_touchscreen]]\noutput = \"DP-1\"\ntransform = \"45\"\n")
        #expect(turn.contains("x.toml:3") && turn.contains("transform is the output's") && turn.contains("not \"45\""), "\(turn)")
        let twoAreas = refusal("[[device]]\nnode = \"/dev/input/event1\"\noutput = [0, 0, 10, 10]\nvirtual_touchscreen = \"DP-1\"\n[[device]]\noutput = [10, 0, 10, 10]\nvirtual_touchscreen = \"DP-1\"\n")
        #expect(twoAreas.contains("x.toml:7") && twoAreas.contains("different outputs"), "\(twoAreas)")
    }

    @Test("a panel naming a virtual touchscreen is grabbed only once that device exists; grab = true grabs anyway")
    func grabFollowsTheDevice() throws {
        let configuration = try Configuration.parse("[[device]]\nvirtual_touchscreen = \"HDMI-A-1\"\n", file: "x.toml")
        let match = try #require(configuration.match(Self.panel))
        #expect(!match.use(virtualOutputs: []).grab)
        #expect(!match.use(virtualOutputs: ["DP-1"]).grab)
        #expect(match.use(virtualOutputs: ["HDMI-A-1"]).grab)
        let grabbing = try Configuration.parse("[[device]]\ngrab = true\n", file: "x.toml")
        #expect(try #require(grabbing.match(Self.panel)).use(virtualOutputs: []).grab)
    }

    @Test("claim_touches: on by default, so a touch that begins on an element is not for the apps; the screen's are; a screen gesture's take ends the apps' claim")
    func claims() throws {
        let configuration = try Configuration.parse("""
            [[element]]
            id = "card"
            center = [400, 400]
            size = [200, 200]
            draggable = {}

            [[element]]
            id = "label"
            center = [1400, 400]
            size = [200, 200]
            claim_touches = false
            """, file: "x.toml")
        #expect(configuration.elements.map(\.claimsTouches) == [true, false])
        let engine = configuration.makeEngine(clock: ManualFrameClock())
        func contact(_ id: Int32, _ phase: TouchPhase, _ x: Double, _ y: Double) -> TouchContact {
            TouchContact(slot: Int(id), trackingID: id, phase: phase, deviceX: 0, deviceY: 0, position: Point(x: x, y: y))
        }
        let landed = engine.process(TouchFrame(time: 1, contacts: [contact(1, .began, 400, 400), contact(2, .began, 1400, 400), contact(3, .began, 1000, 900)]))
        #expect(landed.contacts.map(\.forApps) == [false, true, true])
        let lifted = engine.process(TouchFrame(time: 1.1, contacts: [contact(1, .ended, 400, 400), contact(2, .ended, 1400, 400), contact(3, .ended, 1000, 900)]))
        #expect(lifted.contacts.map(\.forApps) == [false, true, true], "a lift is judged by the route it had")
    }

    @Test("without uinput motiond makes no virtual touchscreen, grabs nothing for it, says why in health, and reports still reach the clients")
    func noUinput() throws {
        let configuration = try Configuration.parse("[[device]]\nvirtual_touchscreen = \"HDMI-A-1\"\n[[element]]\nid = \"card\"\ncenter = [400, 400]\nsize = [200, 200]\ndraggable = {}\n", file: "x.toml")
        let daemon = Daemon(configuration: configuration, clock: ManualFrameClock(now: 100), uinputPath: "/nonexistent/uinput", controlPolicy: { _ in true })
        let notes = daemon.configureSinks()
        #expect(notes.count == 1 && notes[0].problem && notes[0].line.contains("/nonexistent/uinput does not exist"), "\(notes)")
        #expect(daemon.virtualOutputs.isEmpty)
        _ = CalibrationProtocolTests.addPanel(to: daemon)
        let report = daemon.health()
        #expect(report.problems == [HealthProblem(.virtualTouchscreenMissing, about: "HDMI-A-1", "no virtual touchscreen for HDMI-A-1, so the apps read its panels raw: /nonexistent/uinput does not exist: load the uinput module (modprobe uinput; /etc/modules-load.d/motiond.conf)")])
        #expect(report.json.encoded.contains(#""virtual_touchscreens":[{"output":"HDMI-A-1","error":"#))
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        daemon.receive(#"{"id":1,"op":"subscribe","streams":["card.position"]}"#, from: session)
        let subscribed = try output.take()
        #expect(subscribed.contains { $0["id"]?.integer == 1 && $0["error"] == nil }, "\(subscribed)")
        daemon.receive(#"{"id":2,"op":"devices"}"#, from: session)
        let listed = try #require(try output.take().first?["result"]?["devices"]?.array?.first)
        #expect(listed["virtual_touchscreen"]?.string == "HDMI-A-1" && listed["grabbed"]?.bool == false, "\(listed)")
        let panel = DeviceIdentity(number: 0, node: "/dev/input/event7", description: DeviceDescription(name: "Panel"))
        daemon.process(TouchFrame(time: 100.1, contacts: [TouchContact(slot: 0, trackingID: 1, phase: .began, deviceX: 0, deviceY: 0, position: Point(x: 400, y: 400))]), from: panel)
        for step in 1...10 {
            daemon.process(TouchFrame(time: 100.1 + Double(step) / 100, contacts: [TouchContact(slot: 0, trackingID: 1, phase: .moved, deviceX: 0, deviceY: 0, position: Point(x: 400 + 10 * Double(step), y: 400))]), from: panel)
        }
        let lines = try output.take()
        #expect(lines.contains { $0["stream"]?.string == "card.position" }, "\(lines)")
    }

    @Test("a /dev/uinput that is not uinput is named as such, and a file that cannot be opened by its errno")
    func notUinput() {
        #expect(throws: VirtualTouchscreenError.notUinput(path: "/dev/null", errno: 25)) {
            _ = try VirtualTouchscreen(output: "X", geometry: VirtualTouchscreenGeometry(area: Rect(x: 0, y: 0, width: 10, height: 10)), uinputPath: "/dev/null")
        }
        #expect(VirtualTouchscreenError.cannotOpen(path: "/dev/uinput", errno: 13).kind == "permission_denied")
        #expect(VirtualTouchscreenError.cannotOpen(path: "/dev/uinput", errno: 13).description.contains("no permission"))
    }
}
