import MotionCore
import Testing
@testable import TouchInput

/// The contact filters on panels made up for each test, with their size, resolution and
/// fuzz stated, and on the real recordings in the repository.
@Suite("Contact filters")
struct ContactFilterTests {
    /// A multitouch panel, 0…4095 on both axes at `resolution` units/mm (409.6 mm square at
    /// 10/mm), 10 slots, with `fuzz` on both axes and, when `majorMaximum` is given,
    /// `ABS_MT_TOUCH_MAJOR` 0…majorMaximum with no resolution of its own.
    static func panel(resolution: Int32 = 10, fuzz: Int32 = 0, majorMaximum: Int32? = nil) -> DeviceDescription {
        var device = DeviceDescription(name: "filter panel")
        device.properties = [InputProperty.direct]
        device.codes[EventType.synchronization] = [0]
        var codes: Set<UInt16> = [AbsoluteAxis.slot, AbsoluteAxis.trackingID, AbsoluteAxis.positionX, AbsoluteAxis.positionY]
        device.axes[AbsoluteAxis.slot] = AxisInfo(minimum: 0, maximum: 9)
        device.axes[AbsoluteAxis.trackingID] = AxisInfo(minimum: 0, maximum: 65535)
        device.axes[AbsoluteAxis.positionX] = AxisInfo(value: 0, minimum: 0, maximum: 4095, fuzz: fuzz, flat: 0, resolution: resolution)
        device.axes[AbsoluteAxis.positionY] = AxisInfo(value: 0, minimum: 0, maximum: 4095, fuzz: fuzz, flat: 0, resolution: resolution)
        if let majorMaximum {
            codes.insert(AbsoluteAxis.touchMajor)
            device.axes[AbsoluteAxis.touchMajor] = AxisInfo(minimum: 0, maximum: majorMaximum)
        }
        device.codes[EventType.absolute] = codes
        return device
    }

    /// Plays `script` through an assembler with `filters`, cancelling stuck contacts between
    /// events as a replay does; returns every frame.
    static func frames(_ script: EventScript, on device: DeviceDescription, filters: ContactFilterSettings = ContactFilterSettings()) throws -> [TouchFrame] {
        try RecordingReplay(EvemuRecording(device: device, events: script.events), filters: filters).frames()
    }

    static func phases(_ frame: TouchFrame) -> [String] {
        frame.contacts.map { "\($0.trackingID) \($0.phase)" }
    }

    // MARK: Stuck contacts

    @Test("a contact within the tap slop for stuck_after is cancelled at that moment, even with no event then, and ignored until it lifts")
    func stuckContact() throws {
        var script = EventScript()
        script.slot(0); script.track(7); script.at(1000, 1000); script.report(after: 1)
        // Ten seconds of 1-unit (0.1 mm) wobble, then silence until 45 s: a finger that does not move sends nothing.
        for step in 0..<10 { script.at(1000 + Int32(step % 2), 1000); script.report(after: 1) }
        script.time = 45
        script.at(1005, 1000); script.report()  // still there, still ignored
        script.track(-1); script.report()  // and its lift says nothing
        let frames = try Self.frames(script, on: Self.panel())
        let cancel = try #require(frames.first { $0.contacts.contains { $0.phase == .cancelled } })
        #expect(cancel.time == 30)
        #expect(Self.phases(cancel) == ["7 cancelled"])
        #expect(frames.filter { $0.time > 30 }.isEmpty)
        // With stuck_after = 0 the same contact lives to its lift.
        let kept = try Self.frames(script, on: Self.panel(), filters: ContactFilterSettings(stuckAfter: 0))
        #expect(kept.last.map(Self.phases) == ["7 ended"])
        #expect(!kept.contains { $0.contacts.contains { $0.phase == .cancelled } })
    }

    @Test("a finger that drags slowly, or rests and moves on before stuck_after, is never cancelled")
    func slowFingerIsNotStuck() throws {
        var script = EventScript()
        script.slot(0); script.track(1); script.at(100, 100); script.report(after: 0.5)
        // 60 s, moving 5 mm every 20 s (past the 3 mm slop) and resting in between.
        for step in 1...3 { script.time = Double(step) * 20; script.at(100 + Int32(step) * 50, 100); script.report() }
        script.track(-1); script.report()
        let frames = try Self.frames(script, on: Self.panel())
        #expect(frames.last.map(Self.phases) == ["1 ended"])
        #expect(!frames.contains { $0.contacts.contains { $0.phase == .cancelled } })
    }

