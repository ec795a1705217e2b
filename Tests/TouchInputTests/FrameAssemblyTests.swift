import MotionCore
import Testing
@testable import TouchInput

/// Builds kernel event sequences by hand, as a device would send them.
struct EventScript {
    var events: [InputEvent] = []
    var time = 0.0

    mutating func abs(_ code: UInt16, _ value: Int32) { events.append(InputEvent(time: time, type: EventType.absolute, code: code, value: value)) }
    mutating func key(_ code: UInt16, _ value: Int32) { events.append(InputEvent(time: time, type: EventType.key, code: code, value: value)) }
    mutating func slot(_ slot: Int32) { abs(AbsoluteAxis.slot, slot) }
    mutating func track(_ id: Int32) { abs(AbsoluteAxis.trackingID, id) }
    mutating func at(_ x: Int32, _ y: Int32) {
        abs(AbsoluteAxis.positionX, x)
        abs(AbsoluteAxis.positionY, y)
    }
    mutating func report(after seconds: Double = 0.01) {
        events.append(InputEvent(time: time, type: EventType.synchronization, code: SynchronizationCode.report, value: 0))
        time += seconds
    }
    /// Protocol A: the end of one contact's data.
    mutating func contactReport() {
        events.append(InputEvent(time: time, type: EventType.synchronization, code: SynchronizationCode.multitouchReport, value: 0))
    }
    mutating func dropped() {
        events.append(InputEvent(time: time, type: EventType.synchronization, code: SynchronizationCode.dropped, value: 0))
    }
}

/// A 10-slot direct touchscreen, 0…999 × 0…599 at 10 units/mm, like many real panels.
func panel(slots: Int32? = 9, legacy: Bool = true, resolution: (Int32, Int32) = (10, 10), pressure: Bool = false) -> DeviceDescription {
    var device = DeviceDescription(name: "test panel")
    device.properties = [InputProperty.direct]
    device.codes[EventType.key] = [KeyCode.touch]
    var axes: [UInt16: AxisInfo] = [
        AbsoluteAxis.positionX: AxisInfo(minimum: 0, maximum: 999, resolution: resolution.0),
        AbsoluteAxis.positionY: AxisInfo(minimum: 0, maximum: 599, resolution: resolution.1),
        AbsoluteAxis.trackingID: AxisInfo(minimum: 0, maximum: 65535),
        AbsoluteAxis.toolType: AxisInfo(minimum: 0, maximum: 2),
    ]
    if let slots { axes[AbsoluteAxis.slot] = AxisInfo(minimum: 0, maximum: slots) }
    if legacy {
        axes[AbsoluteAxis.x] = AxisInfo(minimum: 0, maximum: 999, resolution: resolution.0)
        axes[AbsoluteAxis.y] = AxisInfo(minimum: 0, maximum: 599, resolution: resolution.1)
    }
    if pressure { axes[AbsoluteAxis.multitouchPressure] = AxisInfo(minimum: 0, maximum: 255) }
    device.axes = axes
    device.codes[EventType.absolute] = Set(axes.keys)
    return device
}

/// Runs events through an assembler; the frames, and the assembler for further checks.
func assemble(_ events: [InputEvent], device: DeviceDescription = panel(), mapping: OutputMapping = OutputMapping()) -> [TouchFrame] {
    var assembler = TouchFrameAssembler(description: device, mapping: mapping)
    return events.compactMap { assembler.consume($0) }
}

/// A frame as (slot, id, phase, device x, device y) tuples, compact to compare.
func summary(_ frame: TouchFrame) -> [String] {
    frame.contacts.map { "\($0.slot)#\($0.trackingID) \($0.phase.rawValue) \($0.deviceX),\($0.deviceY)" }
}

