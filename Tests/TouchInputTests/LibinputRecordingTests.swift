import Testing
import TouchModel
@testable import TouchInput

@Suite("libinput record YAML")
struct LibinputRecordingTests {
    static let yaml = "whot-evemu-devices__atmel-maxtouch__2f-touch-hold-release.libinput.yml"

    @Test("the converted fixture gives the evemu fixture's frames, from its touchscreen (the second device)")
    func sameFramesAsEvemu() throws {
        let fromYAML = try EvemuRecording(reading: FixtureRecordings.text(Self.yaml))
        let fromEvemu = try FixtureRecordings.recording(FixtureRecordings.atmelHold)
        #expect(fromYAML.device?.name == "Atmel maXTouch Touchscreen")
        #expect(fromYAML.device?.axes == fromEvemu.device?.axes)
        #expect(fromYAML.device?.properties == fromEvemu.device?.properties)
        #expect(fromYAML.device?.codes[EventType.absolute] == fromEvemu.device?.codes[EventType.absolute])
        #expect(fromYAML.events.count == fromEvemu.events.count)
        let yamlFrames = try RecordingReplay(fromYAML).frames()
        let evemuFrames = try RecordingReplay(fromEvemu).frames()
        #expect(yamlFrames.count == evemuFrames.count && yamlFrames.count > 10)
        for (a, b) in zip(yamlFrames, evemuFrames) {
            // The evemu file starts at 0.000001 s and libinput's at 0: relative times differ
            // by rounding only.
            #expect(a.contacts == b.contacts && abs(a.time - b.time) < 1e-9)
        }
    }

    @Test("--device picks by place: 0 is the keyboard (not a touchscreen), 1 the touchscreen, 2 is not there")
    func choosingDevices() throws {
        let text = try FixtureRecordings.text(Self.yaml)
        let keyboard = try EvemuRecording(reading: text, device: 0)
        #expect(keyboard.device?.name == "AT Translated Set 2 keyboard")
        #expect(keyboard.events.count == 3)
        #expect(throws: ReplayError.self) { try RecordingReplay(keyboard) }
        #expect(try EvemuRecording(reading: text, device: 1).device?.name == "Atmel maXTouch Touchscreen")
        let error = #expect(throws: EvemuParseError.self) { try EvemuRecording(reading: text, device: 2) }
        #expect(error?.message.contains("holds 2 devices") == true)
        #expect(error?.line == text.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.hasPrefix("devices:") }! + 1 + 1)
        // An evemu file holds one device.
        #expect(throws: EvemuParseError.self) { try EvemuRecording(reading: FixtureRecordings.text(FixtureRecordings.atmelHold), device: 1) }
        #expect(try EvemuRecording(reading: FixtureRecordings.text(FixtureRecordings.atmelHold), device: 0).device != nil)
    }

    /// One touchscreen and one frame, written in the styles YAML allows.
    static let canonical = """
        version: 1
        devices:
        - evdev:
            name: "Panel"
            id: [3, 1267, 268, 1]
            codes: {0: [0], 1: [330], 3: [0, 1, 47, 53, 54, 57]}
            absinfo: {0: [0, 999, 0, 0, 10], 1: [0, 599, 0, 0, 10], 47: [0, 9, 0, 0, 0], 53: [0, 999, 0, 0, 10], 54: [0, 599, 0, 0, 10], 57: [0, 65535, 0, 0, 0]}
            properties: [1]
          events:
          - evdev:
            - [0, 0, 3, 57, 1]
            - [0, 0, 3, 53, 500]
            - [0, 0, 3, 54, 300]
            - [0, 0, 0, 0, 0]
          - evdev:
            - [0, 12000, 3, 57, -1]
            - [0, 12000, 0, 0, 0]
        """