    @Test("with a stuck contact ignored, a second finger that lands makes a one-finger drag, not a two-finger one")
    func stuckContactLeavesOtherFingersAlone() throws {
        var script = EventScript()
        script.slot(0); script.track(1); script.at(100, 100); script.report()
        script.time = 60
        script.slot(1); script.track(2); script.at(2000, 2000); script.report(after: 0.01)
        for step in 1...20 { script.at(2000 + Int32(step) * 40, 2000); script.report(after: 0.01) }
        script.track(-1); script.report()
        var gestures = GestureSet()
        let drags = try Self.frames(script, on: Self.panel()).flatMap { gestures.update($0) }.compactMap { event -> DragEvent? in
            if case .drag(let drag) = event { return drag }
            return nil
        }
        #expect(drags.contains { $0.state == .began })
        #expect(drags.allSatisfy { $0.touches == 1 }, "\(drags.map(\.touches))")
    }

    // MARK: Palms

    @Test("on a panel reporting touch major at 10 units/mm, a contact growing past 30 mm is cancelled; one landing as a palm never begins")
    func palms() throws {
        let panel = Self.panel(majorMaximum: 1000)
        var script = EventScript()
        script.slot(0); script.track(1); script.at(500, 500); script.abs(AbsoluteAxis.touchMajor, 80); script.report()  // 8 mm: a finger
        script.at(520, 500); script.abs(AbsoluteAxis.touchMajor, 450); script.report()  // 45 mm: a palm
        script.at(900, 500); script.report()
        script.track(-1); script.report()
        script.slot(1); script.track(2); script.at(2000, 2000); script.abs(AbsoluteAxis.touchMajor, 500); script.report()
        script.at(2600, 2000); script.report()
        script.track(-1); script.report()
        let frames = try Self.frames(script, on: panel)
        #expect(frames.map(Self.phases) == [["1 began"], ["1 cancelled"]])
        var gestures = GestureSet()
        #expect(!frames.flatMap { gestures.update($0) }.contains { if case .drag(let d) = $0 { d.state == .ended } else { false } })
        // palm_size in units works without a resolution; with neither, palms are not detected by size.
        let unresolved = Self.panel(resolution: 0, majorMaximum: 1000)
        #expect(try Self.frames(script, on: unresolved, filters: ContactFilterSettings(palmSize: .units(300))).map(Self.phases) == [["1 began"], ["1 cancelled"]])
        let filters = ResolvedContactFilters(ContactFilterSettings(), xAxis: unresolved.axes[AbsoluteAxis.positionX]!, yAxis: unresolved.axes[AbsoluteAxis.positionY]!, touchMajor: unresolved.axes[AbsoluteAxis.touchMajor])
        #expect(filters.palmUnits == nil)
        #expect(filters.notes.contains { $0.contains("palms are not detected by size") && $0.contains("not believed") })
    }

    // MARK: Jumps

    @Test("a contact that crosses 150 mm within an 8 ms frame is cancelled and begins again where it landed; a fast swipe is not a jump")
    func jumps() throws {
        var script = EventScript()
        // 15 mm of drag at 0.6 m/s (enough to begin a drag), then 150 mm in 8 ms.
        script.slot(0); script.track(3); script.at(500, 500); script.report(after: 0.008)
        for step in 1...3 { script.at(500 + Int32(step) * 50, 500); script.report(after: 0.008) }
        script.at(2150, 500); script.report(after: 0.008)
        script.at(2160, 500); script.report(after: 0.008)
        script.track(-1); script.report()
        let frames = try Self.frames(script, on: Self.panel())
        let jump = try #require(frames.first { $0.contacts.count == 2 })
        #expect(jump.contacts.map(\.phase) == [.cancelled, .began])
        #expect(jump.contacts[0].deviceX == 650 && jump.contacts[0].trackingID == 3)
        #expect(jump.contacts[1].deviceX == 2150 && jump.contacts[1].trackingID != 3)
        #expect(frames.last?.contacts.map(\.phase) == [.ended])
        #expect(frames.last?.contacts.first?.trackingID == jump.contacts[1].trackingID)
        // The drag under the first contact ends cancelled, with no release velocity to fling with.
        var gestures = GestureSet()
        let states = frames.flatMap { gestures.update($0) }.compactMap { event -> RecognitionState? in
            if case .drag(let drag) = event { return drag.state }
            return nil
        }
        #expect(states.contains(.began))
        #expect(states.contains(.cancelled))
        #expect(!states.contains(.ended))

        // A 150 mm swipe in 12 mm steps every 8 ms (1.5 m/s) is one contact throughout.
        var swipe = EventScript()
        swipe.slot(0); swipe.track(4); swipe.at(500, 500); swipe.report(after: 0.008)
        for step in 1...12 { swipe.at(500 + Int32(step) * 120, 500); swipe.report(after: 0.008) }
        swipe.track(-1); swipe.report()
        #expect(try Self.frames(swipe, on: Self.panel()).allSatisfy { $0.contacts.allSatisfy { $0.trackingID == 4 && $0.phase != .cancelled } })
        // Nor is the same 150 mm over a 50 ms gap (a panel that paused): beyond 30 ms it may be a finger.
        var pause = EventScript()
        pause.slot(0); pause.track(5); pause.at(500, 500); pause.report(after: 0.05)
        pause.at(2000, 500); pause.report()
        #expect(try Self.frames(pause, on: Self.panel()).allSatisfy { $0.contacts.allSatisfy { $0.trackingID == 5 } })
    }

