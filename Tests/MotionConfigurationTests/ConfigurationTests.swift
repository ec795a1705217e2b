import Foundation
import MotionCore
import Testing
import TouchInput
@testable import MotionConfiguration

/// Parses `text` as the configuration file `file`, expecting an error there on `line` whose
/// message contains `message`; records what came instead.
func expectRefused(_ text: String, line: Int, _ message: String, file: String = "kiosk.toml", sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(sourceLocation: sourceLocation) {
        _ = try Configuration.parse(text, file: file)
    } throws: { error in
        guard let error = error as? ConfigurationError else { return false }
        let matches = error.file == file && error.line == line && error.message.contains(message)
        if !matches { Issue.record("got \(error)", sourceLocation: sourceLocation) }
        return matches
    }
}

@Suite("Configuration")
struct ConfigurationTests {
    static let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("config/motiond.toml").path

    @Test("the example configuration loads, with what it says")
    func example() throws {
        let configuration = try Configuration.load(file: Self.example)
        #expect(configuration.daemon.socket == "/run/motiond/motiond.sock")
        #expect(configuration.daemon.frameRate == 120)
        #expect(configuration.screen == Size(width: 1920, height: 1080))
        #expect(configuration.devices.count == 2)
        #expect(configuration.devices[0].selection == DeviceSelection([.name("*maXTouch*")]))
        #expect(configuration.elements.map(\.id) == ["card", "photo", "drawer", "marker"])
        #expect(configuration.tuio.map(\.target) == [ListenAddress(host: "127.0.0.1", port: 3333)])
        #expect(configuration.tuio.first?.elements == .matching(["card", "photo"]) && configuration.tuio.first?.version == .v1_1)
        let card = configuration.elements[0]
        #expect(card.center == Point(x: 866, y: 830) && card.z == 1)
        guard case let .tossable(nil, snaps, spring) = card.interactions.first else {
            Issue.record("the card is tossable to snap points")
            return
        }
        #expect(snaps["right"] == Point(x: 1620, y: 830) && spring == .standard)
        let marker = configuration.elements[3]
        #expect(marker.interactions.contains(.setPositionOnTap(target: .attach)))
        // And the engine it describes has those elements.
        let engine = configuration.makeEngine(clock: ManualFrameClock())
        #expect(engine.scene.elements.map(\.id) == ["card", "photo", "drawer", "marker"])
        #expect(engine.streams.map(\.stream).contains("card.snap"))
        #expect(engine.streams.map(\.stream).contains("drawer.direction"))
        // Attract mode: the screen's idle stream, and the photo goes home after 90 s.
        #expect(configuration.idleAfter == 60 && engine.idleAfter == 60)
        #expect(engine.lastValue("screen.idle") == .bool(false))
        #expect(configuration.elements.map(\.resetAfter) == [nil, 90, nil, nil])
        #expect(engine.nextIdleDeadline == 60, "screen.idle at 60 s comes before the photo's 90")
    }

    @Test("attract mode: idle_after and reset_after are read, and checked like every number")
    func attractMode() throws {
        let configuration = try Configuration.parse("[screen]\nidle_after = 0.5\n\n" + Self.element + "\nreset_after = 2.5\n", file: "kiosk.toml")
        #expect(configuration.idleAfter == 0.5 && configuration.elements.first?.resetAfter == 2.5)
        let engine = configuration.makeEngine(clock: ManualFrameClock(now: 0))
        #expect(engine.idleAfter == 0.5 && engine.nextIdleDeadline == 0.5)
        engine.advanceIdle(to: 0.5)
        #expect(engine.nextIdleDeadline == 2.5, "then the card's reset")
        refused("[screen]\nidle_after = 0\n", line: 2, "idle_after must be between 0.1 and 86400, not 0")
        refused("[screen]\nidle_after = \"soon\"\n", line: 2, "idle_after must be a number")
        refused(Self.element + "\nreset_after = -1\n", line: 5, "reset_after must be between 0.1 and 86400, not -1")
        refused(Self.element + "\nreset_after = 1e9\n", line: 5, "reset_after must be between 0.1 and 86400")
    }

    func refused(_ text: String, line: Int, _ message: String, sourceLocation: SourceLocation = #_sourceLocation) {
        expectRefused(text, line: line, message, sourceLocation: sourceLocation)
    }

