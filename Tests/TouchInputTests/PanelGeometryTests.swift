import MotionCore
import Testing
@testable import TouchInput

/// Whether a panel's own size is believed, on made-up panels that tell each lie real
/// firmware tells, and on a plausible one whose filters must still act.
@Suite("Panel geometry")
struct PanelGeometryTests {
    /// A multitouch panel with the given axes (0…maximum), 10 slots; `touchMajor` adds
    /// `ABS_MT_TOUCH_MAJOR` 0…maximum at its resolution.
    static func panel(x: (maximum: Int32, resolution: Int32), y: (maximum: Int32, resolution: Int32),
                      fuzz: Int32 = 0, touchMajor: (maximum: Int32, resolution: Int32)? = nil) -> DeviceDescription {
        var device = DeviceDescription(name: "geometry panel")
        device.properties = [InputProperty.direct]
        device.codes[EventType.synchronization] = [0]
        var codes: Set<UInt16> = [AbsoluteAxis.slot, AbsoluteAxis.trackingID, AbsoluteAxis.positionX, AbsoluteAxis.positionY]
        device.axes[AbsoluteAxis.slot] = AxisInfo(minimum: 0, maximum: 9)
        device.axes[AbsoluteAxis.trackingID] = AxisInfo(minimum: 0, maximum: 65535)
        device.axes[AbsoluteAxis.positionX] = AxisInfo(minimum: 0, maximum: x.maximum, fuzz: fuzz, resolution: x.resolution)
        device.axes[AbsoluteAxis.positionY] = AxisInfo(minimum: 0, maximum: y.maximum, fuzz: fuzz, resolution: y.resolution)
        if let touchMajor {
            codes.insert(AbsoluteAxis.touchMajor)
            device.axes[AbsoluteAxis.touchMajor] = AxisInfo(minimum: 0, maximum: touchMajor.maximum, resolution: touchMajor.resolution)
        }
        device.codes[EventType.absolute] = codes
        return device
    }

    /// A full-HD screen, the output every panel here is mapped to.
    static let screen = OutputMapping(outputSize: Size(width: 1920, height: 1080))

    static func frames(_ script: EventScript, on device: DeviceDescription, filters: ContactFilterSettings = ContactFilterSettings(), mapping: OutputMapping = screen) throws -> [TouchFrame] {
        try RecordingReplay(EvemuRecording(device: device, events: script.events), mapping: mapping, filters: filters).frames()
    }

    /// Every contact's phases in order, by id: what a gesture sees of each finger.
    static func lives(_ frames: [TouchFrame]) -> [Int32: [TouchPhase]] {
        var lives: [Int32: [TouchPhase]] = [:]
        for frame in frames {
            for contact in frame.contacts where lives[contact.trackingID]?.last != contact.phase || contact.phase != .moved {
                lives[contact.trackingID, default: []].append(contact.phase)
            }
        }
        return lives
    }

    /// One finger dragged across `distance` units in x in 8 ms steps of `step` units, with a
    /// `touchMajor` when given.
    static func drag(from start: Int32 = 1000, step: Int32, steps: Int, touchMajor: Int32? = nil) -> EventScript {
        var script = EventScript()
        script.slot(0); script.track(1); script.at(start, 1000)
        if let touchMajor { script.abs(AbsoluteAxis.touchMajor, touchMajor) }
        script.report(after: 0.008)
        for index in 1...steps { script.at(start + step * Int32(index), 1000); script.report(after: 0.008) }
        script.track(-1); script.report()
        return script
    }

    // MARK: Lies