    @Test("on a 20 Hz panel (frames 50 ms apart), a contact that crosses 200 mm in one frame is a jump; a fling at 1.2 m/s (60 mm a frame) is not")
    func jumpsOnASlowPanel() throws {
        // Four frames of a slow drag (5 mm a frame) tell the filters the panel's pace.
        func slowStart(_ script: inout EventScript, id: Int32) {
            script.slot(0); script.track(id); script.at(500, 500); script.report(after: 0.05)
            for step in 1...4 { script.at(500 + Int32(step) * 50, 500); script.report(after: 0.05) }
        }
        var jump = EventScript()
        slowStart(&jump, id: 3)
        jump.at(2700, 500); jump.report(after: 0.05)
        jump.track(-1); jump.report()
        let frames = try Self.frames(jump, on: Self.panel())
        let jumped = try #require(frames.first { $0.contacts.count == 2 }, "\(frames.map(Self.phases))")
        #expect(jumped.contacts.map(\.phase) == [.cancelled, .began])
        #expect(jumped.contacts[0].deviceX == 700 && jumped.contacts[1].deviceX == 2700)

        var fling = EventScript()
        slowStart(&fling, id: 4)
        for step in 1...5 { fling.at(700 + Int32(step) * 600, 500); fling.report(after: 0.05) }
        fling.track(-1); fling.report()
        let flung = try Self.frames(fling, on: Self.panel())
        #expect(flung.allSatisfy { $0.contacts.allSatisfy { $0.trackingID == 4 && $0.phase != .cancelled } }, "\(flung.map(Self.phases))")
        #expect(flung.last?.contacts.first?.deviceX == 3700)
    }

    @Test("the frame interval is the median of the latest gaps between frames: a dropped frame or a pause between touches does not move it")
    func frameInterval() {
        var interval = FrameInterval()
        interval.frame(at: 0)
        interval.frame(at: 0.01)
        interval.frame(at: 0.02)
        #expect(interval.median == nil, "two gaps are not yet a pace")
        interval.frame(at: 0.05)  // a frame dropped
        #expect(abs((interval.median ?? 0) - 0.01) < 1e-9)
        interval.frame(at: 5)  // the next touch
        interval.frame(at: 5)  // a frame at the same time
        #expect(abs((interval.median ?? 0) - 0.01) < 1e-9)
        var time = 5.0
        for _ in 0..<FrameInterval.kept {
            time += 0.05
            interval.frame(at: time)
        }
        #expect(abs((interval.median ?? 0) - 0.05) < 1e-9, "a new pace replaces the old once the ring has turned")
        #expect(abs(ContactFilterSettings.jumpWindow(frameInterval: interval.median) - 0.15) < 1e-9)
        #expect(ContactFilterSettings.jumpWindow(frameInterval: 0.004) == ContactFilterSettings.jumpWindow)
        #expect(ContactFilterSettings.jumpWindow(frameInterval: nil) == ContactFilterSettings.jumpWindow)
    }

    // MARK: Exchanged positions

    /// Fingers on `Self.panel()`, each a function of the frame number giving its position,
    /// reported every 8 ms for `frames` frames and then lifted together; finger `f` is in slot
    /// `slots(n)[f]` in frame `n` (a panel that exchanges positions moves fingers between
    /// slots). Each slot keeps its firmware id, 10 + the slot, throughout.
    static func fingers(_ paths: [(Int) -> (Int32, Int32)], frames: Int, slots: (Int) -> [Int]) -> EventScript {
        var script = EventScript()
        for frame in 0..<frames {
            let inSlot = slots(frame)
            for (finger, path) in paths.enumerated() {
                let (x, y) = path(frame)
                script.slot(Int32(inSlot[finger]))
                if frame == 0 { script.track(10 + Int32(inSlot[finger])) }
                script.at(x, y)
            }
            script.report(after: 0.008)
        }
        for slot in paths.indices { script.slot(Int32(slot)); script.track(-1) }
        script.report()
        return script
    }