    static let element = """
        [[element]]
        id = "card"
        center = [100, 100]
        size = [50, 50]
        """

    @Test("a syntax error gives the line TOML's parser found it on")
    func syntax() {
        refused("[daemon]\nsocket = \"/run/x\"\nframe_rate = \n", line: 3, "not valid TOML")
        refused("[daemon\n", line: 1, "not valid TOML")
    }

    @Test("unknown keys are errors, at every level, with their line")
    func unknownKeys() {
        refused("[daemon]\nsocket = \"/x\"\nframerate = 60\n", line: 3, "unknown key 'framerate' in [daemon]")
        refused("colour = \"red\"\n", line: 1, "unknown key 'colour' in the top level")
        refused(Self.element + "\n[element.tossable]\ndestination = [1, 2]\nspeed = 3\n", line: 7, "unknown key 'speed' in [element[0].tossable]")
        refused(Self.element + "\n[element.tossable]\ndestination = [1, 2]\nspring = { tension = 300, fricton = 20 }\n", line: 7, "unknown key 'fricton'")
        refused(Self.element + "\nwobble = true\n", line: 5, "unknown key 'wobble' in [element[0]]")
        refused(Self.element + "\n[element.spinnable]\n", line: 5, "unknown key 'spinnable' in [element[0]]")
    }

    @Test("values of the wrong type or out of range say what was expected")
    func values() {
        refused("[daemon]\nframe_rate = \"fast\"\n", line: 2, "frame_rate must be a number, not the string \"fast\"")
        refused("[daemon]\nframe_rate = 0\n", line: 2, "frame_rate must be between 1 and 1000, not 0")
        refused("[[device]]\nrotation = 45\n", line: 2, "rotation is 0, 90, 180 or 270")
        refused("[[device]]\nname = \"x\"\n\n[[device]]\ncalibration = [1, 0, 0, 1, 0]\n", line: 5, "six numbers")
        refused("[[device]]\nids = \"elan\"\n", line: 2, "VENDOR:PRODUCT")
        refused("[screen]\nwidth = -5\n", line: 2, "width must be between")
        refused("[[element]]\nid = \"a\"\ncenter = [1, 2, 3]\nsize = [1, 1]\n", line: 3, "center must be a point")
        refused("[[element]]\nid = \"a\"\ncenter = [1, 2]\nsize = [0, 10]\n", line: 4, "size must be positive")
        refused(Self.element + "\n[element.tossable]\ndestination = [1, 2]\nspring = { tension = 342, friction = 0 }\n", line: 7, "never comes to rest")
        refused(Self.element + "\n[element.scalable]\nminimum = 3\nmaximum = 2\n", line: 7, "maximum (2) is below minimum (3)")
        refused("[daemon]\nstate = \"scene.json\"\n", line: 2, "state must be an absolute path, not \"scene.json\"")
        refused("[daemon]\nstate = \"/var/lib/motiond/\"\n", line: 2, "state must name a file")
        refused("[daemon]\nstate_interval = 0.01\n", line: 2, "state_interval must be between 0.1 and 3600, not 0.01")
    }

    @Test("[daemon] state and state_interval are read; without them nothing is kept")
    func state() throws {
        let kept = try Configuration.parse("[daemon]\nstate = \"/var/lib/motiond/scene.json\"\nstate_interval = 2.5\n", file: "kiosk.toml")
        #expect(kept.daemon.state == "/var/lib/motiond/scene.json")
        #expect(kept.daemon.stateInterval == 2.5)
        let plain = try Configuration.parse("[daemon]\nframe_rate = 60\n", file: "kiosk.toml")
        #expect(plain.daemon.state == nil)
        #expect(plain.daemon.stateInterval == 5)
    }

    @Test("what an element needs, and what it cannot combine, is checked")
    func elements() {
        refused("[[element]]\ncenter = [1, 2]\nsize = [1, 1]\n", line: 1, "an element needs an id")
        refused("[[element]]\nid = \"a\"\nsize = [1, 1]\n", line: 1, "needs a center")
        refused("[[element]]\nid = \"a b\"\ncenter = [1, 2]\nsize = [1, 1]\n", line: 2, "an element id is letters")
        refused("[[element]]\nid = \"\(String(repeating: "a", count: 257))\"\ncenter = [1, 2]\nsize = [1, 1]\n", line: 2, "an element id is at most 256 bytes, not 257")
        refused(Self.element + "\n" + Self.element + "\n", line: 6, "element 'card' is defined twice: first at kiosk.toml:2, again here")
        refused(Self.element + "\n[element.tossable]\n", line: 5, "a tossable needs a destination")
        refused(Self.element + "\n[element.attach]\ndestination = \"nowhere\"\n", line: 6, "no element is called 'nowhere'")
        refused(Self.element + "\n[element.directly_manipulable]\n[element.draggable]\n", line: 5, "cannot be combined with draggable")
        refused(Self.element + "\n[element.set_position_on_tap]\ntarget = \"attach\"\n", line: 6, "needs the element to have attach too")
    }

