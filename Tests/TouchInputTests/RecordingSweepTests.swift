import Foundation
import Testing
import TouchModel
@testable import TouchInput

/// Sweeping folders of recordings: what motiond would accept, and what its filters would
/// lose, on the repository's real recordings and on generated ones.
@Suite("Recording sweep")
struct RecordingSweepTests {
    /// Every device read with the default filters, device units on the screen.
    static func defaults(_ path: String, _ device: DeviceDescription) -> RecordingSweep.Use { .read(OutputMapping(), ContactFilterSettings()) }

    static func scratch() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("motiond-sweep-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    static func write(_ recording: EvemuRecording, to url: URL) throws {
        try EvemuWriter.text(recording).write(to: url, atomically: true, encoding: .utf8)
    }

    /// The report of a recording's only device, or nil when it was not accepted.
    static func report(_ recording: RecordingSweep.Recording?) -> RecordingSweep.Report? {
        guard let device = recording?.devices.first, case .accepted(let report) = device.verdict else { return nil }
        return report
    }

    static func refusal(_ recording: RecordingSweep.Recording?) -> String? {
        guard let device = recording?.devices.first, case .refused(let reason) = device.verdict else { return nil }
        return reason
    }

    @Test("the repository's recordings: every one with events accepted without a lost contact, the keyboard of the libinput file refused, the two descriptions without events")
    func fixtures() throws {
        let swept = try RecordingSweep.sweep(folder: FixtureRecordings.directory.path, use: Self.defaults)
        let names = swept.map { URL(fileURLWithPath: $0.path).lastPathComponent }
        // Every recording the tests know, and the generated ones under generated/; no README, licence or script.
        for name in FixtureRecordings.withEvents + [FixtureRecordings.elan, FixtureRecordings.wacom, LibinputRecordingTests.yaml] {
            #expect(names.contains(name), "\(name) was not swept")
        }
        #expect(swept.contains { $0.path.hasSuffix("/generated/curve.clean.evemu") })
        #expect(!names.contains { $0.hasSuffix(".md") || $0.hasSuffix(".py") || $0.hasPrefix("LICENSE") }, "\(names)")
        for recording in swept {
            #expect(recording.failure == nil, "\(recording.path): \(recording.failure ?? "")")
            let name = URL(fileURLWithPath: recording.path).lastPathComponent
            for device in recording.devices {
                switch device.verdict {
                case .accepted(let report):
                    #expect(report.lost == 0 && report.cancelled == 0, "\(name)")
                    #expect(report.rawContacts > 0 && report.rawContacts == report.filteredContacts, "\(name)")
                case .withoutEvents:
                    #expect(name.hasSuffix(".desc"), "\(name)")
                case .refused(let reason):
                    #expect(name == LibinputRecordingTests.yaml && device.index == 0 && reason.contains("is not a touchscreen: it is a keyboard"), "\(name): \(reason)")
                }
            }
        }
        let taps = try #require(Self.report(swept.first { $0.path.hasSuffix(FixtureRecordings.atmelTaps) }))
        #expect(taps.rawContacts == 9 && taps.counts == ContactFilters.Counts())
        let yaml = try #require(swept.first { $0.path.hasSuffix(LibinputRecordingTests.yaml) })
        #expect(yaml.devices.map(\.index) == [0, 1])
        let elan = try #require(swept.first { $0.path.hasSuffix(FixtureRecordings.elan) }?.devices.first)
        guard case .withoutEvents(let filters) = elan.verdict else { Issue.record("\(elan.verdict)"); return }
        #expect(filters.stuckAfter == 30, "a description still shows the filters as they would apply")
    }