    /// Each id's contact in a frame.
    static func byID(_ frame: TouchFrame) -> [Int32: TouchContact] {
        Dictionary(uniqueKeysWithValues: frame.contacts.map { ($0.trackingID, $0) })
    }

    /// A contact's place in device units, "x,y", to compare with a finger's.
    static func place(_ contact: TouchContact?) -> String? { contact.map { "\($0.deviceX),\($0.deviceY)" } }
    static func place(_ point: (Int32, Int32)) -> String { "\(point.0),\(point.1)" }

    /// A contact's slot, phase and place: "slot 1 moved 580,500".
    static func state(_ contact: TouchContact?) -> String? { contact.map { "slot \($0.slot) \($0.phase) \($0.deviceX),\($0.deviceY)" } }

    @Test("two contacts 250 mm apart whose positions the panel exchanges within one frame keep their ids, follow their fingers and are never cancelled")
    func exchangedPair() throws {
        let a = { (n: Int) -> (Int32, Int32) in (500 + Int32(n) * 10, 500) }
        let b = { (n: Int) -> (Int32, Int32) in (3000 - Int32(n) * 10, 3000) }
        // From frame 8 on, slot 0 reports b's finger and slot 1 a's.
        let script = Self.fingers([a, b], frames: 16) { $0 < 8 ? [0, 1] : [1, 0] }
        let replayed = try RecordingReplay(EvemuRecording(device: Self.panel(), events: script.events)).replayedFrames()
        let frames = replayed.compactMap(\.frame)
        #expect(!frames.contains { $0.contacts.contains { $0.phase == .cancelled } }, "\(frames.map(Self.phases))")
        #expect(Set(frames.flatMap { $0.contacts.map(\.trackingID) }) == [10, 11])
        for (n, frame) in frames.dropLast().enumerated() {
            let contacts = Self.byID(frame)
            #expect(Self.place(contacts[10]) == Self.place(a(n)), "frame \(n): \(Self.phases(frame))")
            #expect(Self.place(contacts[11]) == Self.place(b(n)), "frame \(n): \(Self.phases(frame))")
        }
        let exchange = Self.byID(frames[8])
        #expect(Self.state(exchange[10]) == "slot 1 moved 580,500")
        #expect(Self.state(exchange[11]) == "slot 0 moved 2920,3000")
        #expect(frames.last.map(Self.phases) == ["11 ended", "10 ended"])
        let counts = try #require(replayed.last?.counts)
        #expect(counts.repaired == 2 && counts.jumps == 0)
        let notices = replayed.flatMap(\.notices)
        #expect(notices.map(\.kind) == [.repaired(inSlotOf: 11), .repaired(inSlotOf: 10)])
        #expect(notices.map(\.trackingID) == [10, 11])
    }

    @Test("three contacts whose positions the panel rotates (slot 0 reports 1's finger, 1 reports 2's, 2 reports 0's) are re-paired")
    func rotatedThree() throws {
        let paths = [
            { (n: Int) -> (Int32, Int32) in (500 + Int32(n) * 10, 500) },
            { (n: Int) -> (Int32, Int32) in (3000, 500 + Int32(n) * 10) },
            { (n: Int) -> (Int32, Int32) in (1700 - Int32(n) * 10, 3000) },
        ]
        // Finger f is in slot slots[f]: finger 1 in slot 0, finger 2 in slot 1, finger 0 in slot 2.
        let script = Self.fingers(paths, frames: 16) { $0 < 8 ? [0, 1, 2] : [2, 0, 1] }
        let replayed = try RecordingReplay(EvemuRecording(device: Self.panel(), events: script.events)).replayedFrames()
        let frames = replayed.compactMap(\.frame)
        #expect(!frames.contains { $0.contacts.contains { $0.phase == .cancelled } }, "\(frames.map(Self.phases))")
        for (n, frame) in frames.dropLast().enumerated() {
            let contacts = Self.byID(frame)
            for (finger, path) in paths.enumerated() {
                #expect(Self.place(contacts[10 + Int32(finger)]) == Self.place(path(n)), "frame \(n): \(Self.phases(frame))")
            }
        }
        #expect(Self.byID(frames[8]).mapValues(\.slot) == [10: 2, 11: 0, 12: 1])
        #expect(replayed.last?.counts.repaired == 3)
    }