@Suite("Frame assembly")
struct FrameAssemblyTests {
    @Test("two fingers through protocol B: began, moved, stationary, ended")
    func twoFingers() {
        var s = EventScript()
        s.slot(0); s.track(10); s.at(100, 200); s.report()
        s.slot(1); s.track(11); s.at(500, 300); s.report()
        s.slot(0); s.at(110, 200); s.report()
        s.slot(1); s.track(-1); s.report()
        s.slot(0); s.track(-1); s.report()
        let frames = assemble(s.events)
        #expect(frames.map(summary) == [
            ["0#10 began 100,200"],
            ["0#10 stationary 100,200", "1#11 began 500,300"],
            ["0#10 moved 110,200", "1#11 stationary 500,300"],
            ["1#11 ended 500,300", "0#10 stationary 110,200"],  // ends come first
            ["0#10 ended 110,200"],
        ])
        #expect(frames.map(\.time) == [0, 0.01, 0.02, 0.03, 0.04])
    }

    @Test("a device without ABS_MT_SLOT speaks protocol A, and legacy ABS_X/Y are ignored on multitouch devices")
    func protocolA() {
        var s = EventScript()
        // Protocol A with contact tracking: libmtdev keeps the firmware's id.
        s.track(7); s.at(10, 20); s.contactReport(); s.abs(AbsoluteAxis.x, 999); s.key(KeyCode.touch, 1); s.report()
        s.track(7); s.at(15, 25); s.contactReport(); s.report()
        s.contactReport(); s.key(KeyCode.touch, 0); s.report()
        #expect(assemble(s.events, device: panel(slots: nil, legacy: false)).map(summary) == [
            ["0#7 began 10,20"], ["0#7 moved 15,25"], ["0#7 ended 15,25"],
        ])
    }

    @Test("a new tracking id in a slot ends the old contact and begins the new one in the same frame")
    func replacedTrackingID() {
        var s = EventScript()
        s.slot(2); s.track(1); s.at(50, 50); s.report()
        s.track(2); s.at(80, 90); s.report()
        #expect(assemble(s.events).map(summary) == [["2#1 began 50,50"], ["2#1 ended 50,50", "2#2 began 80,90"]])
    }

    @Test("a contact that begins and ends within one frame is never reported")
    func tooShort() {
        var s = EventScript()
        s.slot(0); s.track(1); s.at(5, 5); s.track(-1); s.report()
        #expect(assemble(s.events).isEmpty)
    }

    @Test("a finger that becomes a palm is cancelled and hidden until it lifts; a palm from the start never shows")
    func palm() {
        var s = EventScript()
        s.slot(0); s.track(1); s.at(100, 100); s.report()
        s.abs(AbsoluteAxis.toolType, ToolType.palm); s.at(120, 120); s.report()
        s.at(130, 130); s.report()
        s.track(-1); s.report()
        // The tool type may come before the tracking id; it is the slot's state either way.
        s.slot(1); s.abs(AbsoluteAxis.toolType, ToolType.palm); s.track(2); s.at(300, 300); s.report()
        s.slot(1); s.track(-1); s.report()
        // A finger after the palm in the same slot.
        s.slot(1); s.abs(AbsoluteAxis.toolType, ToolType.finger); s.track(3); s.at(400, 400); s.report()
        #expect(assemble(s.events).map(summary) == [
            ["0#1 began 100,100"],
            ["0#1 cancelled 100,100"],
            ["1#3 began 400,400"],
        ])
    }

    @Test("a finger landing where a palm lifted is a finger: the kernel sends its id before its tool type; a palm that turns finger later stays a palm")
    func fingerAfterPalmInItsOrder() {
        var s = EventScript()
        s.slot(0); s.abs(AbsoluteAxis.toolType, ToolType.palm); s.track(1); s.at(100, 100); s.report()
        s.track(-1); s.report()
        // As input_mt_report_slot_state sends it: the tracking id, then the tool type.
        s.track(2); s.abs(AbsoluteAxis.toolType, ToolType.finger); s.at(200, 200); s.report()
        s.at(210, 200); s.report()
        s.track(-1); s.report()
        // A palm from its landing that says finger a frame later is still a palm.
        s.abs(AbsoluteAxis.toolType, ToolType.palm); s.track(3); s.at(300, 300); s.report()
        s.abs(AbsoluteAxis.toolType, ToolType.finger); s.at(310, 300); s.report()
        #expect(assemble(s.events).map(summary) == [
            ["0#2 began 200,200"],
            ["0#2 moved 210,200"],
            ["0#2 ended 210,200"],
        ])
    }

    @Test("after SYN_DROPPED, libevdev's resync cancels contacts lost in the gap and begins new ones")
    func resync() {
        var assembler = TouchFrameAssembler(description: panel())
        var s = EventScript()
        s.slot(0); s.track(1); s.at(100, 100)
        s.slot(1); s.track(2); s.at(200, 200); s.report()
        for event in s.events { _ = assembler.consume(event) }

        // libevdev's sync events: slot 0 lifted during the gap, slot 1 moved, slot 2 is new.
        assembler.beginResync()
        var sync = EventScript()
        sync.time = 1
        sync.slot(0); sync.track(-1)
        sync.slot(1); sync.at(210, 220)
        sync.slot(2); sync.track(3); sync.at(300, 300)
        sync.report()
        let frames = sync.events.compactMap { assembler.consume($0) }
        assembler.endResync()
        #expect(frames.map(summary) == [["0#1 cancelled 100,100", "1#2 moved 210,220", "2#3 began 300,300"]])
        #expect(assembler.droppedReports == 1)

        // After the resync, a lift is an ordinary end again.
        var after = EventScript()
        after.time = 2
        after.slot(1); after.track(-1); after.report()
        #expect(after.events.compactMap { assembler.consume($0) }.map(summary) == [["1#2 ended 210,220", "2#3 stationary 300,300"]])
    }

    @Test("a raw SYN_DROPPED with no one to resync ends every contact as cancelled, and counts the drop")
    func rawDrop() {
        var assembler = TouchFrameAssembler(description: panel())
        var s = EventScript()
        s.slot(0); s.track(1); s.at(100, 100); s.report()
        s.dropped()
        s.slot(0); s.at(999, 999)  // partial, discarded
        s.report()
        s.slot(1); s.track(5); s.at(1, 2); s.report()
        let frames = s.events.compactMap { assembler.consume($0) }
        #expect(frames.map(summary) == [["0#1 began 100,100"], ["0#1 cancelled 100,100"], ["1#5 began 1,2"]])
        #expect(assembler.droppedReports == 1)
        #expect(assembler.activeContactCount == 1)
    }

    @Test("removing a device cancels what is down")
    func cancelAll() {
        var assembler = TouchFrameAssembler(description: panel())
        var s = EventScript()
        s.slot(0); s.track(1); s.at(10, 10); s.slot(3); s.track(4); s.at(20, 20); s.report()
        _ = s.events.compactMap { assembler.consume($0) }
        let frame = assembler.cancelAll(at: 9)
        #expect(frame.map(summary) == ["0#1 cancelled 10,10", "3#4 cancelled 20,20"])
        #expect(frame?.time == 9)
        #expect(assembler.activeContactCount == 0)
        #expect(assembler.cancelAll(at: 10) == nil)
    }

    @Test("a single-touch device is one slot with made-up tracking ids")
    func singleTouch() {
        var device = DeviceDescription(name: "resistive")
        device.codes[EventType.key] = [KeyCode.touch]
        device.codes[EventType.absolute] = [AbsoluteAxis.x, AbsoluteAxis.y, AbsoluteAxis.pressure]
        device.axes = [
            AbsoluteAxis.x: AxisInfo(minimum: 0, maximum: 4095),
            AbsoluteAxis.y: AxisInfo(minimum: 0, maximum: 4095),
            AbsoluteAxis.pressure: AxisInfo(minimum: 0, maximum: 255),
        ]
        #expect(device.kind == .singleTouchScreen)
        var s = EventScript()
        s.key(KeyCode.touch, 1); s.abs(AbsoluteAxis.x, 100); s.abs(AbsoluteAxis.y, 200); s.abs(AbsoluteAxis.pressure, 80); s.report()
        s.abs(AbsoluteAxis.x, 110); s.report()
        s.key(KeyCode.touch, 0); s.report()
        s.key(KeyCode.touch, 1); s.report()
        let frames = assemble(s.events, device: device)
        #expect(frames.map(summary) == [["0#0 began 100,200"], ["0#0 moved 110,200"], ["0#0 ended 110,200"], ["0#1 began 110,200"]])
        #expect(frames[0].contacts[0].pressure == 80)
    }

    @Test("values outside the axis range are kept raw and clamped on screen; slots outside the range are ignored")
    func outOfRange() {
        var s = EventScript()
        s.slot(0); s.track(1); s.at(-40, 700); s.report()
        s.slot(12); s.track(9); s.at(5, 5); s.report()
        let frames = assemble(s.events, device: panel())
        #expect(frames.count == 2)
        let contact = frames[0].contacts[0]
        #expect(contact.deviceX == -40 && contact.deviceY == 700)
        #expect(contact.position == Point(x: 0, y: 599))
        #expect(summary(frames[1]) == ["0#1 stationary -40,700"])
    }

    @Test("contacts carry pixels, millimetres and pressure when the device has them")
    func contactValues() throws {
        var s = EventScript()
        s.slot(0); s.track(1); s.at(250, 300); s.abs(AbsoluteAxis.multitouchPressure, 42); s.report()
        let contact = try #require(assemble(s.events, device: panel(pressure: true)).first?.contacts.first)
        #expect(contact.position == Point(x: 250, y: 300))
        #expect(contact.millimetres == Point(x: 25, y: 30))
        #expect(contact.pressure == 42)
        #expect(contact.touchMajor == nil)
        let noResolution = try #require(assemble(s.events, device: panel(resolution: (0, 0))).first?.contacts.first)
        #expect(noResolution.millimetres == nil)
    }

    @Test("the fixture recordings assemble into the frames their README describes")
    func fixtureRecordings() throws {
        func frames(_ name: String) throws -> [TouchFrame] {
            try RecordingReplay(FixtureRecordings.recording(name)).frames()
        }
        let taps = try frames(FixtureRecordings.atmelTaps)
        #expect(taps.filter { $0.contacts.contains { $0.phase == .began } }.count == 9)
        #expect(taps.allSatisfy { $0.contacts.allSatisfy { $0.phase != .moved } }, "zero movement")

        let four = try frames(FixtureRecordings.atmelFour)
        #expect(Set(four.flatMap(\.contacts).map(\.trackingID)).count == 4)
        #expect(four.map { $0.activeContacts.count }.max() == 4)

        let pixel = try frames(FixtureRecordings.pixel)
        #expect(pixel.first?.time == 0, "times relative to the first event")
        #expect(pixel.last?.contacts.first?.phase == .ended)
        let start = try #require(pixel.first?.contacts.first?.millimetres)
        let end = try #require(pixel.last?.contacts.first?.millimetres)
        #expect(Swift.abs(start.distance(to: end) - 107) < 3, "a 107 mm swipe: \(start.distance(to: end))")
    }
}
