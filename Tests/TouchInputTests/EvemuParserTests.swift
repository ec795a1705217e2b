import MotionCore
import Testing
@testable import TouchInput

@Suite("evemu parser")
struct EvemuParserTests {
    @Test("every fixture recording parses, with its header and all its events", arguments: FixtureRecordings.withEvents)
    func fixtureRecordings(name: String) throws {
        let text = try FixtureRecordings.text(name)
        let recording = try EvemuRecording(parsing: text)
        let expectedEvents = text.split(separator: "\n").filter { $0.hasPrefix("E:") }.count
        #expect(recording.events.count == expectedEvents)
        #expect(recording.formatVersion?.hasPrefix("1.") == true)
        let device = try #require(recording.device)
        #expect(device.kind.isTouchscreen, "\(device.kind)")
        #expect(recording.events.allSatisfy { $0.time >= recording.startTime })
    }

    @Test("the Pixel Tablet header: SPI ids, 11 units/mm, no slots or legacy axes")
    func pixelHeader() throws {
        let recording = try FixtureRecordings.recording(FixtureRecordings.pixel)
        let device = try #require(recording.device)
        #expect(device.name == "NVTCapacitiveTouchScreen")
        #expect(device.bus == 0x1c && device.vendor == 0x0603 && device.product == 0x7806 && device.version == 0x0100)
        #expect(device.has(property: InputProperty.direct))
        #expect(device.axes[AbsoluteAxis.positionX] == AxisInfo(minimum: 0, maximum: 1599, resolution: 11))
        #expect(device.axes[AbsoluteAxis.orientation] == AxisInfo(minimum: -4096, maximum: 4096))
        #expect(device.axes[AbsoluteAxis.x] == nil)
        #expect(!recording.events.contains { $0.type == EventType.absolute && $0.code == AbsoluteAxis.slot })
        #expect(device.kind == .multitouchScreen)
        let size = try #require(device.physicalSize)
        #expect(Swift.abs(size.width - 1599.0 / 11) < 1e-9 && Swift.abs(size.height - 2559.0 / 11) < 1e-9)
        #expect(device.has(EventType.key, KeyCode.touch))
    }

    @Test("device descriptions without events parse", arguments: [FixtureRecordings.elan, FixtureRecordings.wacom])
    func descriptions(name: String) throws {
        let recording = try FixtureRecordings.recording(name)
        #expect(recording.events.isEmpty)
        let device = try #require(recording.device)
        #expect(device.kind == .multitouchScreen)
        #expect(device.slotCount == 10)
        #expect(device.physicalSize != nil)
    }

    @Test("an event line: trailing comments, negative values, absolute times")
    func eventLines() throws {
        let recording = try EvemuRecording(parsing: """
            E: 1700000000.250000 0003 0039 -001\t# EV_ABS / ABS_MT_TRACKING_ID -1
            E: 1700000000.500001 0000 0000 0000
            """)
        #expect(recording.device == nil)
        #expect(recording.events == [
            InputEvent(time: 1_700_000_000.25, type: 3, code: 0x39, value: -1),
            InputEvent(time: 1_700_000_000.500001, type: 0, code: 0, value: 0),
        ])
        #expect(Swift.abs(recording.duration - 0.250001) < 1e-6)
    }

    @Test("a malformed line is an error naming the line and what was expected", arguments: [
        ("N: x\nE: 0.1 0003 0035\n", 2, "expected 'E: SECONDS.MICROSECONDS TYPE CODE VALUE'"),
        ("E: 0.1 0003 0035 12\nE: abc 0003 0035 12\n", 2, "\"abc\" is not a time"),
        ("E: 0.1 00g3 0035 12\n", 1, "is not a hexadecimal type and code"),
        ("E: 0.1 0003 0035 twelve\n", 1, "\"twelve\" is not a value"),
        ("# EVEMU 1.3\nI: 0018 0000 0000\n", 2, "expected 'I: BUS VENDOR PRODUCT VERSION'"),
        ("A: 35 0 799\n", 1, "expected 'A: CODE MIN MAX FUZZ FLAT [RESOLUTION]'"),
        ("B: 03 zz\n", 1, "expected 'B:' bytes in hexadecimal"),
        ("N: ok\nX: what\n", 2, "unknown line type \"X:\""),
        ("just some text\n", 1, "expected a line starting with N:"),
        // A bug report's recording can hold anything: what it says is quoted, never replayed
        // to a terminal or the journal as it is.
        ("E: 0.1 0003 0035 \u{1B}[2J\n", 1, #"; "\u{1B}[2J" is not a value"#),
        ("\u{1B}]0;owned\u{7}\nN: x\n", 1, #"found "\u{1B}]0;owned\u{7}""#),
    ])
    func malformed(text: String, line: Int, message: String) {
        #expect {
            try EvemuRecording(parsing: text)
        } throws: { error in
            guard let error = error as? EvemuParseError else { return false }
            return error.line == line && error.message.contains(message)
        }
    }

    @Test("a recording saved with CRLF line endings (from Windows, in a bug report) reads as the same recording")
    func crlf() throws {
        let text = try FixtureRecordings.text(FixtureRecordings.atmelTaps)
        let windows = text.replacingOccurrences(of: "\n", with: "\r\n")
        let recording = try EvemuRecording(parsing: windows)
        let original = try EvemuRecording(parsing: text)
        #expect(recording.device == original.device)
        #expect(recording.events == original.events)
    }
}

