import MotionCore
import OSCTestSupport
import Testing
@testable import MotionConfiguration
@testable import MotionTUIO

/// Records datagrams instead of sending them.
final class RecordedDatagrams: DatagramSink {
    var datagrams: [[UInt8]] = []
    var closed = false
    func send(_ datagram: borrowing [UInt8]) -> Int32? {
        datagrams.append(copy datagram)
        return nil
    }
    func close() { closed = true }

    /// Every bundle's messages, decoded.
    func bundles() throws -> [[OSCTestDecoder.Message]] { try datagrams.map { try OSCTestDecoder.bundle($0).messages } }
}

@Suite("TUIO bundles")
struct TUIOEncoderTests {
    let screen = (width: 1920.0, height: 1080.0)

    func encode(_ frame: TUIOFrame, _ version: TUIOSettings.Version, limit: Int = TUIOEncoder.safePayload) throws -> (ok: Bool, datagrams: [[UInt8]], bundles: [[OSCTestDecoder.Message]]) {
        var encoder = TUIOEncoder(version: version, source: "motiond@test", screen: screen, limit: limit)
        var datagrams: [[UInt8]] = []
        let ok = encoder.encode(frame, time: OSCTimeTag(rawValue: 42 << 32)) { datagrams.append(copy $0) }
        return (ok, datagrams, try datagrams.map { try OSCTestDecoder.bundle($0).messages })
    }