    static let variations = [
        // Block lists and mappings, comments everywhere, hexadecimal codes, a document start.
        """
        # libinput record
        ---
        version: 1   # the file format
        ndevices: 1
        devices:
          - node: /dev/input/event7
            evdev:
              # Name: Panel
              name: Panel
              id:
                - 0x3
                - 0x04f3
                - 0x010c
                - 1
              codes:
                0: [0]          # EV_SYN
                1: [0x14a]      # EV_KEY
                3:
                  - 0x00
                  - 0x01
                  - 0x2f
                  - 0x35
                  - 0x36
                  - 0x39
              absinfo:
                0x00: [0, 999, 0, 0, 10]
                0x01: [0, 599, 0, 0, 10]
                0x2f: [0, 9, 0, 0, 0]
                0x35: [0, 999, 0, 0, 10]
                0x36: [0, 599, 0, 0, 10]
                0x39: [0, 65535, 0, 0, 0]
              properties:
                - 1
            events:
              # Current time is 10:00:00
              - evdev:
                  - [  0,      0,   3,  57,       1] # EV_ABS / ABS_MT_TRACKING_ID
                  - [  0,      0,   3,  53,     500] # EV_ABS / ABS_MT_POSITION_X
                  - [  0,      0,   3,  54,     300]
                  - [  0,      0,   0,   0,       0] # ------------ SYN_REPORT (0) ---------- +0ms
              - libinput:
                  - {time: 0.000000, type: TOUCH_DOWN, slot: 0}
              - evdev:
                  - [0, 12000, 0x3, 0x39, -1]
                  - [0, 12000, 0, 0, 0]
        """,
        // Flow style throughout, quoted numbers-as-text for the name only, Windows line ends.
        "version: 1\r\ndevices: [{evdev: {name: 'Panel', id: [3, 1267, 268, 1], properties: [1], codes: {0: [0], 1: [330], 3: [0, 1, 47, 53, 54, 57]}, absinfo: {0: [0, 999, 0, 0, 10], 1: [0, 599, 0, 0, 10], 47: [0, 9, 0, 0, 0], 53: [0, 999, 0, 0, 10], 54: [0, 599, 0, 0, 10], 57: [0, 65535, 0, 0, 0]}}, events: [{evdev: [[0, 0, 3, 57, 1], [0, 0, 3, 53, 500], [0, 0, 3, 54, 300], [0, 0, 0, 0, 0]]}, {evdev: [[0, 12000, 3, 57, -1], [0, 12000, 0, 0, 0]]}]}]\r\n",
        // Anchors and aliases: a repeated absinfo written once.
        """
        version: 1
        devices:
        - evdev:
            name: Panel
            id: [3, 1267, 268, 1]
            codes: {0: [0], 1: [330], 3: [0, 1, 47, 53, 54, 57]}
            absinfo: {0: &x [0, 999, 0, 0, 10], 1: &y [0, 599, 0, 0, 10], 47: [0, 9, 0, 0, 0], 53: *x, 54: *y, 57: [0, 65535, 0, 0, 0]}
            properties: [1]
          events:
          - evdev: [[0, 0, 3, 57, 1], [0, 0, 3, 53, 500], [0, 0, 3, 54, 300], [0, 0, 0, 0, 0]]
          - evdev: [[0, 12000, 3, 57, -1], [0, 12000, 0, 0, 0]]
        """,
    ]

    @Test("comments, hexadecimal, block and flow lists, aliases and CRLF all read the same", arguments: 0..<variations.count)
    func syntaxVariations(index: Int) throws {
        let expected = try EvemuRecording(reading: Self.canonical)
        let got = try EvemuRecording(reading: Self.variations[index])
        #expect(got.device == expected.device)
        #expect(got.events == expected.events)
        #expect(expected.events.count == 6 && expected.device?.vendor == 0x04f3 && expected.device?.axes[0x35]?.resolution == 10)
        let frames = try RecordingReplay(got).frames()
        #expect(frames.count == 2 && frames[0].contacts.first?.position == TouchModel.Point(x: 500, y: 300))
    }