@Suite("Device classification")
struct DeviceClassificationTests {
    static func device(
        properties: Set<UInt16> = [], keys: Set<UInt16> = [], absolute: Set<UInt16> = [], relative: Set<UInt16> = []
    ) -> DeviceDescription {
        var device = DeviceDescription(name: "test")
        device.properties = properties
        if !keys.isEmpty { device.codes[EventType.key] = keys }
        if !relative.isEmpty { device.codes[EventType.relative] = relative }
        if !absolute.isEmpty { device.codes[EventType.absolute] = absolute }
        for code in absolute { device.axes[code] = AxisInfo(minimum: 0, maximum: 1000) }
        return device
    }

    @Test("a direct multitouch device is a multitouch screen; ABS_X/Y with BTN_TOUCH is a single-touch one")
    func touchscreens() {
        let mt: Set<UInt16> = [AbsoluteAxis.positionX, AbsoluteAxis.positionY, AbsoluteAxis.slot, AbsoluteAxis.trackingID]
        #expect(Self.device(properties: [InputProperty.direct], keys: [KeyCode.touch], absolute: mt).kind == .multitouchScreen)
        #expect(Self.device(keys: [KeyCode.touch], absolute: [AbsoluteAxis.x, AbsoluteAxis.y]).kind == .singleTouchScreen)
    }

    @Test("touchpads, mice, keyboards, tablets and joysticks are refused, saying what they are", arguments: [
        (DeviceClassificationTests.device(properties: [InputProperty.pointer], keys: [KeyCode.touch, KeyCode.toolFinger],
                                          absolute: [AbsoluteAxis.x, AbsoluteAxis.y, AbsoluteAxis.positionX, AbsoluteAxis.positionY]), "a touchpad"),
        (DeviceClassificationTests.device(keys: [KeyCode.leftButton], relative: [RelativeAxis.x, RelativeAxis.y]), "a mouse"),
        (DeviceClassificationTests.device(keys: [KeyCode.a, KeyCode.space]), "a keyboard"),
        (DeviceClassificationTests.device(keys: [KeyCode.toolPen, KeyCode.touch], absolute: [AbsoluteAxis.x, AbsoluteAxis.y]), "a graphics tablet"),
        (DeviceClassificationTests.device(absolute: [AbsoluteAxis.x, AbsoluteAxis.y]), "without BTN_TOUCH"),
        (DeviceClassificationTests.device(), "not a touch device"),
    ])
    func refused(device: DeviceDescription, what: String) {
        guard case .refused(let reason) = device.kind else {
            Issue.record("\(device) should be refused")
            return
        }
        #expect(reason.contains(what), "\(reason)")
        #expect(reason.contains("motiond"))
    }
}