    @Test("an element id is NFC and has no invisible characters: one name, one byte form, and no id that looks like another")
    func elementIDForms() throws {
        func element(_ id: String) -> String { "[[element]]\nid = \"\(id)\"\ncenter = [1, 2]\nsize = [1, 1]\n" }
        // Decomposed (e and a combining accent) is canonically equivalent to café: refused, saying how to send it.
        refused(element("cafe\u{301}"), line: 2, "is not: it holds a character in decomposed form")
        refused(element("cafe\u{301}"), line: 2, "send it precomposed")
        refused(element("\u{212B}ngstr\u{F6}m"), line: 2, "Normalization Form C")  // the ångström sign, whose NFC is Å
        // Invisible: each would make an id that prints like another.
        for (id, code) in [("card\u{200D}", "U+200D"), ("ca\u{200B}rd", "U+200B"), ("card\u{200E}", "U+200E"), ("card\u{2060}", "U+2060"),
                           ("\u{FEFF}card", "U+FEFF"), ("ca\u{AD}rd", "U+00AD"), ("card\u{FE0F}", "U+FE0F"), ("\u{3164}card", "U+3164")] {
            refused(element(id), line: 2, "an element id cannot contain \(code)")
        }
        refused(element("card\u{E000}"), line: 2, "cannot contain U+E000, a private-use character")
        refused(element("card\\u0007"), line: 2, "cannot contain U+0007, a control character")
        refused(element("card\u{1F3FB}"), line: 2, "an element id is letters")  // an emoji modifier, one character with the d
        // What stays accepted: precomposed letters, marks with no precomposed form, scripts whose marks are letters' parts.
        for id in ["caf\u{E9}", "x\u{301}", "\u{939}\u{93F}\u{928}\u{94D}\u{926}\u{940}", "\u{D55C}\u{AE00}", "photo_2-b"] {
            let configuration = try Configuration.parse(element(id), file: "kiosk.toml")
            #expect(configuration.elements.map { Array($0.id.utf8) } == [Array(id.utf8)], "\(id)")
        }
    }

    @Test("a text read before is reused only when the same bytes come again, not a canonically equivalent text")
    func parsedTextsCompareBytes() throws {
        func element(_ id: String) -> String { "[[element]]\nid = \"\(id)\"\ncenter = [7, 11]\nsize = [13, 17]\n" }
        let precomposed = try Configuration.parse(element("na\u{EF}ve"), file: "kiosk.toml")
        #expect(precomposed.elements.map { Array($0.id.utf8) } == [Array("na\u{EF}ve".utf8)])
        // Equal to the text above under ==, but not the same bytes: read, and refused.
        refused(element("nai\u{308}ve"), line: 2, "Normalization Form C")
    }