    @Test("1.1: source, alive, set and fseq for each profile, in one bundle")
    func tuio11() throws {
        let cursor = TUIOCursor(session: 5, component: 0, x: 0.25, y: 0.5, velocityX: 1, velocityY: -2, acceleration: 3)
        let object = TUIOObject(session: 1, classID: 0, x: 0.5, y: 0.5, angle: 1.5, velocityX: 0.1, velocityY: 0.2, rotationSpeed: 0.3,
                                acceleration: 0.4, rotationAcceleration: 0.5)
        let frame = TUIOFrame(number: 7, cursors: TUIOProfile(alive: [5, 6], changed: [cursor]), objects: TUIOProfile(alive: [1], changed: [object]))
        let (ok, datagrams, bundles) = try encode(frame, .v1_1)
        #expect(ok && datagrams.count == 1)
        #expect(bundles[0].map(\.description) == [
            "/tuio/2Dcur \"source\" \"motiond@test\"", "/tuio/2Dcur \"alive\" 5 6", "/tuio/2Dcur \"set\" 5 0.25 0.5 1.0 -2.0 3.0",
            "/tuio/2Dcur \"fseq\" 7",
            "/tuio/2Dobj \"source\" \"motiond@test\"", "/tuio/2Dobj \"alive\" 1", "/tuio/2Dobj \"set\" 1 0 0.5 0.5 1.5 0.1 0.2 0.3 0.4 0.5",
            "/tuio/2Dobj \"fseq\" 7",
        ])
        #expect(try OSCTestDecoder.bundle(datagrams[0]).time == 1, "1.1 bundles are for immediately")
    }

    @Test("2.0: frm, then ptr and tok, then one alv of every session")
    func tuio20() throws {
        let cursor = TUIOCursor(session: 5, component: 2, x: 0.25, y: 0.5, velocityX: 1, velocityY: -2, acceleration: 3)
        let object = TUIOObject(session: 1, classID: 3, x: 0.5, y: 0.75, angle: 1.5, velocityX: 0.1, velocityY: 0.2, rotationSpeed: 0.3,
                                acceleration: 0.4, rotationAcceleration: 0.5)
        let frame = TUIOFrame(number: 7, cursors: TUIOProfile(alive: [5], changed: [cursor]), objects: TUIOProfile(alive: [1], changed: [object]))
        let (ok, datagrams, bundles) = try encode(frame, .v2_0)
        #expect(ok && datagrams.count == 1)
        // The dimension: 1920 in the high 16 bits, 1080 in the low ones.
        #expect(bundles[0].map(\.description) == [
            "/tuio2/frm 7 t\(UInt64(42) << 32) \(1920 << 16 | 1080) \"motiond@test\"",
            "/tuio2/ptr 5 0 2 0.25 0.5 0.0 0.0 0.0 0.0 1.0 -2.0 0.0 3.0 0.0",
            "/tuio2/tok 1 0 3 0.5 0.75 1.5 0.1 0.2 0.3 0.4 0.5",
            "/tuio2/alv 5 1",
        ])
    }

    func cursors(_ count: Int) -> TUIOProfile<TUIOCursor> {
        let all = (1...Int32(count)).map { TUIOCursor(session: $0, component: $0, x: Float($0) / 1000, y: 0.5) }
        return TUIOProfile(alive: all.map(\.session), changed: all)
    }

    @Test("1.1: a frame too big for a datagram is split, each part with source, the whole alive list and the fseq")
    func split11() throws {
        let frame = TUIOFrame(number: 9, cursors: cursors(100), objects: TUIOProfile(alive: [200], changed: [TUIOObject(session: 200, classID: 0, x: 0, y: 0, angle: 0)]))
        let (ok, datagrams, bundles) = try encode(frame, .v1_1)
        #expect(ok && datagrams.count > 1)
        #expect(datagrams.allSatisfy { $0.count <= TUIOEncoder.safePayload }, "\(datagrams.map(\.count))")
        var sets: [Int32] = []
        for bundle in bundles {
            for address in Set(bundle.map(\.address)) {
                let messages = bundle.filter { $0.address == address }
                #expect(messages.first?.arguments.first == .string("source"))
                let alive = try #require(messages.dropFirst().first)
                #expect(alive.arguments.first == .string("alive"))
                #expect(alive.arguments.count == (address == "/tuio/2Dcur" ? 101 : 2), "the whole alive list")
                #expect(messages.last?.arguments == [.string("fseq"), .int(9)])
            }
            sets += bundle.filter { $0.arguments.first == .string("set") }.compactMap { $0.arguments[1].int }
        }
        #expect(sets == Array(1...100) + [200], "every set once, in order")
    }

    @Test("2.0: a split frame repeats frm; only its last bundle has the alv")
    func split20() throws {
        let (ok, datagrams, bundles) = try encode(TUIOFrame(number: 3, cursors: cursors(100)), .v2_0)
        #expect(ok && datagrams.count > 1)
        #expect(datagrams.allSatisfy { $0.count <= TUIOEncoder.safePayload })
        for (index, bundle) in bundles.enumerated() {
            #expect(bundle.first?.address == "/tuio2/frm" && bundle.first?.arguments.first == .int(3))
            #expect((bundle.last?.address == "/tuio2/alv") == (index == bundles.count - 1))
        }
        #expect(bundles.last?.last?.arguments.count == 100)
        #expect(bundles.flatMap { $0 }.filter { $0.address == "/tuio2/ptr" }.compactMap { $0.arguments[0].int } == Array(1...100))
    }

    @Test("an alive list bigger than the safe payload goes in bigger datagrams; one beyond UDP's limit is not sent", arguments: [TUIOSettings.Version.v1_1, .v2_0])
    func hugeAliveLists(_ version: TUIOSettings.Version) throws {
        let big = TUIOProfile<TUIOCursor>(alive: Array(1...1000), changed: [])
        let (ok, datagrams, bundles) = try encode(TUIOFrame(number: 1, cursors: big), version)
        #expect(ok && datagrams.count == 1 && datagrams[0].count > TUIOEncoder.safePayload && datagrams[0].count <= TUIOEncoder.largestDatagram)
        #expect(bundles[0].contains { $0.arguments.count >= 1000 })
        let tooBig = TUIOProfile<TUIOCursor>(alive: Array(1...20_000), changed: [])
        let refused = try encode(TUIOFrame(number: 1, cursors: tooBig), version)
        #expect(!refused.ok && refused.datagrams.isEmpty)
    }

    @Test("motion: velocity per second, acceleration of the speed, turns per second across 2π", arguments: [0.0, 1.0])
    func motion(_ start: Double) {
        var motion = TUIOMotion(x: 0.5, y: 0.5, angle: 2 * .pi - 0.1, time: start)
        motion.move(x: 0.6, y: 0.4, angle: 0.1, time: start + 0.1)
        #expect(abs(motion.velocityX - 1) < 1e-9 && abs(motion.velocityY + 1) < 1e-9)
        #expect(abs(motion.acceleration - 2.squareRoot() / 0.1) < 1e-9, "from rest to √2 in 0.1 s")
        // 0.2 rad forward across 2π in 0.1 s: 2 rad/s, which is 1/π turns per second.
        #expect(abs(motion.rotationSpeed - 1 / Double.pi) < 1e-9)
        #expect(abs(motion.angle - 0.1) < 1e-12)
        motion.move(x: 0.7, y: 0.4, time: start + 0.1)
        #expect(abs(motion.velocityX - 1) < 1e-9, "a second change at the same time keeps the velocity")
        #expect(TUIOMotion.normalised(-.pi / 2) == 3 * .pi / 2 && TUIOMotion.normalised(5 * .pi) == .pi && TUIOMotion.normalised(-1e-17) == 0)
    }
}

