import SeededRandom
import Testing
import TouchModel
import VirtualTouchscreenTestSupport
@testable import TouchInput

@Suite("Virtual touchscreen encoder")
struct VirtualTouchEncoderTests {
    static let geometry = VirtualTouchscreenGeometry(area: Rect(origin: Point(x: 1920, y: 0), size: Size(width: 1920, height: 1080)),
                                                     sizeMillimetres: Size(width: 527, height: 296))

    static func contact(_ finger: Int, _ phase: TouchPhase, _ x: Double, _ y: Double, forApps: Bool = true) -> VirtualContact {
        VirtualContact(finger: finger, phase: phase, position: Point(x: x, y: y), forApps: forApps)
    }

    @Test("the axes count quarter pixels of the area from its corner; resolution makes the size true; points outside are held at the edge")
    func geometry() {
        let g = Self.geometry
        #expect(g.maximum.x == 7679 && g.maximum.y == 4319)
        #expect(g.resolution.x == 15 && g.resolution.y == 15, "7680 units over 527 mm, 4320 over 296 mm")
        #expect(g.units(of: Point(x: 1920, y: 0)) == (0, 0))
        #expect(g.units(of: Point(x: 1920 + 100.5, y: 20.25)) == (402, 81))
        #expect(g.units(of: Point(x: 0, y: 5000)) == (0, 4319))
        #expect(g.units(of: Point(x: .nan, y: .infinity)) == (0, 4319))
        #expect(VirtualTouchscreenGeometry(area: g.area).resolution == (0, 0), "both unknown, never one")
    }

    @Test("no size or area makes a conversion trap: each axis's units and resolution hold at what an Int32 can say")
    func extremeGeometry() {
        let tiny = VirtualTouchscreenGeometry(area: Self.geometry.area, sizeMillimetres: Size(width: 1e-300, height: 1e-300))
        #expect(tiny.resolution == (Int32.max, Int32.max))
        let huge = VirtualTouchscreenGeometry(area: Self.geometry.area, sizeMillimetres: Size(width: 1e300, height: .infinity))
        #expect(huge.resolution == (1, 1), "at least one unit a millimetre: 0 would say the size is unknown")
        let vast = VirtualTouchscreenGeometry(area: Rect(x: -1e300, y: 0, width: 1e300, height: .nan), sizeMillimetres: Size(width: 300, height: 200))
        #expect(vast.maximum == (Int32.max - 1, 0))
        #expect(vast.units(of: Point(x: 1e308, y: -1e308)) == (Int32.max - 1, 0))
    }

    @Test("a tap: the finger tool and a tracking id before the position, BTN_TOUCH and ABS_X/Y with it; a lift releases the slot")
    func tap() {
        var encoder = VirtualTouchEncoder(geometry: Self.geometry)
        var events: [InputEvent] = []
        encoder.encode([Self.contact(1, .began, 1920 + 10, 20)], at: 0, into: &events)
        let codes = events.map { "\($0.type):\($0.code)=\($0.value)" }
        #expect(codes == ["3:47=0", "3:55=0", "3:57=0", "3:53=40", "3:54=80", "1:330=1", "3:0=40", "3:1=80", "0:0=0"])
        events.removeAll()
        encoder.encode([Self.contact(1, .stationary, 1920 + 10, 20)], at: 0, into: &events)
        #expect(events.isEmpty, "nothing changed, no frame")
        encoder.encode([Self.contact(1, .ended, 1920 + 10, 20)], at: 0, into: &events)
        #expect(events.map { "\($0.type):\($0.code)=\($0.value)" } == ["3:57=-1", "1:330=0", "0:0=0"])
    }

    @Test("a touch taken after it began is cancelled, never lifted; one kept from the apps at its landing never appears")
    func claims() {
        var encoder = VirtualTouchEncoder(geometry: Self.geometry)
        var model = LibinputModel(slots: encoder.slotCount)
        var events: [InputEvent] = []
        func frame(_ contacts: VirtualContact...) {
            events.removeAll()
            encoder.encode(contacts, at: 0, into: &events)
            model.read(events)
        }
        frame(Self.contact(1, .began, 2000, 100), Self.contact(2, .began, 2100, 100, forApps: false))
        frame(Self.contact(1, .moved, 2010, 100), Self.contact(2, .moved, 2110, 100, forApps: false))
        frame(Self.contact(1, .moved, 2020, 100, forApps: false), Self.contact(2, .moved, 2120, 100, forApps: true))
        frame(Self.contact(1, .ended, 2020, 100, forApps: false), Self.contact(2, .ended, 2120, 100))
        #expect(model.seen == [.down(slot: 0, x: 320, y: 400), .motion(slot: 0, x: 360, y: 400), .cancel(slot: 0)])
        #expect(model.problems.isEmpty, "\(model.problems)")
        #expect(!model.button && !encoder.isTouching)
        // The slot said palm last: the next touch there must be seen.
        frame(Self.contact(3, .began, 2200, 200))
        #expect(model.seen.last == .down(slot: 0, x: 1120, y: 800))
        #expect(encoder.fingersCancelled == 1)
    }

