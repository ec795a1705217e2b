import MotionCore
import Testing
@testable import TouchInput

/// The phantom-touch filters on made-up panels (``ContactFilterTests/panel(resolution:fuzz:majorMaximum:)``,
/// 0…4095 at 10 units/mm): each fault removed, and its near miss kept.
@Suite("Phantom touches")
struct PhantomTouchTests {
    typealias Replayed = [RecordingReplay.ReplayedFrame]

    static func replay(_ script: EventScript, on device: DeviceDescription = ContactFilterTests.panel(),
                       mapping: OutputMapping = OutputMapping(), filters: ContactFilterSettings = ContactFilterSettings()) throws -> Replayed {
        try RecordingReplay(EvemuRecording(device: device, events: script.events), mapping: mapping, filters: filters).replayedFrames()
    }

    /// Every contact the frames report, by id: its phases in order.
    static func lives(_ replayed: Replayed) -> [Int32: [TouchPhase]] {
        var lives: [Int32: [TouchPhase]] = [:]
        for frame in replayed.compactMap(\.frame) {
            for contact in frame.contacts { lives[contact.trackingID, default: []].append(contact.phase) }
        }
        return lives
    }

    /// When each contact's first report came, by id.
    static func beginnings(_ replayed: Replayed) -> [Int32: Double] {
        var times: [Int32: Double] = [:]
        for frame in replayed.compactMap(\.frame) {
            for contact in frame.contacts where contact.phase == .began { times[contact.trackingID] = frame.time }
        }
        return times
    }

    static func counts(_ replayed: Replayed) -> ContactFilters.Counts { replayed.last?.counts ?? ContactFilters.Counts() }

    /// A touch of one frame or more in slot `slot`: lands at `time` at (x, y), holds for
    /// `duration` (reporting every 10 ms), moving `step` units in x a frame, and lifts.
    static func touch(_ script: inout EventScript, id: Int32, slot: Int32 = 0, at time: Double, _ x: Int32, _ y: Int32,
                      duration: Double, step: Int32 = 0) {
        script.time = time
        script.slot(slot); script.track(id); script.at(x, y); script.report(after: 0.01)
        var moved: Int32 = 0
        while script.time < time + duration - 1e-9 {
            moved += step
            if step != 0 { script.slot(slot); script.at(x + moved, y) }
            script.report(after: 0.01)
        }
        script.slot(slot); script.track(-1); script.report(after: 0.01)
    }

    // MARK: Repeating phantom taps

    @Test("a one-frame touch at one place every 12.864 s is a phantom from its third: the taps after it never begin, and its place and period are known")
    func repeatingPhantom() throws {
        var script = EventScript()
        for tap in 0..<7 { Self.touch(&script, id: Int32(tap), at: Double(tap) * 12.864, 1000, 1000, duration: 0) }
        let replayed = try Self.replay(script)
        let lives = Self.lives(replayed)
        #expect(lives.keys.sorted() == [0, 1, 2], "\(lives)")
        #expect(Self.counts(replayed).phantomTaps == 4)
        let learned = replayed.flatMap(\.notices).compactMap { notice -> Double? in
            if case .phantomTap(let period, learned: true) = notice.kind { return period }
            return nil
        }
        #expect(learned.count == 1 && abs(learned[0] - 12.864) < 1e-6, "\(learned)")
        // Off, every tap is reported.
        var off = ContactFilterSettings()
        off.phantoms.repeatingTaps = false
        #expect(Self.lives(try Self.replay(script, filters: off)).count == 7)
    }

    @Test("short touches at one place at an uneven pace, or at a steady pace at places apart, are all kept")
    func unevenTapsAreKept() throws {
        var uneven = EventScript()
        for (tap, time) in [0.0, 12, 32, 39, 51, 69].enumerated() { Self.touch(&uneven, id: Int32(tap), at: time, 1000, 1000, duration: 0) }
        #expect(Self.lives(try Self.replay(uneven)).count == 6)
        var apart = EventScript()
        for tap in 0..<6 { Self.touch(&apart, id: Int32(tap), at: Double(tap) * 5, 1000 + Int32(tap) * 40, 1000, duration: 0) }
        #expect(Self.lives(try Self.replay(apart)).count == 6)
    }