@Suite("TUIO output")
struct TUIOOutputTests {
    let screen = Size(width: 2000, height: 1000)

    /// The sinks an output opened, in order.
    final class Sinks {
        var all: [RecordedDatagrams] = []
        subscript(index: Int) -> RecordedDatagrams { all[index] }
    }

    func output(_ settings: [TUIOSettings], elements: [Element]) -> (TUIOOutput, Sinks) {
        let sinks = Sinks()
        let output = TUIOOutput(settings: settings, screen: screen, elementIDs: elements.map(\.id)) { _ in
            let sink = RecordedDatagrams()
            sinks.all.append(sink)
            return sink
        }
        return (output, sinks)
    }

    func settings(_ version: TUIOSettings.Version = .v1_1, contacts: Bool = true, elements: TUIOSettings.Elements = .matching([])) -> TUIOSettings {
        var settings = TUIOSettings(target: ListenAddress(host: "127.0.0.1", port: 3333), source: "motiond@test")
        settings.version = version
        settings.contacts = contacts
        settings.elements = elements
        return settings
    }

    func frame(_ time: Double, _ contacts: [(slot: Int, phase: TouchPhase, x: Double, y: Double)]) -> TouchFrame {
        TouchFrame(time: time, contacts: contacts.map {
            TouchContact(slot: $0.slot, trackingID: Int32($0.slot + 100), phase: $0.phase, deviceX: 0, deviceY: 0, position: Point(x: $0.x, y: $0.y))
        })
    }

    func messages(_ sink: RecordedDatagrams, _ address: String) throws -> [[OSCTestDecoder.Message]] {
        try sink.bundles().map { $0.filter { $0.address == address } }.filter { !$0.isEmpty }
    }