    @Test("generated recordings: a pen and a mouse refused as what they are, an invalid axis named, a garbage file's parse error quoted, binary refused as not text, a folder entry passed over")
    func refusals() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        var pen = DeviceDescription(name: "generated pen")
        pen.properties = [InputProperty.direct]
        pen.codes[EventType.key] = [KeyCode.toolPen, KeyCode.touch]
        pen.axes = [AbsoluteAxis.x: AxisInfo(minimum: 0, maximum: 20000, resolution: 100), AbsoluteAxis.y: AxisInfo(minimum: 0, maximum: 12000, resolution: 100)]
        pen.codes[EventType.absolute] = Set(pen.axes.keys)
        try Self.write(EvemuRecording(device: pen, events: [
            InputEvent(time: 0, type: EventType.key, code: KeyCode.toolPen, value: 1), InputEvent(time: 0, type: EventType.absolute, code: AbsoluteAxis.x, value: 100),
            InputEvent(time: 0, type: EventType.synchronization, code: SynchronizationCode.report, value: 0),
        ]), to: directory.appendingPathComponent("pen.evemu"))
        var mouse = DeviceDescription(name: "generated mouse")
        mouse.codes[EventType.key] = [KeyCode.leftButton]
        mouse.codes[EventType.relative] = [RelativeAxis.x, RelativeAxis.y]
        try Self.write(EvemuRecording(device: mouse, events: [
            InputEvent(time: 0, type: EventType.relative, code: RelativeAxis.x, value: 5),
            InputEvent(time: 0, type: EventType.synchronization, code: SynchronizationCode.report, value: 0),
        ]), to: directory.appendingPathComponent("mouse.evemu"))
        var inverted = ContactFilterTests.panel()
        inverted.name = "generated inverted panel"
        inverted.axes[AbsoluteAxis.positionY] = AxisInfo(minimum: 4095, maximum: 0)
        try Self.write(EvemuRecording(device: inverted, events: []), to: directory.appendingPathComponent("inverted.evemu"))
        try "N: panel\nE: 0.100000 0003 0035 \u{1B}[2Jboom\n".write(to: directory.appendingPathComponent("garbage.evemu"), atomically: true, encoding: .utf8)
        try Data([0xFF, 0xFE, 0x00, 0x41]).write(to: directory.appendingPathComponent("binary.yml"))
        try "not a recording".write(to: directory.appendingPathComponent("notes.txt"), atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(at: directory.appendingPathComponent(".hidden"), withIntermediateDirectories: true)
        try Self.write(EvemuRecording(device: pen, events: []), to: directory.appendingPathComponent(".hidden/pen.evemu"))

        let swept = try RecordingSweep.sweep(folder: directory.path, use: Self.defaults)
        #expect(swept.map { URL(fileURLWithPath: $0.path).lastPathComponent } == ["binary.yml", "garbage.evemu", "inverted.evemu", "mouse.evemu", "pen.evemu"])
        let byName = Dictionary(uniqueKeysWithValues: swept.map { (URL(fileURLWithPath: $0.path).lastPathComponent, $0) })
        #expect(Self.refusal(byName["pen.evemu"]) == #"the recorded device "generated pen" is not a touchscreen: it is a graphics tablet or pen (BTN_TOOL_PEN): motiond reads fingers on a touchscreen"#)
        #expect(Self.refusal(byName["mouse.evemu"])?.contains("is not a touchscreen: it is a mouse or pointing stick (relative motion, REL_X/REL_Y)") == true, "\(String(describing: Self.refusal(byName["mouse.evemu"])))")
        let axis = try #require(Self.refusal(byName["inverted.evemu"]))
        #expect(axis.hasPrefix(#"the recorded device "generated inverted panel" cannot be replayed: "#) && axis.contains("ABS_MT_POSITION_Y"), "\(axis)")
        let garbage = try #require(byName["garbage.evemu"]?.failure)
        #expect(garbage.hasPrefix("line 2: ") && garbage.contains(#""\u{1B}[2Jboom" is not a value"#), "\(garbage)")
        #expect(!garbage.unicodeScalars.contains { $0.value == 0x1B }, "the escape sequence never reaches a terminal")
        #expect(byName["binary.yml"]?.failure?.hasPrefix("not UTF-8 text") == true)
    }

    @Test("palms that land, and a drag the jump filter cuts, are contacts lost; the device's own contacts are counted before the filters")
    func losses() throws {
        let (palms, _) = ReplayFilterReportTests.palmsAfterTheLastFrame()
        let panel = ContactFilterTests.panel()
        var jump = EventScript()
        jump.slot(0); jump.track(3); jump.at(500, 500); jump.report(after: 0.008)
        jump.at(2150, 500); jump.report(after: 0.008)
        jump.at(2160, 500); jump.report(after: 0.008)
        jump.track(-1); jump.report()

        let palmReport = try #require(Self.report(RecordingSweep.sweep(text: EvemuWriter.text(palms), path: "palms.evemu") { _, _ in .read(OutputMapping(), ReplayFilterReportTests.palms) }))
        #expect(palmReport.rawContacts == 3 && palmReport.filteredContacts == 1)
        #expect(palmReport.cancelled == 0 && palmReport.lost == 2)
        #expect(palmReport.counts.palms == 2, "counted though no frame follows them")

        let jumpReport = try #require(Self.report(RecordingSweep.sweep(text: EvemuWriter.text(EvemuRecording(device: panel, events: jump.events)), path: "jump.evemu", use: Self.defaults)))
        #expect(jumpReport.rawContacts == 1 && jumpReport.filteredContacts == 2)
        #expect(jumpReport.cancelled == 1 && jumpReport.lost == 1 && jumpReport.counts.jumps == 1)
        // With the filters off nothing is lost.
        let off = try #require(Self.report(RecordingSweep.sweep(text: EvemuWriter.text(EvemuRecording(device: panel, events: jump.events)), path: "jump.evemu") { _, _ in .read(OutputMapping(), .off) }))
        #expect(off.lost == 0 && off.cancelled == 0 && off.filteredContacts == 1)
    }

    @Test("a device no [[device]] entry selects is refused with the reason given; one that is not a touchscreen says so first")
    func notSelected() throws {
        let panel = ContactFilterTests.panel()
        var mouse = DeviceDescription(name: "generated mouse")
        mouse.codes[EventType.relative] = [RelativeAxis.x, RelativeAxis.y]
        let unselected: (String, DeviceDescription) -> RecordingSweep.Use = { _, _ in .notSelected("no [[device]] entry selects it") }
        #expect(Self.refusal(RecordingSweep.sweep(text: EvemuWriter.text(EvemuRecording(device: panel, events: [])), path: "p.evemu", use: unselected)) == "no [[device]] entry selects it")
        #expect(Self.refusal(RecordingSweep.sweep(text: EvemuWriter.text(EvemuRecording(device: mouse, events: [])), path: "m.evemu", use: unselected))?.contains("not a touchscreen") == true)
        #expect(Self.refusal(RecordingSweep.sweep(text: "E: 0.000000 0000 0000 0\n", path: "events-only.evemu", use: Self.defaults))?.contains("no device header") == true)
    }

    @Test("a folder that cannot be read is an error, not an empty sweep")
    func unreadableFolder() {
        #expect(throws: RecordingSweep.FolderError.self) { try RecordingSweep.sweep(folder: "/nonexistent/recordings", use: Self.defaults) }
    }
}
