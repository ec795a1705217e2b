import MotionCore
import Testing
@testable import TouchInput

/// Multitouch protocol A, read through libmtdev, against the protocol B recording the fixture
/// was converted from (`Tests/Fixtures/recordings/to-protocol-a.py`).
@Suite("Protocol A panels through libmtdev")
struct ProtocolATests {
    static let protocolA = "whot-evemu-devices__ep0430m09__2f-drag-scroll.protocol-a.evemu"

    static func frames(_ name: String) throws -> [TouchFrame] {
        try RecordingReplay(FixtureRecordings.recording(name)).frames()
    }

    @Test("the fixture is protocol A: no slots, no tracking ids, SYN_MT_REPORT between contacts")
    func fixtureIsProtocolA() throws {
        let recording = try FixtureRecordings.recording(Self.protocolA)
        let device = try #require(recording.device)
        #expect(device.isProtocolA)
        #expect(!device.has(EventType.absolute, AbsoluteAxis.slot) && !device.has(EventType.absolute, AbsoluteAxis.trackingID))
        #expect(!recording.events.contains { $0.type == EventType.absolute && ($0.code == AbsoluteAxis.slot || $0.code == AbsoluteAxis.trackingID) })
        #expect(recording.events.filter { $0.type == EventType.synchronization && $0.code == SynchronizationCode.multitouchReport }.count > 150)
        #expect(try !FixtureRecordings.recording(FixtureRecordings.ep0430).device!.isProtocolA)
    }

    @Test("a protocol A recording gives the frames of the protocol B one it was made from, contact for contact")
    func sameFrames() throws {
        let a = try Self.frames(Self.protocolA), b = try Self.frames(FixtureRecordings.ep0430)
        try #require(a.count == b.count && a.count > 90)
        // libmtdev numbers contacts itself: its ids must map one to one onto the firmware's.
        var idsAToB: [Int32: Int32] = [:], idsBToA: [Int32: Int32] = [:]
        for (index, (frameA, frameB)) in zip(a, b).enumerated() {
            #expect(frameA.time == frameB.time, "frame \(index)")
            let contactsA = frameA.contacts.sorted { ($0.deviceX, $0.deviceY) < ($1.deviceX, $1.deviceY) }
            let contactsB = frameB.contacts.sorted { ($0.deviceX, $0.deviceY) < ($1.deviceX, $1.deviceY) }
            try #require(contactsA.count == contactsB.count, "frame \(index): \(contactsA) against \(contactsB)")
            for (contactA, contactB) in zip(contactsA, contactsB) {
                #expect(contactA.phase == contactB.phase && contactA.position == contactB.position, "frame \(index): \(contactA) against \(contactB)")
                #expect(idsAToB[contactA.trackingID, default: contactB.trackingID] == contactB.trackingID, "frame \(index): contact \(contactA.trackingID) changed finger")
                #expect(idsBToA[contactB.trackingID, default: contactA.trackingID] == contactA.trackingID, "frame \(index): finger \(contactB.trackingID) changed contact")
                idsAToB[contactA.trackingID] = contactB.trackingID
                idsBToA[contactB.trackingID] = contactA.trackingID
            }
        }
        #expect(idsAToB.count == 2)
    }

    @Test("a protocol A recording gives the gestures of the protocol B one")
    func sameGestures() throws {
        func gestures(_ name: String) throws -> [String] {
            var set = GestureSet()
            return try Self.frames(name).flatMap { set.update($0) }.map { "\($0)" }
        }
        let a = try gestures(Self.protocolA), b = try gestures(FixtureRecordings.ep0430)
        #expect(!a.isEmpty)
        #expect(a == b)
    }

    /// A two-contact protocol A device, in device units 0…1000.
    static func panel() -> DeviceDescription {
        var device = DeviceDescription(name: "protocol A panel")
        device.properties = [InputProperty.direct]
        device.codes[EventType.synchronization] = [0]
        device.codes[EventType.absolute] = [AbsoluteAxis.positionX, AbsoluteAxis.positionY]
        device.axes[AbsoluteAxis.positionX] = AxisInfo(minimum: 0, maximum: 1000)
        device.axes[AbsoluteAxis.positionY] = AxisInfo(minimum: 0, maximum: 1000)
        return device
    }

    /// One protocol A frame: each contact's position, then `SYN_MT_REPORT`, then `SYN_REPORT`.
    static func frame(_ contacts: [(Int32, Int32)], at time: Double) -> [InputEvent] {
        var script = EventScript(time: time)
        for (x, y) in contacts {
            script.at(x, y)
            script.contactReport()
        }
        if contacts.isEmpty { script.contactReport() }
        script.report()
        return script.events
    }