    @Test("a filter's cancel and cancelAll end touches as cancels; BTN_TOUCH goes up with the last release")
    func cancels() {
        var encoder = VirtualTouchEncoder(geometry: Self.geometry)
        var model = LibinputModel(slots: encoder.slotCount)
        var events: [InputEvent] = []
        encoder.encode([Self.contact(1, .began, 2000, 100), Self.contact(2, .began, 2100, 100)], at: 0, into: &events)
        encoder.encode([Self.contact(1, .cancelled, 2000, 100)], at: 0, into: &events)
        encoder.cancelAll(at: 0, into: &events)
        model.read(events)
        #expect(model.seen.filter { if case .cancel = $0 { true } else { false } }.count == 2)
        #expect(!model.seen.contains(.up(slot: 0)) && !model.seen.contains(.up(slot: 1)))
        #expect(model.problems.isEmpty, "\(model.problems)")
        #expect(!model.button)
        events.removeAll()
        encoder.cancelAll(at: 0, into: &events)
        #expect(events.isEmpty, "nothing left to cancel")
    }

    @Test("fingers a gesture took between their frames are cancelled at once, never lifted; a finger not shown is ignored")
    func cancelFingers() {
        var encoder = VirtualTouchEncoder(geometry: Self.geometry)
        var model = LibinputModel(slots: encoder.slotCount)
        var events: [InputEvent] = []
        encoder.encode([Self.contact(4, .began, 2000, 100), Self.contact(9, .began, 2100, 100)], at: 0, into: &events)
        encoder.cancel(fingers: [9, 4, 77], at: 0, into: &events)
        model.read(events)
        #expect(model.seen.filter { if case .cancel = $0 { true } else { false } }.count == 2)
        #expect(!model.seen.contains(.up(slot: 0)) && !model.seen.contains(.up(slot: 1)))
        #expect(model.problems.isEmpty && !model.button && !encoder.isTouching, "\(model.problems)")
    }

    @Test("more fingers than slots: the extra ones are not shown, and counted")
    func slotsRunOut() {
        var encoder = VirtualTouchEncoder(geometry: Self.geometry, slotCount: 2)
        var model = LibinputModel(slots: 2)
        var events: [InputEvent] = []
        encoder.encode((1...3).map { Self.contact($0, .began, 2000 + Double($0), 100) }, at: 0, into: &events)
        encoder.encode((1...3).map { Self.contact($0, .ended, 2000 + Double($0), 100) }, at: 0, into: &events)
        model.read(events)
        #expect(encoder.fingersDropped == 1)
        #expect(model.seen.count == 4 && model.problems.isEmpty, "\(model.seen) \(model.problems)")
    }