    @Test("a panel declaring 1 unit/mm on 0…32767 axes (a 33-metre panel) is not believed: an ordinary drag is one contact to its lift, a teleport across half the screen is still a jump, and no millimetres are published")
    func metresWidePanel() throws {
        let device = Self.panel(x: (32767, 1), y: (32767, 1))
        let resolved = ResolvedContactFilters(ContactFilterSettings(), device: device, mapping: Self.screen)
        guard case .implausible(let reason) = resolved.geometry.positions else { Issue.record("believed: \(resolved.geometry.positions)"); return }
        #expect(reason.contains("32768 × 32768 mm"), "\(reason)")
        #expect(resolved.jumpMillimetres == nil && resolved.jumpPixels != nil)
        #expect(resolved.notes.contains { $0.contains("jumps are measured in pixels") })
        // 100 steps of 300 units in 8 ms: a brisk drag of 17 px a frame across most of the screen.
        let frames = try Self.frames(Self.drag(step: 300, steps: 100), on: device)
        #expect(Self.lives(frames) == [1: [.began, .moved, .ended]], "\(Self.lives(frames).mapValues { $0.count })")
        #expect(frames.allSatisfy { $0.contacts.allSatisfy { $0.millimetres == nil } })
        // Half the screen in one 8 ms frame is no finger.
        var script = Self.drag(step: 300, steps: 5)
        script.events.removeLast(2)  // the lift
        script.at(1000 + 1500 + 16000, 1000); script.report(after: 0.008)
        script.track(-1); script.report()
        let jumped = Self.lives(try Self.frames(script, on: device))
        #expect(jumped.count == 2 && jumped[1] == [.began, .moved, .cancelled], "\(jumped)")
    }

    @Test("a 0…255 touch axis at 1 unit/mm beside positions at 10 units/mm is not believed: fingers measuring 22 to 77 units are fingers, and the panel's positions still are")
    func touchAxisTenfoldOff() throws {
        let device = Self.panel(x: (3312, 10), y: (1872, 10), touchMajor: (255, 1))
        let resolved = ResolvedContactFilters(ContactFilterSettings(), device: device, mapping: Self.screen)
        #expect(resolved.geometry.positions == .declared)
        #expect(resolved.jumpMillimetres == 50)
        guard case .implausible(let reason) = resolved.geometry.touchSize else { Issue.record("believed: \(resolved.geometry.touchSize)"); return }
        #expect(reason.contains("1 units/mm") && reason.contains("10"), "\(reason)")
        #expect(resolved.palmUnits == nil)
        #expect(resolved.notes.contains { $0.contains("palms are not detected by size") && $0.contains("MT_TOOL_PALM") })
        for major: Int32 in [22, 45, 77] {
            let lives = Self.lives(try Self.frames(Self.drag(step: 20, steps: 10, touchMajor: major), on: device))
            #expect(lives == [1: [.began, .moved, .ended]], "touch major \(major): \(lives)")
        }
    }

    @Test("ABS_MT_TOUCH_MAJOR 0…32767 at 1 unit/mm on a panel declaring no resolution: fingers of 819 to 1527 units are fingers, and the notes agree with each other")
    func touchAxisOnUnresolvedPanel() throws {
        let device = Self.panel(x: (4095, 0), y: (4095, 0), touchMajor: (32767, 1))
        let resolved = ResolvedContactFilters(ContactFilterSettings(), device: device, mapping: Self.screen)
        #expect(!resolved.geometry.positions.isTrusted && !resolved.geometry.touchSize.isTrusted)
        #expect(resolved.palmUnits == nil && resolved.jumpPixels != nil)
        #expect(!resolved.notes.contains { $0.contains("reports no resolution") }, "a note still says jumps are off for want of a resolution: \(resolved.notes)")
        for major: Int32 in [819, 1527] {
            let lives = Self.lives(try Self.frames(Self.drag(step: 20, steps: 10, touchMajor: major), on: device))
            #expect(lives == [1: [.began, .moved, .ended]], "touch major \(major): \(lives)")
        }
        // The touch axis's own resolution with positions that declare one: 32767 mm is more than the panel.
        let long = Self.panel(x: (3000, 10), y: (2000, 10), touchMajor: (32767, 10))
        guard case .implausible(let reason) = PanelGeometry(device: long, mapping: Self.screen).touchSize else { Issue.record("believed"); return }
        #expect(reason.contains("diagonal"), "\(reason)")
    }