    @Test("a real finger tapping the phantom's place when its tap is due, and between its taps, stays a tap")
    func realTapAtThePhantomsPlace() throws {
        var script = EventScript()
        for tap in 0..<4 { Self.touch(&script, id: Int32(tap), at: Double(tap) * 12.864, 1000, 1000, duration: 0) }
        // Due at 4 × 12.864 (times count from the first event): a finger's 90 ms tap there (a double tap, 150 ms apart), and one 5 s later.
        let due = 4 * 12.864
        Self.touch(&script, id: 10, at: due, 1002, 998, duration: 0.09)
        Self.touch(&script, id: 11, at: due + 0.25, 1001, 1000, duration: 0.08)
        Self.touch(&script, id: 12, at: due + 5, 1000, 1000, duration: 0.09)
        let replayed = try Self.replay(script)
        let lives = Self.lives(replayed)
        for id: Int32 in [10, 11, 12] {
            #expect(lives[id]?.first == .began && lives[id]?.last == .ended, "contact \(id): \(lives[id] ?? [])")
        }
        let began = Self.beginnings(replayed)
        // Held until it outlasted a phantom's touch (25 ms), then begun; the tap between taps at once.
        #expect(try #require(began[10]) - due > 0.02 && began[10]! - due < 0.06, "\(began)")
        #expect(began[12] == due + 5)
    }

    @Test("short, near-metronomic real taps are kept: 40 ms every 1.5 s on a 50 Hz panel, and one-frame taps every 1.25 s a millimetre apart")
    func metronomicRealTaps() throws {
        // A 50 Hz panel: a 40 ms tap is two frames (landing, one more, the lift 40 ms after landing).
        var slow = EventScript()
        for tap in 0..<8 {
            slow.time = Double(tap) * 1.5
            slow.slot(0); slow.track(Int32(tap)); slow.at(1000, 1000); slow.report(after: 0.02)
            slow.at(1001, 1000); slow.report(after: 0.02)
            slow.track(-1); slow.report()
        }
        #expect(Self.lives(try Self.replay(slow)).values.filter { $0.last == .ended }.count == 8)
        // One frame each (20 ms), at the corners of a pentagon 0.8 mm across: no two taps in a row within 0.5 mm.
        var quick = EventScript()
        let corners: [(Int32, Int32)] = [(8, 0), (2, 8), (-6, 5), (-6, -5), (2, -8)]
        for tap in 0..<9 {
            quick.time = Double(tap) * 1.25
            quick.slot(0); quick.track(Int32(tap)); quick.at(2000 + corners[tap % 5].0, 2000 + corners[tap % 5].1)
            quick.report(after: 0.02)
            quick.track(-1); quick.report()
        }
        let replayed = try Self.replay(quick)
        #expect(Self.lives(replayed).values.filter { $0.last == .ended }.count == 9, "\(Self.lives(replayed))")
        #expect(Self.counts(replayed).phantomTaps == 0)
    }

    // MARK: Bursts

    @Test("contacts that land together at the panel's edges and lift within a frame or two never begin")
    func edgeBurst() throws {
        var script = EventScript()
        script.slot(0); script.track(1); script.at(0, 1200)
        script.slot(1); script.track(2); script.at(0, 2900)
        script.slot(2); script.track(3); script.at(4095, 400); script.report(after: 0.02)
        for slot: Int32 in 0...2 { script.slot(slot); script.track(-1) }
        script.report(after: 2)
        // At the origin, as some panels report a wake.
        for slot: Int32 in 0...1 { script.slot(slot); script.track(10 + slot); script.at(0, 0) }
        script.report(after: 0.01)
        for slot: Int32 in 0...1 { script.slot(slot); script.track(-1) }
        script.report()
        let replayed = try Self.replay(script)
        #expect(Self.lives(replayed).isEmpty, "\(Self.lives(replayed))")
        #expect(Self.counts(replayed).bursts == 5)
        var off = ContactFilterSettings()
        off.phantoms.wakeBursts = false
        #expect(Self.lives(try Self.replay(script, filters: off)).count == 5)
    }