    @Test("mistakes are refused at their line", arguments: [
        ("version: 2\ndevices: []\n", 1, "version 2 is not supported"),
        ("devices: []\n", 1, "has no 'version'"),
        ("version: 1\ndevices: []\n", 2, "holds no device"),
        ("version: 1\ndevices:\n- evdev: {name: P, id: [1, 2, 3], codes: {}}\n", 3, "hold 4 numbers"),
        ("version: 1\ndevices:\n- evdev: {name: P, id: [1, 2, 3, 70000], codes: {}}\n", 3, "outside 0…65535"),
        ("version: 1\ndevices:\n- evdev: {name: P, id: [1, 2, 3, 4], codes: {3: [0, 1, 99]}}\n", 3, "outside 0…63"),
        ("version: 1\ndevices:\n- evdev: {name: P, id: [1, 2, 3, 4], codes: {}}\n  events:\n  - evdev:\n    - [0, 0, 3, 57]\n", 6, "found 4 numbers"),
        ("version: 1\ndevices:\n- evdev: {name: P, id: [1, 2, 3, 4], codes: {}}\n  events:\n  - evdev:\n    - [0, 1000000, 3, 57, 1]\n", 6, "microseconds 1000000"),
        ("version: 1\ndevices:\n- evdev: {name: P, id: [1, 2, 3, 4], codes: {}}\n  events:\n  - evdev:\n    - [0, 0, 3, 57, 1.5]\n", 6, "whole number, found \"1.5\""),
        ("version: 1\ndevices: [\n", 3, "not valid YAML"),
        ("version: 1\ndevices:\n- evdev: {name: P, id: [1, 2, 3, 4], codes: {3: [53, 54]}}\n", 3, "the device is invalid"),
        ("version: 1\ndevices: *nowhere\n", 2, "the alias *nowhere names no anchor before it"),
        ("version: 1\n---\nversion: 1\n", 2, "a second YAML document"),
        ("version: 1\ndevices: " + String(repeating: "[", count: 70) + "\n", 2, "nested more than 64 deep"),
        ("version: 1\n\ndevices: \u{7}\n", 3, "not valid YAML: control characters are not allowed"),
    ])
    func refused(text: String, line: Int, message: String) {
        let error = #expect(throws: EvemuParseError.self) { try EvemuRecording(reading: text) }
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
        #expect(error?.line == line, "\(error?.description ?? "")")
    }

    @Test("aliases count as often as they are used: a file repeating one list of events by alias is refused past the limit")
    func aliasBomb() {
        // 10 events written once, used 200 times: 2,000 events from a few hundred bytes. (A
        // megabyte written this way would hold 10⁹; the real limit is 10⁷.)
        var text = "version: 1\ndevices:\n- evdev: {name: P, id: [1, 2, 3, 4], codes: {}}\n  events:\n"
        text += "  - evdev: &a [" + Array(repeating: "[0, 0, 0, 0, 0]", count: 10).joined(separator: ", ") + "]\n"
        for _ in 0..<199 { text += "  - evdev: *a\n" }
        let read = try? LibinputRecording.parse(text, device: nil, validatingDevice: false, eventLimit: 2_000)
        #expect(read?.events.count == 2_000)
        let error = #expect(throws: EvemuParseError.self) {
            try LibinputRecording.parse(text, device: nil, validatingDevice: false, eventLimit: 1_999)
        }
        #expect(error?.message.contains("more than 1999 events") == true)
    }

    @Test("evemu files are still told apart from YAML by their first line that is not a comment")
    func formatDetection() {
        #expect(LibinputRecording.looksLikeYAML("# libinput record\nversion: 1\n"))
        #expect(LibinputRecording.looksLikeYAML("\n\n---\nversion: 1\n"))
        #expect(!LibinputRecording.looksLikeYAML("# EVEMU 1.3\nN: Panel\n"))
        #expect(!LibinputRecording.looksLikeYAML("E: 0.000001 0003 0039 0007\n"))
        #expect(!LibinputRecording.looksLikeYAML(""))
    }
}