    @Test("a lift and a landing in one frame: the landing takes another slot, or, with none left, the lifted one in a frame of its own")
    func liftAndLandInOneFrame() {
        var encoder = VirtualTouchEncoder(geometry: Self.geometry, slotCount: 3)
        var model = LibinputModel(slots: 3)
        var events: [InputEvent] = []
        func frame(_ contacts: VirtualContact...) -> Int {
            events.removeAll()
            encoder.encode(contacts, at: 0, into: &events)
            model.read(events)
            return events.count { $0.type == EventType.synchronization }
        }
        #expect(frame(Self.contact(1, .began, 2000, 100), Self.contact(2, .began, 2100, 100)) == 1)
        // The landing is listed before the lift: it still knows the slot is released.
        #expect(frame(Self.contact(3, .began, 2200, 200), Self.contact(1, .ended, 2000, 100), Self.contact(2, .moved, 2100, 100)) == 1)
        #expect(model.seen.suffix(2) == [.up(slot: 0), .down(slot: 2, x: 1120, y: 800)])
        // Slots 1 and 2 taken, 0 free: a landing takes 0; then every slot is taken.
        #expect(frame(Self.contact(2, .moved, 2100, 100), Self.contact(3, .moved, 2200, 200), Self.contact(4, .began, 2300, 300)) == 1)
        #expect(model.seen.last == .down(slot: 0, x: 1520, y: 1200))
        // Finger 2 lifts and 5 lands, finger 3 turns palm and 6 lands: a frame of the lift and
        // the palm, one releasing the palm's slot, one landing both.
        #expect(frame(Self.contact(2, .ended, 2100, 100), Self.contact(5, .began, 2400, 400),
                      Self.contact(3, .moved, 2200, 200, forApps: false), Self.contact(6, .began, 2500, 500),
                      Self.contact(4, .moved, 2300, 300)) == 3)
        #expect(model.seen.suffix(4) == [.up(slot: 1), .cancel(slot: 2), .down(slot: 1, x: 1920, y: 1600), .down(slot: 2, x: 2320, y: 2000)])
        // With every slot taken and none released, a landing is dropped.
        #expect(frame(Self.contact(7, .began, 2600, 600)) == 0)
        #expect(encoder.fingersDropped == 1 && encoder.fingersCancelled == 1)
        #expect(model.problems.isEmpty, "\(model.problems)")
        #expect(model.button && encoder.isTouching)
    }

    @Test("every fixture recording's frames, shown on the virtual touchscreen, read as libinput reads them: each contact down, lifted or cancelled as the frames say")
    func fixtureRecordings() throws {
        let geometry = VirtualTouchscreenGeometry(area: Rect(origin: Point(x: 0, y: 0), size: Size(width: 1920, height: 1080)))
        var recordings = 0
        for path in FixtureRecordings.allRecordings() {
            guard let replay = try? RecordingReplay(FixtureRecordings.replayable(path)) else { continue }
            recordings += 1
            var encoder = VirtualTouchEncoder(geometry: geometry)
            var model = LibinputModel(slots: encoder.slotCount)
            var events: [InputEvent] = []
            var phases: [TouchPhase: Int] = [:]
            for frame in replay.frames() {
                let contacts = frame.contacts.map { VirtualContact(finger: Int($0.trackingID), phase: $0.phase, position: $0.position) }
                for contact in contacts { phases[contact.phase, default: 0] += 1 }
                events.removeAll()
                encoder.encode(contacts, at: 0, into: &events)
                model.read(events)
            }
            let downs = model.seen.count { if case .down = $0 { true } else { false } }
            let ups = model.seen.count { if case .up = $0 { true } else { false } }
            let cancels = model.seen.count { if case .cancel = $0 { true } else { false } }
            #expect(model.problems.isEmpty, "\(path): \(model.problems.prefix(3))")
            #expect(encoder.fingersDropped == 0 && downs == phases[.began, default: 0], "\(path): \(downs) down of \(phases)")
            #expect(ups == phases[.ended, default: 0] && cancels == phases[.cancelled, default: 0], "\(path): \(ups) up, \(cancels) cancelled of \(phases)")
        }
        #expect(recordings > 40, "the fixtures' recordings were found")
    }

    @Test("random frames: every touch shown ends once, as an up when it lifted for the apps and a cancel otherwise", .seeded)
    func randomFrames() {
        var random = TestSeed.generator()
        for _ in 0..<200 {
            var encoder = VirtualTouchEncoder(geometry: Self.geometry, slotCount: 4)
            var model = LibinputModel(slots: 4)
            var down: [Int: (forApps: Bool, shown: Bool)] = [:]
            var nextFinger = 1
            var lifts = 0, cancels = 0
            var events: [InputEvent] = []
            for _ in 0..<40 {
                var frame: [VirtualContact] = []
                for (finger, state) in down.sorted(by: { $0.key < $1.key }) {
                    let roll = random.below(10)
                    let forApps = state.forApps && random.below(12) != 0
                    let point = Point(x: 1920 + Double(random.below(1920)), y: Double(random.below(1080)))
                    if roll < 2 {
                        let phase: TouchPhase = roll == 0 ? .ended : .cancelled
                        frame.append(VirtualContact(finger: finger, phase: phase, position: point, forApps: forApps))
                        if state.shown { if phase == .ended && forApps { lifts += 1 } else { cancels += 1 } }
                        down[finger] = nil
                    } else {
                        frame.append(VirtualContact(finger: finger, phase: .moved, position: point, forApps: forApps))
                        if state.shown && !forApps { cancels += 1 }
                        down[finger] = (forApps, state.shown && forApps)
                    }
                }
                if random.below(3) == 0 {
                    let forApps = random.below(4) != 0
                    // A slot released in the frame takes it in a frame of its own after.
                    let shown = forApps && down.values.filter(\.shown).count < 4
                    frame.append(VirtualContact(finger: nextFinger, phase: .began, position: Point(x: 2000, y: 500), forApps: forApps))
                    down[nextFinger] = (forApps, shown)
                    nextFinger += 1
                }
                events.removeAll()
                encoder.encode(frame, at: 0, into: &events)
                model.read(events)
            }
            #expect(model.problems.isEmpty, "\(model.problems)")
            let ups = model.seen.filter { if case .up = $0 { true } else { false } }.count
            let cancelled = model.seen.filter { if case .cancel = $0 { true } else { false } }.count
            #expect(ups == lifts && cancelled == cancels, "ups \(ups)/\(lifts), cancels \(cancelled)/\(cancels)")
            #expect(cancelled == encoder.fingersCancelled)
        }
    }
}