    @Test("a finger's session is alive from landing to lift; set only when it moved; fseq increases")
    func cursorLife() throws {
        let (output, sinks) = output([settings()], elements: [])
        output.publish([], time: 0)
        output.take(frame(1, [(0, .began, 500, 250)]), device: 0)
        output.publish([], time: 1)
        output.take(frame(1.1, [(0, .moved, 700, 250), (1, .began, 100, 100)]), device: 0)
        output.publish([], time: 1.1)
        output.take(frame(1.2, [(0, .stationary, 700, 250), (1, .moved, 100, 200)]), device: 0)
        output.publish([], time: 1.2)
        output.take(frame(1.3, [(0, .ended, 700, 250), (1, .stationary, 100, 200)]), device: 0)
        output.publish([], time: 1.3)
        output.take(frame(1.4, [(1, .cancelled, 100, 200)]), device: 0)
        output.publish([], time: 1.4)
        let bundles = try messages(sinks[0], "/tuio/2Dcur")
        #expect(bundles.count == 6)
        let alive = bundles.map { $0.first { $0.arguments.first == .string("alive") }!.arguments.dropFirst().compactMap(\.int) }
        #expect(alive == [[], [1], [1, 2], [1, 2], [2], []])
        let sets = bundles.map { $0.filter { $0.arguments.first == .string("set") }.map { Array($0.arguments.dropFirst()) } }
        #expect(sets[1] == [[.int(1), .float(0.25), .float(0.25), .float(0), .float(0), .float(0)]], "normalised by the screen's width and height")
        #expect(sets[2].map { $0[0] } == [.int(1), .int(2)])
        #expect(sets[2][0][1] == .float(0.35) && sets[2][0][3] == .float(1), "0.1 of the width in 0.1 s: one width per second")
        #expect(sets[3].map { $0[0] } == [.int(2)], "the finger that did not move has no set")
        let fseq = bundles.map { $0.last!.arguments[1].int! }
        #expect(fseq == Array(1...6))
    }

    @Test("elements: sessions for those chosen, class ids from the configuration's order, angles from 0 to 2π")
    func elements() throws {
        let card = Element(id: "card", center: Point(x: 1000, y: 500), size: Size(width: 10, height: 10))
        let photo = Element(id: "photo", center: Point(x: 500, y: 500), size: Size(width: 10, height: 10))
        let (output, sinks) = output([settings(contacts: false, elements: .matching(["photo"]))], elements: [card, photo])
        output.publish([card, photo], time: 0)
        photo.rotation.value = -.pi / 2
        card.position.value = Point(x: 0, y: 0)
        output.publish([card, photo], time: 0.5)
        card.position.value = Point(x: 10, y: 0)
        output.publish([card, photo], time: 0.6)
        let bundles = try messages(sinks[0], "/tuio/2Dobj")
        #expect(bundles.count == 2, "the card is not this target's: its move sends nothing")
        let sets = bundles.map { $0.filter { $0.arguments.first == .string("set") }.map { Array($0.arguments.dropFirst()) } }
        #expect(sets[0] == [[.int(1), .int(1), .float(0.25), .float(0.5), .float(0), .float(0), .float(0), .float(0), .float(0), .float(0)]])
        #expect(sets[1][0][4] == .float(Float(3 * Double.pi / 2)), "-π/2 is sent as 3π/2")
        #expect(sets[1][0][7] == .float(Float(-0.25 / 0.5)), "a quarter turn back in 0.5 s: -0.5 turns per second")
    }

    @Test("predicted = true: an element goes out where touch prediction says it will be; without, where it is")
    func predicted() throws {
        let engine = MotionEngine(scene: Scene(size: screen), clock: ManualFrameClock(now: 0), prediction: 0.016)
        let card = Element(id: "card", center: Point(x: 500, y: 500), size: Size(width: 400, height: 400))
        engine.add(card, interactions: [DirectlyManipulable()])
        for index in 0..<20 {
            let t = Double(index) * 0.008
            engine.process(frame(t, [(0, index == 0 ? .began : .moved, 500 + 500 * t, 500)]))
        }
        let pose = try #require(card.predictedPose)
        #expect(abs(pose.position.x - card.position.value.x - 8) < 1e-6, "500 px/s for 16 ms")
        var ahead = settings(contacts: false, elements: .all)
        ahead.predicted = true
        let sinks = Sinks()
        let make: (ListenAddress) -> DatagramSink = { _ in
            let sink = RecordedDatagrams()
            sinks.all.append(sink)
            return sink
        }
        let measured = TUIOOutput(settings: [settings(contacts: false, elements: .all)], screen: screen, elementIDs: ["card"], makeSink: make)
        let predicted = TUIOOutput(settings: [ahead], screen: screen, elementIDs: ["card"], predicted: true, makeSink: make)
        measured.publish([card], time: 1)
        predicted.publish([card], time: 1)
        func x(_ sink: RecordedDatagrams) throws -> Float? {
            try messages(sink, "/tuio/2Dobj").last?.first { $0.arguments.first == .string("set") }?.arguments[3].float
        }
        #expect(try x(sinks[0]) == Float(card.position.value.x / screen.width))
        #expect(try x(sinks[1]) == Float(pose.position.x / screen.width))
    }