    @Test("axes whose resolutions disagree tenfold, only one axis with a resolution, a 5-mm panel and a square panel on a 16:9 output are not believed; a 16:10 panel on 16:9, and a portrait panel turned onto it, are")
    func shapes() {
        func verdict(_ device: DeviceDescription, _ mapping: OutputMapping = Self.screen) -> PanelGeometry.Verdict {
            PanelGeometry(device: device, mapping: mapping).positions
        }
        #expect(!verdict(Self.panel(x: (3000, 10), y: (2000, 100))).isTrusted)
        #expect(!verdict(Self.panel(x: (3000, 10), y: (2000, 0))).isTrusted)
        #expect(!verdict(Self.panel(x: (50, 10), y: (30, 10))).isTrusted)
        #expect(!verdict(Self.panel(x: (3000, 10), y: (3000, 10))).isTrusted)
        #expect(verdict(Self.panel(x: (3000, 10), y: (1875, 10))) == .declared)
        #expect(verdict(Self.panel(x: (3000, 10), y: (2000, 10))) == .declared)
        let turned = OutputMapping(outputSize: Size(width: 1920, height: 1080), rotation: .clockwise90)
        #expect(verdict(Self.panel(x: (1080, 5), y: (1920, 5)), turned) == .declared)
        #expect(!verdict(Self.panel(x: (1920, 5), y: (1080, 5)), turned).isTrusted)
        // No output size (motionctl on a recording): the shape is not checked.
        #expect(verdict(Self.panel(x: (3000, 10), y: (3000, 10)), OutputMapping()) == .declared)
    }

    @Test("a hint is believed as given: a resolution, or a size, makes a lying panel measure in millimetres again, and says where it came from")
    func hints() {
        let device = Self.panel(x: (32767, 1), y: (32767, 1), touchMajor: (32767, 1))
        var settings = ContactFilterSettings()
        settings.panel = GeometryHints(resolution: .init(x: 100, y: 160), source: "quirk test")
        let hinted = ResolvedContactFilters(settings, device: device, mapping: Self.screen)
        #expect(hinted.geometry.positions == .hinted("quirk test"))
        #expect(hinted.geometry.unitsPerMillimetre == .init(x: 100, y: 160))
        #expect(hinted.jumpMillimetres == 50)
        #expect(hinted.geometry.explanation.contains { $0.contains("from quirk test") })
        settings.panel = GeometryHints(size: Size(width: 344, height: 194), touchResolution: 95)
        let sized = ResolvedContactFilters(settings, device: device, mapping: Self.screen)
        #expect(sized.geometry.unitsPerMillimetre == .init(x: 32767 / 344, y: 32767 / 194))
        #expect(sized.palmUnits.map(Int.init) == 2850, "\(String(describing: sized.palmUnits))")
    }

    @Test("a size hint is believed exactly, in fractions of a unit per millimetre: 1500 × 900 mm on 0…1200 × 0…720 axes (0.8 units/mm) measures 1500 × 900 mm, its far corner included, and a 100-mm move is 100 mm")
    func fractionalSizeHint() throws {
        let device = Self.panel(x: (1200, 0), y: (720, 0))
        var settings = ContactFilterSettings()
        settings.panel = GeometryHints(size: Size(width: 1500, height: 900))
        let resolved = ResolvedContactFilters(settings, device: device, mapping: Self.screen)
        #expect(resolved.geometry.positions == .hinted("the configuration"))
        let size = try #require(resolved.geometry.size)
        #expect(Swift.abs(size.width - 1500) < 1e-9 && Swift.abs(size.height - 900) < 1e-9, "\(size)")
        #expect(resolved.geometry.explanation.first == "size 1500 × 900 mm from the configuration", "\(resolved.geometry.explanation)")
        let mapper = CoordinateMapper(geometry: resolved.geometry, mapping: Self.screen)
        let corner = try #require(mapper.millimetres(x: 1200, y: 720))
        #expect(Swift.abs(corner.x - 1500) < 1e-9 && Swift.abs(corner.y - 900) < 1e-9, "\(corner)")
        // 80 units at 0.8 units/mm: 100 mm, which is past jump_mm's 50.
        let from = try #require(mapper.millimetres(x: 100, y: 100)), to = try #require(mapper.millimetres(x: 180, y: 100))
        #expect(Swift.abs(from.distance(to: to) - 100) < 1e-9)
        let frames = try Self.frames(Self.drag(from: 100, step: 80, steps: 1), on: device, filters: settings)
        #expect(frames.flatMap(\.contacts).contains { $0.phase == .cancelled }, "a 100-mm move within a frame is a jump: \(frames)")
    }