    @Test("of the pairings without a jump, the nearest is taken: in a rotated three, two fingers 30 mm apart keep their own ids, not each other's")
    func nearestPairing() throws {
        let paths = [
            { (n: Int) -> (Int32, Int32) in (500 + Int32(n) * 5, 500) },
            { (n: Int) -> (Int32, Int32) in (800 + Int32(n) * 5, 500) },
            { (n: Int) -> (Int32, Int32) in (3000, 3000 - Int32(n) * 5) },
        ]
        let script = Self.fingers(paths, frames: 12) { $0 < 6 ? [0, 1, 2] : [2, 0, 1] }
        let frames = try Self.frames(script, on: Self.panel())
        #expect(!frames.contains { $0.contacts.contains { $0.phase == .cancelled } }, "\(frames.map(Self.phases))")
        for (n, frame) in frames.dropLast().enumerated() {
            let contacts = Self.byID(frame)
            for (finger, path) in paths.enumerated() {
                #expect(Self.place(contacts[10 + Int32(finger)]) == Self.place(path(n)), "frame \(n): \(Self.phases(frame))")
            }
        }
    }

    @Test("a contact that lifts in the frame is paired with nothing: the contact that jumps to where it was is cancelled, and it ends under its own id")
    func liftIsNoCandidate() throws {
        var script = EventScript()
        script.slot(0); script.track(10); script.at(500, 500)
        script.slot(1); script.track(11); script.at(3000, 3000); script.report(after: 0.008)
        // Slot 1 reports a's place and lifts there; slot 0 reports b's place.
        script.slot(0); script.at(3000, 3000)
        script.slot(1); script.at(500, 500); script.track(-1); script.report(after: 0.008)
        script.slot(0); script.track(-1); script.report()
        let frames = try Self.frames(script, on: Self.panel())
        let phases = Self.phases(frames[1])
        #expect(phases.count == 3 && phases[0] == "11 ended" && phases[1] == "10 cancelled" && phases[2].hasSuffix("began"), "\(phases)")
    }

    @Test("a pair exchanged in the same frame as a third contact truly jumps: only the third is cancelled and begun again")
    func exchangeBesideAJump() throws {
        let a = { (n: Int) -> (Int32, Int32) in (500 + Int32(n) * 10, 500) }
        let b = { (n: Int) -> (Int32, Int32) in (3000 - Int32(n) * 10, 500) }
        // 200 mm in one frame, landing more than 50 mm from everything.
        let c = { (n: Int) -> (Int32, Int32) in n < 8 ? (3500, 3500) : (3500, 1500) }
        let script = Self.fingers([a, b, c], frames: 16) { $0 < 8 ? [0, 1, 2] : [1, 0, 2] }
        let replayed = try RecordingReplay(EvemuRecording(device: Self.panel(), events: script.events)).replayedFrames()
        let frames = replayed.compactMap(\.frame)
        let jump = frames[8]
        #expect(jump.contacts.filter { $0.phase == .cancelled }.map(\.trackingID) == [12], "\(Self.phases(jump))")
        let begun = try #require(jump.contacts.first { $0.phase == .began })
        #expect(begun.trackingID != 12 && begun.deviceX == 3500 && begun.deviceY == 1500)
        let kept = Self.byID(jump)
        #expect(Self.state(kept[10]) == "slot 1 moved 580,500")
        #expect(Self.state(kept[11]) == "slot 0 moved 2920,500")
        #expect(frames.filter { $0.contacts.contains { $0.phase == .cancelled } }.count == 1)
        let counts = try #require(replayed.last?.counts)
        #expect(counts.repaired == 2 && counts.jumps == 1)
    }

    @Test("a contact that jumps alone, beside others, is still cancelled and begun again, even landing next to another finger")
    func jumpAloneBesideOthers() throws {
        // b rests; a jumps 200 mm; c jumps from far away onto 0.5 mm beside where b was, as b moves 6 mm:
        // pairing b's contact with c's new position would be nearer, but explains no more jumps.
        let a = { (n: Int) -> (Int32, Int32) in n < 8 ? (500, 3500) : (2500, 3500) }
        let b = { (n: Int) -> (Int32, Int32) in n < 8 ? (500, 500) : (560, 500) }
        let c = { (n: Int) -> (Int32, Int32) in n < 8 ? (3500, 1500) : (505, 500) }
        let script = Self.fingers([a, b, c], frames: 16) { _ in [0, 1, 2] }
        let replayed = try RecordingReplay(EvemuRecording(device: Self.panel(), events: script.events)).replayedFrames()
        let jump = try #require(replayed.compactMap(\.frame).dropFirst(8).first)
        #expect(jump.contacts.filter { $0.phase == .cancelled }.map(\.trackingID) == [10, 12], "\(Self.phases(jump))")
        #expect(jump.contacts.filter { $0.phase == .began }.map(Self.place) == ["2500,3500", "505,500"])
        #expect(Self.state(Self.byID(jump)[11]) == "slot 1 moved 560,500")
        let counts = try #require(replayed.last?.counts)
        #expect(counts.repaired == 0 && counts.jumps == 2)
    }

