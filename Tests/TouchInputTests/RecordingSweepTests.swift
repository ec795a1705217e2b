import Foundation
import Glibc
import Synchronization
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

    // MARK: Files a sweep did not write

    /// A folder holding a real `.events` recording, with its `.desc` made by `description`
    /// (given the path it must be at): what a sweep must read, or refuse, without blocking.
    static func eventsWithDescription(_ description: (String) throws -> Void) throws -> (folder: URL, events: String, description: String) {
        let folder = try Self.scratch()
        let name = "p12tic-xorg-integration-tests__touch-dev-n4"
        let events = folder.appendingPathComponent(name + "__up-to-4f.events").path
        try FileManager.default.copyItem(atPath: FixtureRecordings.directory.appendingPathComponent(name + "__up-to-4f.events").path, toPath: events)
        let path = folder.appendingPathComponent(name + ".desc").path
        try description(path)
        return (folder, events, path)
    }

    /// Sweeps `folder` on a thread of its own, failing the test if it has not finished
    /// within `deadline` seconds; `unblock` then releases whatever it is stuck on.
    static func sweepWithin(_ deadline: Double, _ folder: URL, unblock: () -> Void) throws -> [RecordingSweep.Recording] {
        let result = Mutex<[RecordingSweep.Recording]?>(nil)
        let finished = DispatchSemaphore(value: 0)
        let thread = Thread {
            let swept = try? RecordingSweep.sweep(folder: folder.path, use: Self.defaults)
            result.withLock { $0 = swept }
            finished.signal()
        }
        thread.start()
        if finished.wait(timeout: .now() + deadline) == .timedOut {
            unblock()
            _ = finished.wait(timeout: .now() + 10)
            Issue.record("the sweep of \(folder.path) did not finish within \(deadline) s")
        }
        return try #require(result.withLock { $0 })
    }

    @Test("an .events file whose .desc is a FIFO is refused at once as a FIFO, not waited on (within 10 s)")
    func descriptionIsAFIFO() throws {
        let (folder, events, description) = try Self.eventsWithDescription { path in
            try #require(mkfifo(path, 0o600) == 0, "mkfifo: \(String(cString: strerror(errno)))")
        }
        defer { try? FileManager.default.removeItem(at: folder) }
        let swept = try Self.sweepWithin(10, folder) {
            // A reader blocked in open(2) is let go by a writer's open.
            let writer = open(description, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
        }
        let recording = try #require(swept.first { $0.path == events })
        #expect(recording.failure == "an .events file holds events alone, and its device's description \(OutsideText.quoted(description)): not a regular file: a FIFO; a recording is a file",
                "\(String(describing: recording.failure))")
        #expect(swept.count == 1, "the FIFO itself is no recording: \(swept.map(\.path))")
    }

    @Test("an .events file whose .desc links to /dev/zero is refused as a character device, without reading it (within 10 s)")
    func descriptionIsDevZero() throws {
        let (folder, events, description) = try Self.eventsWithDescription { path in
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "/dev/zero")
        }
        defer { try? FileManager.default.removeItem(at: folder) }
        let swept = try Self.sweepWithin(10, folder) {}
        let recording = try #require(swept.first { $0.path == events })
        #expect(recording.failure == "an .events file holds events alone, and its device's description \(OutsideText.quoted(description)): not a regular file: a character device; a recording is a file",
                "\(String(describing: recording.failure))")
    }

    @Test("a .desc, or a recording, one byte over the 64 MiB cap (sparse: no disk) is refused by its size before a byte is read")
    func overTheCap() throws {
        let size = RecordingSweep.maximumFileSize + 1
        func sparse(_ path: String) throws {
            let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            try #require(descriptor >= 0)
            defer { close(descriptor) }
            try #require(ftruncate(descriptor, off_t(size)) == 0, "ftruncate: \(String(cString: strerror(errno)))")
        }
        let (folder, events, description) = try Self.eventsWithDescription(sparse)
        defer { try? FileManager.default.removeItem(at: folder) }
        let big = folder.appendingPathComponent("big.evemu").path
        try sparse(big)
        #expect(RecordingSweep.maximumFileSize == 64 << 20)
        let tooLarge = "larger than 64 MiB (\(size) bytes): a recording is at most 64 MiB, and this is no recording of a touchscreen"
        let recording = RecordingSweep.sweep(file: events, use: Self.defaults)
        #expect(recording.failure == "an .events file holds events alone, and its device's description \(OutsideText.quoted(description)): \(tooLarge)",
                "\(String(describing: recording.failure))")
        var read = 0
        let whole = RecordingSweep.sweep(file: big, progress: { bytesRead, _ in read = Swift.max(read, bytesRead) }, use: Self.defaults)
        #expect(whole.failure == tooLarge, "\(String(describing: whole.failure))")
        #expect(read == 0, "\(read) bytes were read of a file refused by its size")
    }

    @Test("evemu text read in pieces of any size, 1 byte, 7, 4 KiB, is the recording read whole, on every evemu file in the repository; a recording's file read by the sweep reports its progress to the last byte")
    func streamingIsWhole() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: FixtureRecordings.directory.path)
            .filter { $0.hasSuffix(".evemu") || $0.hasSuffix(".desc") || $0.hasSuffix(".events") }.sorted()
        #expect(names.count >= 20, "\(names)")
        for name in names {
            let text = try String(contentsOf: FixtureRecordings.directory.appendingPathComponent(name), encoding: .utf8)
            let whole = try EvemuRecording(parsing: text, validatingDevice: false)
            let bytes = Array(text.utf8)
            for size in [1, 7, 4096] where size > 1 || bytes.count < 200_000 {
                var stream = EvemuStream()
                for start in stride(from: 0, to: bytes.count, by: size) {
                    try bytes[start..<Swift.min(start + size, bytes.count)].withUnsafeBufferPointer { try stream.read($0) }
                }
                let pieces = try stream.finish()
                #expect(pieces.device == whole.device && pieces.events == whole.events && pieces.formatVersion == whole.formatVersion, "\(name) in pieces of \(size)")
            }
        }
        let path = FixtureRecordings.directory.appendingPathComponent("whot-evemu-devices__wacom-dth2242-finger__up-to-10f.evemu").path
        var last = (0, 0)
        let swept = RecordingSweep.sweep(file: path, progress: { last = ($0, $1) }, use: Self.defaults)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(swept.failure == nil && last.0 == last.1 && last.0 == size, "\(last) of \(size)")
    }

    @Test("a line cut by a piece's end, a CRLF file, and a non-UTF-8 line are read as they would be whole: the line number of the bad byte is given")
    func streamingEdges() throws {
        let text = "# EVEMU 1.3\r\nN: cut panel\r\nE: 0.000001 0003 0035 100\r\nE: 0.000002 0000 0000 0000"
        var stream = EvemuStream()
        for piece in [Array(text.utf8.prefix(20)), Array(text.utf8.dropFirst(20))] {
            try piece.withUnsafeBufferPointer { try stream.read($0) }
        }
        let recording = try stream.finish()
        #expect(recording.device?.name == "cut panel" && recording.events.count == 2 && recording.events.first?.value == 100, "\(recording)")
        var bad = EvemuStream()
        #expect(throws: EvemuParseError(line: 2, message: "not UTF-8 text: an evemu recording is text")) {
            try (Array("N: panel\nN: ".utf8) + [0xFF, 0x0A]).withUnsafeBufferPointer { try bad.read($0) }
        }
    }
}