    @Test("a resolution hint that makes the panel no touchscreen's size (100000 units/mm on 0…4095: 0.04 mm) is not believed, and says why; one within the sides is")
    func implausibleResolutionHint() {
        let device = Self.panel(x: (4095, 0), y: (4095, 0))
        var settings = ContactFilterSettings()
        settings.panel = GeometryHints(resolution: .init(x: 100_000, y: 50_000), source: "quirk tiny")
        let tiny = ResolvedContactFilters(settings, device: device, mapping: OutputMapping())
        #expect(tiny.geometry.positions == .implausible("the resolution from quirk tiny makes it 0.041 × 0.0819 mm, not a touchscreen's size"), "\(tiny.geometry.positions)")
        #expect(tiny.geometry.size == nil && tiny.geometry.unitsPerMillimetre == nil && tiny.jumpPixels != nil)
        #expect(tiny.geometry.explanation.first?.hasPrefix("the size from quirk tiny is not believed: the resolution from quirk tiny makes it") == true, "\(tiny.geometry.explanation)")
        settings.panel = GeometryHints(resolution: .init(x: 0.82, y: 4095.0 / 20), source: "quirk edge")
        let edge = ResolvedContactFilters(settings, device: device, mapping: OutputMapping())
        #expect(edge.geometry.positions == .hinted("quirk edge"), "\(edge.geometry.positions)")
        #expect(Swift.abs((edge.geometry.size?.height ?? 0) - 20) < 1e-9)
    }

    // MARK: A panel that tells the truth

    @Test("on a plausible 300 × 200 mm panel the defaults still act: a contact resting 30 s is stuck, one growing past 30 mm is a palm, 150 mm in 8 ms is a jump, jitter within the fuzz is held")
    func plausiblePanel() throws {
        let device = Self.panel(x: (2999, 10), y: (1999, 10), fuzz: 4, touchMajor: (2000, 10))
        let resolved = ResolvedContactFilters(ContactFilterSettings(), device: device, mapping: Self.screen)
        #expect(resolved.geometry.positions == .declared && resolved.geometry.touchSize == .declared)
        #expect(resolved.jumpMillimetres == 50 && resolved.palmUnits == 300 && resolved.hysteresisMargin != nil)

        var stuck = EventScript()
        stuck.slot(0); stuck.track(1); stuck.at(1000, 1000); stuck.abs(AbsoluteAxis.touchMajor, 80); stuck.report(after: 40)
        stuck.track(-1); stuck.report()
        #expect(Self.lives(try Self.frames(stuck, on: device)) == [1: [.began, .cancelled]])

        var palm = EventScript()
        palm.slot(0); palm.track(1); palm.at(1000, 1000); palm.abs(AbsoluteAxis.touchMajor, 80); palm.report(after: 0.2)
        palm.abs(AbsoluteAxis.touchMajor, 450); palm.report(after: 0.008)
        palm.track(-1); palm.report()
        #expect(Self.lives(try Self.frames(palm, on: device)) == [1: [.began, .cancelled]])

        var jump = Self.drag(step: 20, steps: 5, touchMajor: 80)
        jump.events.removeLast(2)
        jump.at(1100 + 1500, 1000); jump.report(after: 0.008)
        jump.track(-1); jump.report()
        let jumped = Self.lives(try Self.frames(jump, on: device))
        #expect(jumped.count == 2 && jumped[1] == [.began, .moved, .cancelled], "\(jumped)")

        var jitter = EventScript()
        jitter.slot(0); jitter.track(1); jitter.at(1000, 1000); jitter.abs(AbsoluteAxis.touchMajor, 80); jitter.report(after: 0.008)
        for step in 0..<10 { jitter.at(1000 + Int32(step % 2), 1000); jitter.report(after: 0.008) }
        jitter.track(-1); jitter.report()
        let shown = try Self.frames(jitter, on: device).flatMap(\.contacts)
        #expect(shown.allSatisfy { $0.deviceX == 1000 }, "\(shown.map(\.deviceX))")
    }