    @Test("in a row of fingers 20 mm apart, each within a jump of the next, an exchange is re-paired among nine, and two among ten: the group is the jumped contact and its nearest, not the chain")
    func exchangeInARow() throws {
        /// A row of `count` fingers 20 mm apart dragging down; from frame 6 on, the slots of
        /// each pair in `exchanged` report each other's finger.
        func run(fingers count: Int, exchanged: [(Int, Int)]) throws -> (frames: [TouchFrame], counts: ContactFilters.Counts) {
            let paths = (0..<count).map { finger in { (n: Int) -> (Int32, Int32) in (200 + Int32(finger) * 200, 1000 + Int32(n) * 5) } }
            let script = Self.fingers(paths, frames: 12) { n in
                var slots = Array(0..<count)
                if n >= 6 { for (a, b) in exchanged { slots.swapAt(a, b) } }
                return slots
            }
            let replayed = try RecordingReplay(EvemuRecording(device: Self.panel(), events: script.events)).replayedFrames()
            let frames = replayed.compactMap(\.frame)
            for (n, frame) in frames.dropLast().enumerated() {
                let contacts = Self.byID(frame)
                for (finger, path) in paths.enumerated() {
                    #expect(Self.place(contacts[10 + Int32(finger)]) == Self.place(path(n)), "\(count) fingers, frame \(n): \(Self.phases(frame))")
                }
            }
            return (frames, try #require(replayed.last?.counts))
        }
        // Fingers 2 and 6, 80 mm apart: each jumps under its slot's identity.
        let nine = try run(fingers: 9, exchanged: [(2, 6)])
        #expect(!nine.frames.contains { $0.contacts.contains { $0.phase == .cancelled } }, "\(nine.frames.map(Self.phases))")
        #expect(nine.counts.jumps == 0 && nine.counts.repaired == 2, "\(nine.counts)")
        // The ends, 180 mm apart, and two in the middle: two groups in one frame.
        let ten = try run(fingers: 10, exchanged: [(0, 9), (3, 6)])
        #expect(!ten.frames.contains { $0.contacts.contains { $0.phase == .cancelled } }, "\(ten.frames.map(Self.phases))")
        #expect(ten.counts.jumps == 0 && ten.counts.repaired == 4, "\(ten.counts)")
    }

    @Test("a resting finger re-paired with its contact keeps its stuck deadline, and a moving one its hysteresis")
    func exchangeKeepsFilterState() throws {
        // With fuzz 8 (a 4-unit margin): a rests with ±3 units of jitter; b drags 20 units a frame.
        let a = { (n: Int) -> (Int32, Int32) in (500 + Int32(n % 2) * 3, 500) }
        let b = { (n: Int) -> (Int32, Int32) in (3000 - Int32(n) * 20, 3000) }
        let script = Self.fingers([a, b], frames: 60) { $0 < 20 ? [0, 1] : [1, 0] }
        let filters = ContactFilterSettings(stuckAfter: 0.3)
        let frames = try Self.frames(script, on: Self.panel(fuzz: 8), filters: filters)
        // a landed at 0 and never left the stuck slop: cancelled at 0.3 s, slot exchanged or not.
        let cancel = try #require(frames.first { $0.contacts.contains { $0.phase == .cancelled } })
        #expect(Self.phases(cancel).contains("10 cancelled") && Swift.abs(cancel.time - 0.3) < 1e-9, "at \(cancel.time): \(Self.phases(cancel))")
        // a's shown position held at 500 throughout its jitter; b's lags its finger by at most the margin.
        for (n, frame) in frames.prefix(37).enumerated() {
            let contacts = Self.byID(frame)
            #expect(contacts[10]?.deviceX == 500, "frame \(n): \(Self.phases(frame))")
            if let shown = contacts[11]?.deviceX { #expect(shown - b(n).0 >= 0 && shown - b(n).0 <= 4, "frame \(n): \(shown) for \(b(n).0)") }
        }
    }

    @Test("a generated recording of an infrared frame exchanging two dragging fingers' positions, and back, is one two-finger drag that ends, not cancelled")
    func exchangingRecording() throws {
        let recording = try FixtureRecordings.recording(FixtureRecordings.exchangingPan)
        let replayed = try RecordingReplay(recording).replayedFrames()
        var gestures = GestureSet()
        let drags = replayed.compactMap(\.frame).flatMap { gestures.update($0) }.compactMap { event -> DragEvent? in
            if case .drag(let drag) = event { return drag }
            return nil
        }
        #expect(drags.filter { $0.state == .began }.count == 1)
        #expect(!drags.contains { $0.state == .cancelled })
        let last = try #require(drags.last)
        #expect(last.state == .ended && last.touches == 2)
        // 250 mm down at 10 units/mm, on the default mapping (device units as pixels): 2500.
        #expect(Swift.abs(last.translation.y - 2500) < 1 && Swift.abs(last.translation.x) < 1, "\(last.translation)")
        #expect(replayed.last?.counts.repaired == 4 && replayed.last?.counts.jumps == 0)
        // Filters off, the firmware's ids swap places twice; through the filters each id stays with its finger.
        let ids = replayed.compactMap(\.frame).dropLast().map { frame in frame.contacts.sorted { $0.deviceX < $1.deviceX }.map(\.trackingID) }
        #expect(Set(ids) == [[1, 2]], "\(Set(ids))")
    }

    // MARK: Hysteresis

    @Test("with fuzz 8, a resting finger's ±3-unit jitter holds still; a moving finger lags at most the 4-unit margin")
    func hysteresis() throws {
        var script = EventScript()
        script.slot(0); script.track(1); script.at(2000, 2000); script.report()
        for (dx, dy) in [(3, 0), (-2, 2), (0, -3), (2, 2), (-3, -1)] as [(Int32, Int32)] {
            script.at(2000 + dx, 2000 + dy); script.report()
        }
        var raw: [Int32] = []
        for step in 1...20 {
            let x = 2000 + Int32(step) * 25
            raw.append(x)
            script.at(x, 2000); script.report()
        }
        let frames = try Self.frames(script, on: Self.panel(fuzz: 8))
        let resting = frames[1...5].flatMap(\.contacts)
        #expect(resting.allSatisfy { $0.deviceX == 2000 && $0.deviceY == 2000 && $0.phase == .stationary }, "\(resting.map { ($0.deviceX, $0.deviceY) })")
        let moving = frames[6...].flatMap(\.contacts)
        for (contact, x) in zip(moving, raw) {
            #expect(x - contact.deviceX <= 4 && contact.deviceX <= x, "shown \(contact.deviceX) for \(x)")
            #expect(contact.phase == .moved)
        }
        // Off, the jitter passes through.
        let unfiltered = try Self.frames(script, on: Self.panel(fuzz: 8), filters: ContactFilterSettings(hysteresis: false))
        #expect(unfiltered[1...5].flatMap(\.contacts).map(\.deviceX) == [2003, 1998, 2000, 2002, 1997])
    }

    @Test("firmware that swings a contact across the whole Int32 range is followed without overflow (found by the assembler fuzzer)")
    func hysteresisAcrossInt32() throws {
        var script = EventScript()
        script.slot(0); script.track(1); script.at(Int32.min, Int32.max); script.report()
        script.at(Int32.max, Int32.min); script.report()
        script.at(2000, 2000); script.report()
        script.track(-1); script.report()
        let frames = try Self.frames(script, on: Self.panel(fuzz: 8), filters: ContactFilterSettings(jumpMillimetres: 0))
        #expect(frames.count == 4 && frames.allSatisfy { $0.contacts.allSatisfy { $0.position.x.isFinite && $0.position.y.isFinite } })
        // Each shown position is within the 4-unit margin of the device's.
        #expect(frames[1].contacts[0].deviceX >= Int32.max - 4 && frames[2].contacts[0].deviceX <= 2004)
    }

    // MARK: Real recordings

    @Test("on the Pixel tablet's real swipe (touch major 82, 83, then 60 units at 11/mm): palm_size = 82 cancels it when it grows to 83; 6 mm makes it a palm from its landing, never begun")
    func palmOnRealRecording() throws {
        let recording = try FixtureRecordings.recording(FixtureRecordings.pixel)
        let frames = try RecordingReplay(recording, filters: ContactFilterSettings(palmSize: .units(82))).frames()
        let cancel = try #require(frames.first { $0.contacts.contains { $0.phase == .cancelled } })
        let raw = try RecordingReplay(recording, filters: .off).frames()
        // The raw frame at that moment reports the contact larger than 82 units, the one before not.
        let index = try #require(raw.firstIndex { $0.time == cancel.time })
        #expect(raw[index].contacts.first?.touchMajor == 83)
        #expect(raw[index - 1].contacts.first?.touchMajor == 82)
        #expect(frames.first?.contacts.first?.phase == .began)
        #expect(frames.filter { $0.time > cancel.time }.isEmpty, "ignored until it lifts")
        #expect(try RecordingReplay(recording, filters: ContactFilterSettings(palmSize: .millimetres(6))).frames().isEmpty)
    }

    @Test("on the Atmel's real two-finger hold (0.8 s), stuck_after = 0.3 cancels both resting fingers at least 0.3 s after they landed")
    func stuckOnRealRecording() throws {
        let recording = try FixtureRecordings.recording(FixtureRecordings.atmelHold)
        let raw = try RecordingReplay(recording, filters: .off).frames()
        let held = raw.last!.time - raw.first!.time
        try #require(held > 0.6, "the recording holds its fingers \(held) s")
        let frames = try RecordingReplay(recording, filters: ContactFilterSettings(stuckAfter: 0.3)).frames()
        let cancelled = frames.flatMap { frame in frame.contacts.filter { $0.phase == .cancelled }.map { (frame.time, $0.trackingID) } }
        #expect(Set(cancelled.map(\.1)).count == 2, "\(cancelled)")
        for (time, id) in cancelled {
            let landing = try #require(raw.first { $0.contacts.contains { $0.trackingID == id && $0.phase == .began } }).time
            #expect(time >= landing + 0.3, "cancelled at \(time), landed at \(landing)")
        }
        #expect(!frames.contains { $0.contacts.contains { $0.phase == .ended } }, "a cancelled finger's lift says nothing")
    }

    @Test("on the Pixel tablet's real swipe with 110 mm added to its second half, the jump cancels the contact and a new one begins there")
    func jumpOnRealRecording() throws {
        var recording = try FixtureRecordings.recording(FixtureRecordings.pixel)
        let middle = recording.events.count / 2
        for index in middle..<recording.events.count where recording.events[index].type == EventType.absolute && recording.events[index].code == AbsoluteAxis.positionY {
            recording.events[index].value = Swift.min(recording.events[index].value + 1210, 2559)
        }
        let frames = try RecordingReplay(recording).frames()
        let jumps = frames.filter { $0.contacts.map(\.phase) == [.cancelled, .began] }
        #expect(jumps.count == 1, "\(frames.map { $0.contacts.map(\.phase) })")
        let jump = try #require(jumps.first)
        #expect(jump.contacts[0].trackingID != jump.contacts[1].trackingID)
        #expect(frames.last?.contacts.first?.phase == .ended && frames.last?.contacts.first?.trackingID == jump.contacts[1].trackingID)
        // Unspliced, the same swipe is one contact throughout.
        let plain = try RecordingReplay(try FixtureRecordings.recording(FixtureRecordings.pixel)).frames()
        #expect(Set(plain.flatMap { $0.contacts.map(\.trackingID) }).count == 1)
    }

    @Test("the ep0430's real two-finger scroll, with fuzz 8 in its header: resting positions hold, and no position ever lags the device's by more than the 4-unit margin")
    func hysteresisOnRealRecording() throws {
        let text = try FixtureRecordings.text(FixtureRecordings.ep0430)
            .replacingOccurrences(of: "A: 35 0 1279 0 0 0", with: "A: 35 0 1279 8 0 0")
            .replacingOccurrences(of: "A: 36 0 767 0 0 0", with: "A: 36 0 767 8 0 0")
        let recording = try EvemuRecording(parsing: text)
        try #require(recording.device?.axes[AbsoluteAxis.positionX]?.fuzz == 8)
        let raw = try RecordingReplay(recording, filters: .off).frames()
        let filtered = try RecordingReplay(recording).frames()
        #expect(raw.count == filtered.count)
        var held = 0
        for (before, after) in zip(raw, filtered) {
            for (a, b) in zip(before.contacts, after.contacts) {
                #expect(a.trackingID == b.trackingID)
                let dx = Double(a.deviceX - b.deviceX), dy = Double(a.deviceY - b.deviceY)
                #expect((dx * dx + dy * dy).squareRoot() <= 4.5, "shown (\(b.deviceX), \(b.deviceY)) for (\(a.deviceX), \(a.deviceY))")
                if a.deviceX != b.deviceX || a.deviceY != b.deviceY { held += 1 }
            }
        }
        #expect(held > 0, "some jitter was held")
    }

    // MARK: Defaults

    @Test("the defaults change nothing on the real recordings in the repository", arguments: FixtureRecordings.withEvents + [ProtocolATests.protocolA, "whot-evemu-devices__ep0430m09__2f-drag-scroll.protocol-a-no-empty-report.evemu"])
    func defaultsLeaveRealRecordingsAlone(name: String) throws {
        let recording = try FixtureRecordings.recording(name)
        try #require(recording.device?.kind.isTouchscreen == true, "\(name) is not a touchscreen's recording: the filters have nothing to leave alone")
        let filtered = try RecordingReplay(recording).frames(), raw = try RecordingReplay(recording, filters: .off).frames()
        #expect(filtered == raw)
    }
}