    @Test("a file that cannot be read says so, with its name")
    func unreadable() {
        #expect {
            _ = try Configuration.load(file: "/nonexistent/motiond.toml")
        } throws: { error in
            (error as? ConfigurationError)?.description.hasPrefix("/nonexistent/motiond.toml: cannot read the file") == true
        }
    }

    @Test("the built-in default is one full-screen element that the fingers manipulate")
    func builtInDefault() {
        let configuration = Configuration.builtInDefault
        #expect(configuration.elements.count == 1)
        #expect(configuration.elements[0].size == configuration.screen)
        #expect(configuration.elements[0].interactions == [.directlyManipulable])
    }

    @Test("device entries choose devices and their mapping; with none, every device covers the screen")
    func devices() throws {
        var atmel = DeviceDescription(name: "Atmel maXTouch Touchscreen")
        atmel.vendor = 0x03eb
        let configuration = try Configuration.parse("""
            [screen]
            width = 1000
            height = 500
            [[device]]
            name = "ELAN*"
            [[device]]
            ids = "03eb:0000"
            rotation = 180
            output = [500, 250]
            """, file: "x.toml")
        let match = try #require(configuration.match(DeviceIdentity(number: 0, node: "/dev/input/event1", description: atmel), udevCalibration: [0.5, 0, 0, 0, 0.5, 0]))
        #expect(match.settings.rotation == .upsideDown)
        let mapping = match.mapping
        #expect(mapping.outputSize == Size(width: 500, height: 250) && mapping.calibration == [0.5, 0, 0, 0, 0.5, 0])
        var other = atmel
        other.vendor = 1
        #expect(configuration.match(DeviceIdentity(number: 0, node: "/dev/input/event1", description: other)) == nil, "not selected: not used")
        let open = Configuration()
        #expect(try #require(open.match(DeviceIdentity(number: 0, node: "n", description: atmel))).mapping.outputSize == open.screen)
    }

    @Test("output is a rectangle of the screen: [x, y, width, height], an inline table, or [width, height] at the top-left; never past the screen")
    func outputRectangles() throws {
        let atmel = DeviceDescription(name: "Atmel maXTouch Touchscreen")
        let screen = "[screen]\nwidth = 3840\nheight = 1080\n[[device]]\n"
        for (output, expected) in [
            ("[1920, 0, 1920, 1080]", Rect(x: 1920, y: 0, width: 1920, height: 1080)),
            ("{ x = 1920, y = 0, width = 1920, height = 1080 }", Rect(x: 1920, y: 0, width: 1920, height: 1080)),
            ("[1920, 1080]", Rect(x: 0, y: 0, width: 1920, height: 1080)),
            ("{ width = 3840, height = 1080 }", Rect(x: 0, y: 0, width: 3840, height: 1080)),
        ] {
            let configuration = try Configuration.parse(screen + "output = \(output)\n", file: "x.toml")
            let match = try #require(configuration.match(DeviceIdentity(number: 0, node: "n", description: atmel)))
            #expect(match.settings.output == expected, "\(output)")
            let mapping = match.mapping
            #expect(mapping.outputOrigin == expected.origin && mapping.outputSize == expected.size)
        }
        refused(screen + "output = [1921, 0, 1920, 1080]\n", line: 5, "output [1921, 0, 1920, 1080] reaches past the screen (3840 × 1080 in [screen])")
        refused(screen + "output = [-1, 0, 100, 100]\n", line: 5, "reaches past the screen")
        refused(screen + "output = [0, 0, 0, 1080]\n", line: 5, "output needs a width and height of at least 1 pixel, not [0, 0, 0, 1080]")
        refused(screen + "output = [4000, 1080]\n", line: 5, "reaches past the screen")
        refused(screen + "output = [1, 2, 3]\n", line: 5, "output")
    }

    @Test("[[calibration]] replaces the calibration of whichever [[device]] entry maps the device it names; the last one wins")
    func calibrationTables() throws {
        var atmel = DeviceDescription(name: "Atmel maXTouch Touchscreen")
        atmel.vendor = 0x03eb
        atmel.product = 0x8a1c
        let configuration = try Configuration.parse("""
            [[device]]
            name = "*"
            rotation = 90
            calibration = [1, 0, 0, 0, 1, 0]
            [[calibration]]
            ids = "03eb:8a1c"
            matrix = [0.5, 0, 0, 0, 0.5, 0]
            [[calibration]]
            ids = "03eb:8a1c"
            matrix = [1.02, 0.03, -0.015, -0.02, 0.98, 0.025]
            [[calibration]]
            name = "ELAN*"
            matrix = [2, 0, 0, 0, 2, 0]
            """, file: "x.toml")
        let settings = try #require(configuration.match(DeviceIdentity(number: 0, node: "n", description: atmel))?.settings)
        #expect(settings.calibration == [1.02, 0.03, -0.015, -0.02, 0.98, 0.025] && settings.rotation == .clockwise90)
        var other = atmel
        other.vendor = 1
        #expect(try #require(configuration.match(DeviceIdentity(number: 0, node: "n", description: other))?.settings).calibration == [1, 0, 0, 0, 1, 0])
        refused("[[calibration]]\nmatrix = [1, 0, 0, 0, 1, 0]\n", line: 2, "a [[calibration]] names its device by path, node, ids or name")
        refused("[[calibration]]\nids = \"03eb:8a1c\"\n", line: 1, "a [[calibration]] needs matrix = [a, b, c, d, e, f]")
        refused("[[calibration]]\nids = \"03eb:8a1c\"\nmatrix = [1, 0, 0]\n", line: 3, "six numbers")
        refused("[[calibration]]\nids = \"03eb:8a1c\"\nmatrix = [1e9, 0, 0, 0, 1, 0]\n", line: 3, "within -100…100")
        refused("[[calibration]]\nids = \"03eb:8a1c\"\nmatrix = [1, 0, 0, 0, 1, 0]\nrotation = 90\n", line: 4, "rotation")
    }

    @Test("two panels of one model: each [[calibration]] by path (udev's ID_PATH) applies to its own panel, and a path wins over ids in any order")
    func calibrationByPath() throws {
        var panel = DeviceDescription(name: "eGalax Inc. eGalaxTouch EXC3000")
        (panel.vendor, panel.product) = (0x0eef, 0xc000)
        let left = "pci-0000:00:14.0-usb-0:1:1.0", right = "pci-0000:00:14.0-usb-0:2:1.0"
        let configuration = try Configuration.parse("""
            [[device]]
            path = "\(left)"
            output = [0, 0, 1920, 1080]
            [[device]]
            ids = "0eef:c000"
            output = [1920, 0, 1920, 1080]
            [[calibration]]
            path = "\(right)"
            matrix = [1.02, 0.03, -0.015, -0.02, 0.98, 0.025]
            [[calibration]]
            path = "\(left)"
            matrix = [0.98, 0, 0.01, 0, 1.01, -0.02]
            [[calibration]]
            ids = "0eef:c000"
            matrix = [2, 0, 0, 0, 2, 0]
            [screen]
            width = 3840
            height = 1080
            """, file: "x.toml")
        let leftSettings = try #require(configuration.match(DeviceIdentity(number: 0, node: "/dev/input/event5", path: left, description: panel))?.settings)
        let rightSettings = try #require(configuration.match(DeviceIdentity(number: 0, node: "/dev/input/event6", path: right, description: panel))?.settings)
        #expect(leftSettings.output?.origin.x == 0 && rightSettings.output?.origin.x == 1920, "[[device]] path picks the left panel, ids the other")
        #expect(leftSettings.calibration == [0.98, 0, 0.01, 0, 1.01, -0.02])
        #expect(rightSettings.calibration == [1.02, 0.03, -0.015, -0.02, 0.98, 0.025], "the later ids table does not override a path")
        // A third panel of the model, plugged in elsewhere, gets the model's calibration.
        #expect(try #require(configuration.match(DeviceIdentity(number: 0, node: "/dev/input/event7", path: "pci-0000:00:14.0-usb-0:3:1.0", description: panel))?.settings).calibration == [2, 0, 0, 0, 2, 0])
        // A replay has no path: never selected by one.
        #expect(try #require(configuration.match(DeviceIdentity(number: 0, node: "replay:x", path: nil, description: panel))?.settings).calibration == [2, 0, 0, 0, 2, 0])
        let selectors = try #require(configuration.match(DeviceIdentity(number: 1, node: "/dev/input/event6", path: right, description: panel)))
        #expect(selectors.entryRule == .ids(vendor: 0x0eef, product: 0xc000) && selectors.calibrationRule == .path(right))
        #expect(configuration.match(DeviceIdentity(number: 0, node: "/dev/input/event5", path: left, description: panel))?.entryRule == .path(left))
        refused("[[device]]\npath = \"\"\n", line: 2, "path is udev's ID_PATH of the device")
    }

    @Test("a matrix that collapses the panel, an output under a pixel and numbers that are not finite are refused with what is wrong")
    func degenerateValues() {
        let device = "[[calibration]]\nids = \"03eb:8a1c\"\n"
        refused(device + "matrix = [0, 0, 0, 0, 0, 0]\n", line: 3, "this calibration matrix maps the whole panel onto a point or a line (a·e − b·d = 0, at least 0.01 in size)")
        refused(device + "matrix = [1, 1, 0, 1, 1, 0]\n", line: 3, "onto a point or a line")
        refused(device + "matrix = [0.05, 0, 0, 0, 0.05, 0]\n", line: 3, "less than a hundredth of its output (a·e − b·d = 0.0025")
        refused("[[device]]\ncalibration = [0, 1, 0, 0, 0, 0]\n", line: 2, "onto a point or a line")
        refused(device + "matrix = [nan, 0, 0, 0, 1, 0]\n", line: 3, "matrix must be an array of numbers, and only finite ones: nan is not a number motiond can use")
        refused(device + "matrix = [1, 0, 0, 0, 1, -inf]\n", line: 3, "-inf is not a number motiond can use")
        refused("[screen]\nidle_after = inf\n", line: 2, "idle_after must be a number, and only finite ones: inf is not")
        refused("[[device]]\noutput = [0, 0, 1e-300, 1e-300]\n", line: 2, "output needs a width and height of at least 1 pixel")
        refused("[[device]]\noutput = [0.5, 1080]\n", line: 2, "output needs a width and height of at least 1 pixel")
        // Flipped and rotated matrices have a negative determinant and are fine.
        #expect((try? Configuration.parse(device + "matrix = [-1, 0, 1, 0, 1, 0]\n", file: "x.toml")) != nil)
        #expect((try? Configuration.parse(device + "matrix = [0, 1, 0, 1, 0, 0]\n", file: "x.toml")) != nil)
    }

    @Test("[[screen_gesture]]: named patterns read with their fingers, duration, edge and direction; mistakes refused at their line")
    func screenGestures() throws {
        let configuration = try Configuration.parse("""
            [[screen_gesture]]
            name = "admin"
            gesture = "long_press"
            touches = 3
            duration = 2.0
            exclusive = true

            [[screen_gesture]]
            name = "back"
            gesture = "edge_swipe"
            edge = "left"

            [[screen_gesture]]
            name = "next"
            gesture = "swipe"
            direction = "left"
            """, file: "x.toml")
        #expect(configuration.screenGestures == [
            ScreenGesturePattern(name: "admin", gesture: .longPress, touches: 3, duration: 2.0, exclusive: true),
            ScreenGesturePattern(name: "back", gesture: .edgeSwipe, edge: .left),
            ScreenGesturePattern(name: "next", gesture: .swipe, direction: .left),
        ])
        let head = "[[screen_gesture]]\nname = \"a\"\n"
        refused("[[screen_gesture]]\ngesture = \"swipe\"\n", line: 1, "needs name")
        refused(head + "gesture = \"pinch\"\n", line: 3, "not \"pinch\"")
        refused(head + "gesture = \"edge_swipe\"\ntouches = 2\n", line: 4, "one finger")
        refused(head + "gesture = \"swipe\"\ntouches = 6\n", line: 4, "touches")
        refused(head + "gesture = \"swipe\"\nduration = 1\n", line: 4, "duration applies to a long_press")
        refused(head + "gesture = \"edge_swipe\"\nedge = \"middle\"\n", line: 4, "not \"middle\"")
        refused(head + "gesture = \"swipe\"\n" + head + "gesture = \"swipe\"\n", line: 5, "defined twice")
        refused("[[screen_gesture]]\nname = \"a b\"\ngesture = \"swipe\"\n", line: 2, "name")
    }

    @Test("the long press, swipe and edge swipe keys are read in their units, and refused out of range")
    func newGestureKeys() throws {
        let configuration = try Configuration.parse("""
            [gestures]
            long_press_duration = 1.5
            long_press_slop_mm = 8
            swipe_distance_px = 150
            swipe_angle_degrees = 20
            edge_band_mm = 7
            edge_swipe_distance_mm = 30
            """, file: "x.toml")
        let t = configuration.gestures
        #expect(t.longPressDuration == 1.5 && t.longPressSlop.millimetres == 8 && t.swipeDistance.pixels == 150 && t.edgeBand.millimetres == 7 && t.edgeSwipeDistance.millimetres == 30)
        #expect(abs(t.swipeAngle - 20 * Double.pi / 180) < 1e-12)
        #expect(t.longPressSlop.pixels == GestureThresholds().longPressSlop.pixels, "unset keys keep their defaults")
        refused("[gestures]\nlong_press_duration = 0\n", line: 2, "long_press_duration")
        refused("[gestures]\nswipe_angle_degrees = 60\n", line: 2, "swipe_angle_degrees")
        refused("[gestures]\nedge_band_mm = -1\n", line: 2, "edge_band_mm")
        refused("[gestures]\nlong_press_time = 1\n", line: 2, "long_press_time")
    }

    @Test("the contact filters' keys: defaults, each turned off, ranges and the palm size in one unit only")
    func filterKeys() throws {
        let atmel = DeviceDescription(name: "Atmel maXTouch Touchscreen")
        let defaults = try #require(try Configuration.parse("[[device]]\n", file: "x.toml").match(DeviceIdentity(number: 0, node: "n", description: atmel))?.settings)
        #expect(defaults.filters == ContactFilterSettings())
        let configuration = try Configuration.parse("""
            [gestures]
            tap_slop_mm = 4
            [[device]]
            stuck_after = 0
            palm_size = 120
            jump_mm = 0
            hysteresis = false
            """, file: "x.toml")
        let filters = try #require(configuration.match(DeviceIdentity(number: 0, node: "n", description: atmel))).filters
        #expect(filters.stuckAfter == 0 && filters.palmSize == .units(120) && filters.jumpMillimetres == 0 && !filters.hysteresis)
        #expect(filters.stuckSlop.millimetres == 4, "the stuck slop is the tap slop")
        let millimetres = try Configuration.parse("[[device]]\npalm_size_mm = 25\n", file: "x.toml")
        #expect(try #require(millimetres.match(DeviceIdentity(number: 0, node: "n", description: atmel))?.settings).filters.palmSize == .millimetres(25))
        refused("[[device]]\npalm_size_mm = 25\npalm_size = 100\n", line: 3, "give palm_size_mm or palm_size (in device units), not both")
        refused("[[device]]\nstuck_after = -1\n", line: 2, "stuck_after")
        refused("[[device]]\njump_mm = 1e9\n", line: 2, "jump_mm")
        refused("[[device]]\nhysteresis = 1\n", line: 2, "hysteresis")
        refused("[[device]]\npalm_size = -5\n", line: 2, "palm_size")
    }

    @Test("the phantom filters' keys: defaults, each turned off, dead zones as rectangles, and what is refused with its line")
    func phantomKeys() throws {
        let panel = DeviceIdentity(number: 0, node: "n", description: DeviceDescription(name: "Panel"))
        let defaults = try #require(try Configuration.parse("[[device]]\n", file: "x.toml").match(panel)?.settings).filters.phantoms
        #expect(defaults == PhantomTouchSettings())
        #expect(defaults.repeatingTaps && defaults.wakeBursts && defaults.stormContacts == 20 && defaults.stormQuiet == 0.5 && defaults.infrared == nil)
        let configuration = try Configuration.parse("""
            [[device]]
            phantom_taps = false
            wake_bursts = false
            storm_contacts = 0
            storm_quiet = 12.5
            infrared = true
            dead_zones = [[0, 1040, 1920, 40], { x = 0, y = 0, width = 30, height = 1080 }]
            """, file: "x.toml")
        let phantoms = try #require(configuration.match(panel)?.settings).filters.phantoms
        #expect(!phantoms.repeatingTaps && !phantoms.wakeBursts && phantoms.stormContacts == 0 && phantoms.stormQuiet == 12.5)
        #expect(phantoms.infrared == true)
        #expect(phantoms.deadZones == [Rect(x: 0, y: 1040, width: 1920, height: 40), Rect(x: 0, y: 0, width: 30, height: 1080)])
        refused("[[device]]\nstorm_contacts = -1\n", line: 2, "storm_contacts is flood contacts (lifting within 70 ms where they landed) a second, 0 (off) to 100000, not -1")
        refused("[[device]]\nstorm_quiet = 0\n", line: 2, "storm_quiet")
        refused("[[device]]\ninfrared = \"yes\"\n", line: 2, "infrared")
        refused("[[device]]\ndead_zones = [0, 1040, 1920, 40]\n", line: 2, "dead_zones")
        refused("[[device]]\ndead_zones = [[0, 1040, -5, 40]]\n", line: 2, "dead_zones needs a width and height of zero or more")
        refused("[[device]]\ndead_zones = \"bottom\"\n", line: 2, "a list of rectangles")
        let many = "[" + Array(repeating: "[0, 0, 1, 1]", count: 33).joined(separator: ", ") + "]"
        refused("[[device]]\ndead_zones = \(many)\n", line: 2, "dead_zones lists 33 rectangles; at most 32")
    }
}