    // MARK: The palm verdict

    /// The frames and the palm count of `script` on `device`, read event by event.
    static func assembled(_ script: EventScript, on device: DeviceDescription) -> (frames: [TouchFrame], palms: Int) {
        var assembler = TouchFrameAssembler(description: device, mapping: screen)
        var frames: [TouchFrame] = []
        for event in script.events {
            if let frame = assembler.consume(event) { frames.append(frame) }
        }
        return (frames, assembler.filterCounts.palms)
    }

    @Test("a contact palm-sized in its first samples only is a finger, begun where it is when it shrinks; one palm-sized for 0.1 s is a palm counted once and never reported, even when it shrinks later as a lifting palm does; one lifting within 0.1 s is a palm")
    func palmVerdictWindow() throws {
        let device = Self.panel(x: (2999, 10), y: (1999, 10), touchMajor: (2000, 10))
        // 45 mm in the first two samples (16 ms), then 3 mm: a finger whose firmware measured its landing large.
        var spike = EventScript()
        spike.slot(0); spike.track(1); spike.at(1000, 1000); spike.abs(AbsoluteAxis.touchMajor, 450); spike.report(after: 0.008)
        spike.at(1005, 1000); spike.report(after: 0.008)
        spike.at(1010, 1000); spike.abs(AbsoluteAxis.touchMajor, 30); spike.report(after: 0.008)
        for step in 1...10 { spike.at(1010 + Int32(step) * 10, 1000); spike.report(after: 0.008) }
        spike.track(-1); spike.report()
        let finger = Self.assembled(spike, on: device)
        #expect(Self.lives(finger.frames) == [1: [.began, .moved, .ended]])
        #expect(finger.frames.first?.contacts.first?.deviceX == 1010)
        #expect(finger.palms == 0)

        // 45 mm for 0.2 s, then 3 mm for 0.2 s before it lifts: a palm throughout.
        var palm = EventScript()
        palm.slot(0); palm.track(1); palm.at(1000, 1000); palm.abs(AbsoluteAxis.touchMajor, 450); palm.report(after: 0.008)
        for step in 1...25 { palm.at(1000 + Int32(step), 1000); palm.report(after: 0.008) }
        palm.abs(AbsoluteAxis.touchMajor, 30)
        for step in 1...25 { palm.at(1030 + Int32(step), 1000); palm.report(after: 0.008) }
        palm.track(-1); palm.report()
        let resting = Self.assembled(palm, on: device)
        #expect(resting.frames.isEmpty, "\(resting.frames.map { $0.contacts.map(\.phase) })")
        #expect(resting.palms == 1)

        // Lands and lifts palm-sized within 50 ms.
        var brief = EventScript()
        brief.slot(0); brief.track(1); brief.at(1000, 1000); brief.abs(AbsoluteAxis.touchMajor, 450); brief.report(after: 0.05)
        brief.track(-1); brief.report()
        let dab = Self.assembled(brief, on: device)
        #expect(dab.frames.isEmpty && dab.palms == 1)
    }
}