    static func phases(_ frame: TouchFrame?) -> [String] {
        (frame?.contacts ?? []).map { "\($0.phase) \($0.deviceX),\($0.deviceY)" }.sorted()
    }

    @Test("contacts listed in a different order each frame keep their identity")
    func orderDoesNotMatter() {
        var assembler = TouchFrameAssembler(description: Self.panel())
        #expect(assembler.isProtocolA)
        var last: TouchFrame?
        for event in Self.frame([(100, 100), (900, 900)], at: 0) { last = assembler.consume(event) ?? last }
        let ids = Dictionary(uniqueKeysWithValues: (last?.contacts ?? []).map { ($0.deviceX, $0.trackingID) })
        var moved: TouchFrame?
        for event in Self.frame([(890, 890), (110, 110)], at: 0.01) { moved = assembler.consume(event) ?? moved }
        #expect(Self.phases(moved) == ["moved 110,110", "moved 890,890"])
        #expect(moved?.contacts.first { $0.deviceX == 110 }?.trackingID == ids[100])
        #expect(moved?.contacts.first { $0.deviceX == 890 }?.trackingID == ids[900])
        var lifted: TouchFrame?
        for event in Self.frame([], at: 0.02) { lifted = assembler.consume(event) ?? lifted }
        #expect(Self.phases(lifted) == ["ended 110,110", "ended 890,890"])
        #expect(assembler.activeContactCount == 0)
    }

    @Test("after SYN_DROPPED the contacts are cancelled, and the next frame, which lists them all, begins them again")
    func dropped() {
        var assembler = TouchFrameAssembler(description: Self.panel())
        for event in Self.frame([(100, 100), (900, 900)], at: 0) { _ = assembler.consume(event) }
        _ = assembler.consume(InputEvent(time: 0.01, type: EventType.synchronization, code: SynchronizationCode.dropped, value: 0))
        var cancelled: TouchFrame?
        for event in Self.frame([(500, 500)], at: 0.02) { cancelled = assembler.consume(event) ?? cancelled }
        #expect(Self.phases(cancelled) == ["cancelled 100,100", "cancelled 900,900"])
        var again: TouchFrame?
        for event in Self.frame([(120, 120), (880, 880)], at: 0.03) { again = assembler.consume(event) ?? again }
        #expect(Self.phases(again) == ["began 120,120", "began 880,880"])
        #expect(assembler.droppedReports == 1)
    }

    @Test("a frame with no contact and no SYN_MT_REPORT (BTN_TOUCH 0, SYN_REPORT) ends every contact")
    func lastLiftWithoutReport() {
        var assembler = TouchFrameAssembler(description: Self.panel())
        for event in Self.frame([(100, 100), (900, 900)], at: 0) { _ = assembler.consume(event) }
        var script = EventScript(time: 0.02)
        script.key(KeyCode.touch, 0)
        script.report()
        var lifted: TouchFrame?
        for event in script.events { lifted = assembler.consume(event) ?? lifted }
        #expect(Self.phases(lifted) == ["ended 100,100", "ended 900,900"])
        #expect(assembler.activeContactCount == 0)
        // And the panel goes on: the next touch begins.
        var again: TouchFrame?
        for event in Self.frame([(500, 500)], at: 0.04) { again = assembler.consume(event) ?? again }
        #expect(Self.phases(again) == ["began 500,500"])
    }

    @Test("a recording whose panel never sends the empty SYN_MT_REPORT gives the frames and gestures of the one that does")
    func recordingWithoutEmptyReport() throws {
        let name = "whot-evemu-devices__ep0430m09__2f-drag-scroll.protocol-a-no-empty-report.evemu"
        let recording = try FixtureRecordings.recording(name)
        // The fixture ends as described: BTN_TOUCH 0 and SYN_REPORT, no SYN_MT_REPORT after the last contact.
        let tail = recording.events.suffix(2).map { [$0.type, $0.code] }
        #expect(tail == [[EventType.key, KeyCode.touch], [EventType.synchronization, SynchronizationCode.report]])
        let without = try Self.frames(name), with = try Self.frames(Self.protocolA)
        #expect(without.map(\.contacts.count) == with.map(\.contacts.count))
        #expect(without.last?.contacts.map(\.phase) == [.ended])
        var a = GestureSet(), b = GestureSet()
        #expect(without.flatMap { a.update($0) }.map { "\($0)" } == with.flatMap { b.update($0) }.map { "\($0)" })
    }

    // A frame with more contacts than libmtdev tracks is tested through motionctl, under a
    // deadline (ProtocolACommandTests): without the cap, libmtdev would hang this process.
}