    @Test("2.0: every frame's alv lists every session, the elements' too when only a finger moved")
    func oneAliveList() throws {
        let card = Element(id: "card", center: Point(x: 1000, y: 500), size: Size(width: 10, height: 10))
        let (output, sinks) = output([settings(.v2_0, elements: .all)], elements: [card])
        output.publish([card], time: 0)
        output.take(frame(0.5, [(0, .began, 500, 250)]), device: 3)
        output.publish([card], time: 0.5)
        let bundles = try sinks[0].bundles()
        #expect(bundles.count == 2)
        #expect(bundles[1].map(\.address) == ["/tuio2/frm", "/tuio2/ptr", "/tuio2/alv"], "the card did not change: no tok")
        #expect(bundles[1].last?.arguments == [.int(2), .int(1)])
    }

    @Test("every target gets its full state at most once a second while frames go out")
    func fullState() throws {
        let card = Element(id: "card", center: Point(x: 1000, y: 500), size: Size(width: 10, height: 10))
        let (output, sinks) = output([settings(elements: .all)], elements: [card])
        output.publish([card], time: 0)
        for step in 1...25 {
            output.take(frame(Double(step) / 10, [(0, step == 1 ? .began : .moved, Double(step), 0)]), device: 0)
            output.publish([card], time: Double(step) / 10)
        }
        let objectSets = try sinks[0].bundles().enumerated().filter { $0.element.contains { $0.address == "/tuio/2Dobj" && $0.arguments.first == .string("set") } }.map(\.offset)
        #expect(objectSets == [0, 10, 20], "at 0, 1 and 2 s")
    }

    @Test("a reload keeps frame numbers and fingers; elements get new sessions; the end says nothing is alive")
    func reloadAndFinish() throws {
        let card = Element(id: "card", center: Point(x: 1000, y: 500), size: Size(width: 10, height: 10))
        let (output, sinks) = output([settings(elements: .all)], elements: [card])
        output.publish([card], time: 0)
        output.take(frame(0.1, [(0, .began, 100, 100)]), device: 0)
        output.publish([card], time: 0.1)
        let again = Element(id: "card", center: Point(x: 1000, y: 500), size: Size(width: 10, height: 10))
        output.configure([settings(.v2_0, elements: .all)], screen: screen, elementIDs: ["card"])
        #expect(sinks[0].closed)
        output.publish([again], time: 0.2)
        output.finish()
        let after = try sinks[1].bundles()
        #expect(after.count == 2)
        #expect(after[0].first?.arguments.first == .int(3), "frame numbers go on")
        #expect(after[0].last?.arguments == [.int(2), .int(3)], "the finger keeps session 2, the card gets 3")
        #expect(after[1].last?.address == "/tuio2/alv" && after[1].last?.arguments == [])
        #expect(sinks[1].closed)
    }
}

extension TUIOOutput {
    /// A frame from the device numbered `device`, each contact a finger numbered by its device
    /// and tracking id, as the engine's numbers would tell them apart.
    func take(_ frame: TouchFrame, device: Int) {
        take(frame.contacts.map { ReportedContact(device: device, finger: device << 32 | Int($0.trackingID), contact: $0, predicted: nil) }, time: frame.time)
    }
}