    @Test("two fingers tapping together, one of them within 1 mm of an edge, after the panel was idle a minute, are both kept at once")
    func twoFingerTapAtTheEdge() throws {
        var script = EventScript()
        for (start, edge, inside) in [(0.0, (Int32(5), Int32(2000)), (Int32(800), Int32(2000))), (65.0, (2000, 4090), (2500, 3000))] {
            script.time = start
            script.slot(0); script.track(Int32(start)); script.at(edge.0, edge.1)
            script.slot(1); script.track(Int32(start) + 1); script.at(inside.0, inside.1)
            for _ in 0..<12 { script.report(after: 0.01) }
            for slot: Int32 in 0...1 { script.slot(slot); script.track(-1) }
            script.report()
        }
        let replayed = try Self.replay(script)
        let lives = Self.lives(replayed), began = Self.beginnings(replayed)
        for (id, lands) in [(Int32(0), 0.0), (1, 0), (65, 65), (66, 65)] {
            #expect(lives[id]?.last == .ended && began[id] == lands, "contact \(id): \(lives[id] ?? [])")
        }
        #expect(Self.counts(replayed).bursts == 0)
    }

    @Test("a fast swipe in from the edge begins where it lands; two fingers landing at the edge begin once they move or stay")
    func edgeNearMisses() throws {
        var swipe = EventScript()
        Self.touch(&swipe, id: 1, at: 0, 0, 2000, duration: 0.15, step: 120)
        let swiped = try Self.replay(swipe)
        #expect(Self.beginnings(swiped)[1] == 0 && Self.lives(swiped)[1]?.last == .ended)
        var pair = EventScript()
        pair.slot(0); pair.track(1); pair.at(0, 1000)
        pair.slot(1); pair.track(2); pair.at(0, 3000); pair.report(after: 0.01)
        for step in 1...30 {
            pair.slot(0); pair.at(Int32(step) * 20, 1000)  // moves: 2 mm a frame
            pair.report(after: 0.01)  // slot 1 stays
        }
        for slot: Int32 in 0...1 { pair.slot(slot); pair.track(-1) }
        pair.report()
        let replayed = try Self.replay(pair)
        let began = Self.beginnings(replayed)
        #expect(Self.lives(replayed)[1]?.last == .ended && Self.lives(replayed)[2]?.last == .ended, "\(Self.lives(replayed))")
        // Slot 0 moved past the 3 mm slop in its second frame; slot 1 lasted 0.25 s.
        #expect(try #require(began[1]) < 0.05 && abs(try #require(began[2]) - 0.25) < 0.011, "\(began)")
        #expect(Self.counts(replayed).bursts == 0)
    }

    // MARK: Dead zones

    @Test("a touch that lands in a dead zone never begins, even where it moves out; one from outside moves through it")
    func deadZones() throws {
        var settings = ContactFilterSettings()
        settings.phantoms.deadZones = [Rect(x: 0, y: 1000, width: 1920, height: 80)]
        let mapping = OutputMapping(outputSize: Size(width: 1920, height: 1080))
        var script = EventScript()
        Self.touch(&script, id: 1, at: 1, 2000, 4000, duration: 0.2, step: 10)  // y 4000 → 1054 px: in the zone
        Self.touch(&script, id: 2, at: 2, 2000, 3000, duration: 0.2)  // 791 px: not
        let replayed = try Self.replay(script, mapping: mapping, filters: settings)
        #expect(Self.lives(replayed).keys.sorted() == [2])
        #expect(Self.counts(replayed).deadZone == 1)
    }

    // MARK: Infrared frames

    @Test("a panel's name says it is an infrared or optical frame only in a word of its own")
    func infraredNames() {
        for name in ["QUANTA OpticalTouchScreen", "IRTOUCH InfraRed Touch Screen", "Generic IR Touch Frame", "xyz ir-touch"] {
            #expect(InfraredFrame.declares(name: name), "\(name)")
        }
        for name in ["Fair Touch Panel", "ELAN Touchscreen", "Atmel maXTouch Digitizer", ""] {
            #expect(!InfraredFrame.declares(name: name), "\(name)")
        }
    }

    static func infraredPanel() -> DeviceDescription {
        var panel = ContactFilterTests.panel()
        panel.name = "QUANTA OpticalTouchScreen"
        return panel
    }

    @Test("on an infrared frame, two contacts landing at the other corners of the two fingers down are ghosts; the fingers carry on")
    func ghosts() throws {
        var script = EventScript()
        script.slot(0); script.track(1); script.at(1000, 1000)
        script.slot(1); script.track(2); script.at(3000, 3000); script.report(after: 0.01)
        script.slot(2); script.track(3); script.at(1000, 3000)
        script.slot(3); script.track(4); script.at(3000, 1000); script.report(after: 0.01)
        for step in 1...10 {
            let d = Int32(step) * 5
            script.slot(0); script.at(1000 + d, 1000); script.slot(1); script.at(3000, 3000 + d)
            script.slot(2); script.at(1000 + d, 3000 + d); script.slot(3); script.at(3000, 1000)
            script.report(after: 0.01)
        }
        for slot: Int32 in 0...3 { script.slot(slot); script.track(-1) }
        script.report()
        let replayed = try Self.replay(script, on: Self.infraredPanel())
        #expect(Self.lives(replayed).keys.sorted() == [1, 2], "\(Self.lives(replayed))")
        #expect(Self.counts(replayed).ghosts == 2)
        // On a panel that is not such a frame, or with infrared = false, they are fingers.
        #expect(Self.lives(try Self.replay(script)).count == 4)
        var off = ContactFilterSettings()
        off.phantoms.infrared = false
        #expect(Self.lives(try Self.replay(script, on: Self.infraredPanel(), filters: off)).count == 4)
    }

    @Test("on an infrared frame, two ghosts landing in the same frame as the second finger are ghosts; ghosts that outlast a finger of their pair by a frame are too")
    func ghostsWithTheSecondFinger() throws {
        var script = EventScript()
        script.slot(0); script.track(1); script.at(1000, 1000); script.report(after: 0.01)
        script.slot(1); script.track(2); script.at(3000, 3000)
        script.slot(2); script.track(3); script.at(1000, 3000)
        script.slot(3); script.track(4); script.at(3000, 1000); script.report(after: 0.01)
        for step in 1...3 {
            script.slot(1); script.at(3000 + Int32(step) * 5, 3000); script.slot(3); script.at(3000 + Int32(step) * 5, 1000)
            script.report(after: 0.01)
        }
        // The second finger lifts a frame before its ghosts, within 60 ms of their landing
        // (a ghost at a corner that stays still longer is taken for a finger: InfraredFrameTests).
        script.slot(1); script.track(-1); script.report(after: 0.01)
        for slot: Int32 in [0, 2, 3] { script.slot(slot); script.track(-1) }
        script.report()
        let replayed = try Self.replay(script, on: Self.infraredPanel())
        #expect(Self.lives(replayed).keys.sorted() == [1, 2], "\(Self.lives(replayed))")
        #expect(Self.counts(replayed).ghosts == 2)
        #expect(Self.lives(try Self.replay(script)).count == 4, "not an infrared frame: four fingers")

        // A contact left at a corner 0.3 s after a finger of the pair lifted is a finger after all.
        var stays = EventScript()
        stays.slot(0); stays.track(1); stays.at(1000, 1000)
        stays.slot(1); stays.track(2); stays.at(3000, 3000); stays.report(after: 0.01)
        stays.slot(2); stays.track(3); stays.at(1000, 3000); stays.report(after: 0.01)
        stays.slot(1); stays.track(-1); stays.report(after: 0.3)
        stays.slot(2); stays.at(1010, 3000); stays.report(after: 0.01)
        for slot: Int32 in [0, 2] { stays.slot(slot); stays.track(-1) }
        stays.report()
        let kept = try Self.replay(stays, on: Self.infraredPanel())
        #expect(Self.lives(kept)[3]?.first == .began && Self.lives(kept)[3]?.last == .ended, "\(Self.lives(kept))")
        #expect(abs(try #require(Self.beginnings(kept)[3]) - 0.12) < 0.011, "\(Self.beginnings(kept))")
    }

    @Test("four fingers landing together on a rectangle's corners, or a third finger landing near a corner that then leaves it, are fingers")
    func rectangleOfFingers() throws {
        var together = EventScript()
        for (slot, (x, y)) in [(1000, 1000), (3000, 3000), (1000, 3000), (3000, 1000)].enumerated() {
            together.slot(Int32(slot)); together.track(Int32(slot + 1)); together.at(Int32(x), Int32(y))
        }
        together.report(after: 0.05)
        for slot: Int32 in 0...3 { together.slot(slot); together.track(-1) }
        together.report()
        #expect(Self.lives(try Self.replay(together, on: Self.infraredPanel())).count == 4)

        var third = EventScript()
        third.slot(0); third.track(1); third.at(1000, 1000)
        third.slot(1); third.track(2); third.at(3000, 3000); third.report(after: 0.01)
        third.slot(2); third.track(3); third.at(1005, 2995); third.report(after: 0.01)
        for step in 1...10 { third.slot(2); third.at(1005 + Int32(step) * 30, 2995); third.report(after: 0.01) }
        for slot: Int32 in 0...2 { third.slot(slot); third.track(-1) }
        third.report()
        let replayed = try Self.replay(third, on: Self.infraredPanel())
        #expect(Self.lives(replayed)[3]?.first == .began && Self.lives(replayed)[3]?.last == .ended, "\(Self.lives(replayed))")
        #expect(Self.counts(replayed).ghosts == 0)
    }

    @Test("two fingers an infrared frame reports at their ghost corners for a frame keep their ids and their places; elsewhere the flip and its return are four jumps")
    func flips() throws {
        var script = EventScript()
        script.slot(0); script.track(1); script.at(1000, 1000)
        script.slot(1); script.track(2); script.at(3000, 3000); script.report(after: 0.01)
        for step in 1...6 {
            let d = Int32(step) * 4
            if step == 3 {
                script.slot(0); script.at(1000 + d, 3000 - d); script.slot(1); script.at(3000 - d, 1000 + d)
            } else {
                script.slot(0); script.at(1000 + d, 1000 + d); script.slot(1); script.at(3000 - d, 3000 - d)
            }
            script.report(after: 0.01)
        }
        for slot: Int32 in 0...1 { script.slot(slot); script.track(-1) }
        script.report()
        let replayed = try Self.replay(script, on: Self.infraredPanel())
        #expect(Self.lives(replayed) == [1: [.began] + Array(repeating: .moved, count: 6) + [.ended],
                                         2: [.began] + Array(repeating: .moved, count: 6) + [.ended]], "\(Self.lives(replayed))")
        #expect(Self.counts(replayed).flips == 1 && Self.counts(replayed).jumps == 0)
        let flipped = try #require(replayed.compactMap(\.frame).first { abs($0.time - 0.03) < 1e-9 })
        #expect(flipped.contacts.map(\.deviceX) == [1012, 2988] && flipped.contacts.map(\.deviceY) == [1012, 2988], "\(flipped.contacts)")
        let plain = try Self.replay(script)
        #expect(Self.counts(plain).jumps == 4 && Self.counts(plain).flips == 0, "\(Self.counts(plain))")
    }
}
