import MotionCore
import DaemonTestSupport
import Testing
import TouchInput
@testable import MotionConfiguration
@testable import MotionDaemon

/// `lock` and `unlock`: cleaning the screen. While locked no touch reaches the scene, the
/// clients or the apps (the virtual touchscreens: see the encoder's and the lab's tests for
/// the cancel the apps see), and the lock ends by itself.
@Suite("Locking touches out")
struct LockTests {
    static let configuration = """
        [[element]]
        id = "card"
        center = [400, 400]
        size = [200, 200]
        [element.draggable]
        """

    static func contact(_ id: Int32, _ phase: TouchPhase, _ x: Double, _ y: Double) -> TouchContact {
        fingerContact(id, phase, x, y)
    }

    @Test("a lock ends the drag in progress, empties screen.contacts, says screen.locked, lets no touch move anything, and ends by itself")
    func lockAndExpire() throws {
        let clock = ManualFrameClock(now: 10)
        let scheduler = HandScheduler(now: 10)
        let daemon = Daemon(configuration: try Configuration.parse(Self.configuration, file: "l.toml"), clock: clock, idleScheduler: scheduler, controlPolicy: { _ in true })
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        daemon.receive(#"{"id":1,"op":"subscribe","streams":["card.*","screen.contacts","screen.locked"]}"#, from: session)
        _ = try output.take()
        let panel = DeviceIdentity(number: 0, node: "/dev/input/event7")
        func frame(_ time: Double, _ contacts: TouchContact...) {
            clock.now = time
            scheduler.advance(to: time)
            daemon.process(TouchFrame(time: time, contacts: contacts), from: panel)
        }
        frame(10.0, Self.contact(1, .began, 400, 400))
        for step in 1...5 { frame(10 + Double(step) / 50, Self.contact(1, .moved, 400 + 20 * Double(step), 400)) }
        #expect(try output.take().contains { $0["stream"]?.string == "card.position" }, "dragging")

        clock.now = 10.2
        scheduler.advance(to: 10.2)
        daemon.receive(#"{"id":2,"op":"lock","for":5}"#, from: session)
        let locking = try output.take()
        let reply = try #require(locking.first { $0["id"]?.integer == 2 })
        #expect(reply["result"]?["locked"]?.bool == true && reply["result"]?["until"]?.number == 15.2, "\(reply)")
        #expect(locking.contains { $0["stream"]?.string == "card.drag" && $0["state"]?.string == "cancelled" }, "\(locking)")
        #expect(locking.contains { $0["stream"]?.string == "screen.locked" && $0["value"]?.bool == true })
        #expect(locking.contains { $0["stream"]?.string == "screen.contacts" && $0["value"]?.array?.isEmpty == true })
        let position = daemon.engine.scene.element("card")!.position.value

        // The finger moves on and another lands: nothing moves, nothing is reported.
        for step in 1...5 { frame(10.2 + Double(step) / 50, Self.contact(1, .moved, 520 + 20 * Double(step), 400), Self.contact(2, .began, 400, 400)) }
        frame(10.5, Self.contact(1, .ended, 620, 400), Self.contact(2, .ended, 400, 400))
        #expect(try output.take().isEmpty)
        #expect(daemon.engine.scene.element("card")!.position.value == position)

        // It ends by itself at 15.2, on the daemon's timer.
        clock.now = 15.3
        scheduler.advance(to: 15.3)
        #expect(try output.take().contains { $0["stream"]?.string == "screen.locked" && $0["value"]?.bool == false })
        frame(16.0, Self.contact(3, .began, 400, 400))
        for step in 1...5 { frame(16 + Double(step) / 50, Self.contact(3, .moved, 400 + 20 * Double(step), 400)) }
        #expect(try output.take().contains { $0["stream"]?.string == "card.position" }, "touches move the card again")
    }

    @Test("unlock ends it early; lock needs control; `for` is 1 s to an hour")
    func unlockAndRefusals() throws {
        let (daemon, clock) = try makeDaemon()
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        _ = try output.take()
        daemon.receive(#"{"id":1,"op":"lock"}"#, from: session)
        #expect(try output.take().first { $0["id"]?.integer == 1 }?["result"]?["until"]?.number == clock.now + 30, "30 s by default")
        daemon.receive(#"{"id":2,"op":"unlock"}"#, from: session)
        #expect(try output.take().first { $0["id"]?.integer == 2 }?["result"]?["locked"]?.bool == false)
        #expect(!daemon.engine.isLocked)
        for bad in [#"0"#, #"7200"#, #""long""#] {
            daemon.receive(#"{"id":3,"op":"lock","for":"# + bad + "}", from: session)
            let reply = try #require(try output.take().first)
            #expect(reply["error"]?["code"]?.string == "bad_request", "\(bad): \(reply)")
        }
        let (guarded, _) = try makeDaemon(control: false)
        let reader = RecordingOutput()
        guarded.receive(#"{"id":4,"op":"lock"}"#, from: guarded.connect(reader, credentials: nil))
        #expect(try reader.take().contains { $0["error"]?["code"]?.string == "forbidden" })
        #expect(!guarded.engine.isLocked)
    }

    @Test("while locked the engine reports no contact and gives none to the apps; a finger down across the end stays the apps' no more")
    func engineLock() throws {
        let engine = try Configuration.parse(Self.configuration, file: "l.toml").makeEngine(clock: ManualFrameClock())
        _ = engine.process(TouchFrame(time: 1, contacts: [Self.contact(1, .began, 1000, 800)]))
        _ = engine.lock(at: 1.1, until: 2)
        #expect(engine.process(TouchFrame(time: 1.2, contacts: [Self.contact(1, .moved, 1010, 800), Self.contact(2, .began, 900, 800)])).contacts.isEmpty)
        #expect(engine.nextDeadline == 2)
        _ = engine.tick(at: 2)
        #expect(!engine.isLocked)
        let after = engine.process(TouchFrame(time: 2.1, contacts: [Self.contact(1, .moved, 1020, 800), Self.contact(2, .moved, 910, 800), Self.contact(3, .began, 800, 800)]))
        #expect(after.contacts.map(\.contact.trackingID) == [3], "the fingers down across the end are in no report: \(after.contacts)")
        #expect(after.contacts.map(\.forApps) == [true])
        let lifted = engine.process(TouchFrame(time: 2.2, contacts: [Self.contact(1, .ended, 1020, 800), Self.contact(2, .ended, 910, 800), Self.contact(3, .moved, 810, 800)]))
        #expect(lifted.contacts.map(\.contact.trackingID) == [3], "nor as they lift")
        #expect(!engine.process(TouchFrame(time: 2.3, contacts: [Self.contact(3, .ended, 810, 800)])).contacts.isEmpty)
        #expect(engine.nextIdleDeadline != nil, "every finger lifted: the screen may go idle again")
    }

    @Test("a lock goes on across a reload that makes the scene anew, and still ends by itself")
    func acrossReload() throws {
        let clock = ManualFrameClock(now: 10)
        let scheduler = HandScheduler(now: 10)
        let daemon = Daemon(configuration: try Configuration.parse(Self.configuration, file: "l.toml"), clock: clock, idleScheduler: scheduler, controlPolicy: { _ in true })
        _ = daemon.lock(for: 5)
        daemon.reload(try Configuration.parse(Self.configuration.replacingOccurrences(of: "[400, 400]", with: "[600, 400]"), file: "l.toml"))
        #expect(daemon.engine.isLocked && daemon.engine.lockedUntil == 15, "the new engine is locked until the same time")
        daemon.publishPending()
        #expect(daemon.engine.lastValue("screen.locked") == .bool(true))
        clock.now = 15.1
        scheduler.advance(to: 15.1)
        #expect(!daemon.engine.isLocked)
    }

    @Test("an exclusive long press recognized on the timer, fingers held still, reports the fingers it took, for the virtual touchscreens to cancel at once")
    func takenOnATick() throws {
        let configuration = try Configuration.parse(ScreenGestureProtocolTests.configuration, file: "g.toml")
        let engine = configuration.makeEngine(clock: ManualFrameClock(now: 10))
        let landed = engine.process(TouchFrame(time: 10, contacts: [Self.contact(1, .began, 300, 900), Self.contact(2, .began, 1600, 900)]))
        #expect(landed.contacts.map(\.forApps) == [true, true], "on no element")
        let due = try #require(engine.nextDeadline)
        let report = engine.tick(at: due)
        #expect(Set(report.takenFingers) == Set(landed.contacts.map(\.finger)), "\(report.takenFingers)")
    }
}

extension LockTests {
    @Test("a lock ends a screen gesture in progress: the long press that began ends in the lock's report")
    func endsScreenGestures() throws {
        let engine = try Configuration.parse(ScreenGestureProtocolTests.configuration, file: "g.toml").makeEngine(clock: ManualFrameClock(now: 10))
        _ = engine.process(TouchFrame(time: 10, contacts: [Self.contact(1, .began, 300, 900), Self.contact(2, .began, 1600, 900)]))
        let began = engine.tick(at: try #require(engine.nextDeadline))
        let states = { (report: FrameReport) in report.events.compactMap { event -> String? in
            guard case .screenGesture(_, _, let gesture) = event, gesture.name == "admin" else { return nil }
            return gesture.gesture.state.rawValue
        } }
        #expect(states(began) == ["began"])
        let locked = engine.lock(at: 12, until: 20)
        #expect(states(locked).count == 1 && states(locked) != ["began"], "\(states(locked))")
    }
}

extension LockTests {
    @Test("a long press whose fingers land during a lock is recognized never: not on the timer mid-lock, not after; those fingers are in no stream until they lift")
    func clothDuringLock() throws {
        let clock = ManualFrameClock(now: 9.9)
        let scheduler = HandScheduler(now: 9.9)
        let configuration = try Configuration.parse(ScreenGestureProtocolTests.configuration, file: "g.toml")
        let daemon = Daemon(configuration: configuration, clock: clock, idleScheduler: scheduler, controlPolicy: { _ in true })
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        daemon.receive(#"{"id":1,"op":"subscribe","streams":["screen.gesture","screen.contacts","screen.locked"]}"#, from: session)
        let panel = DeviceIdentity(number: 0, node: "/dev/input/event7")
        func at(_ time: Double) {
            clock.now = time
            scheduler.advance(to: time)
        }
        func frame(_ time: Double, _ contacts: TouchContact...) {
            at(time)
            daemon.process(TouchFrame(time: time, contacts: contacts), from: panel)
        }
        frame(9.9, Self.contact(5, .began, 300, 100))
        _ = try output.take()
        at(10)
        daemon.receive(#"{"id":2,"op":"lock","for":2}"#, from: session)
        #expect(try output.take().contains { $0["stream"]?.string == "screen.contacts" && $0["value"]?.array?.isEmpty == true })

        // The finger down at the lock lifts; then the cloth: two fingers, the admin long
        // press's, held still past its second.
        frame(10.05, Self.contact(5, .ended, 300, 100))
        frame(10.1, Self.contact(1, .began, 300, 900), Self.contact(2, .began, 1600, 900))
        at(11.5)
        #expect(try output.take().isEmpty, "nothing is recognized or reported mid-lock")
        at(12.1)
        let ending = try output.take()
        #expect(ending.map { $0["stream"]?.string } == ["screen.locked"], "the lock ends, and only that: \(ending)")

        // Down across the end, the cloth does nothing until it lifts.
        frame(12.2, Self.contact(1, .moved, 320, 900), Self.contact(2, .moved, 1620, 900))
        at(13.5)
        frame(13.6, Self.contact(1, .ended, 320, 900), Self.contact(2, .ended, 1620, 900))
        let after = try output.take()
        #expect(after.isEmpty, "\(after)")

        // A finger landing now is the screen's again.
        frame(14, Self.contact(3, .began, 300, 900))
        #expect(try output.take().contains { $0["stream"]?.string == "screen.contacts" && $0["value"]?.array?.count == 1 })
    }
}

extension LockTests {
    @Test("a cloth that lands during a short lock and is still down when it ends fires no long press afterwards")
    func clothAcrossShortLock() throws {
        let engine = try Configuration.parse(ScreenGestureProtocolTests.configuration, file: "g.toml").makeEngine(clock: ManualFrameClock(now: 10))
        _ = engine.lock(at: 10, until: 10.5)
        _ = engine.process(TouchFrame(time: 10.1, contacts: [Self.contact(1, .began, 300, 900), Self.contact(2, .began, 1600, 900)]))
        _ = engine.tick(at: 10.5)
        #expect(!engine.isLocked)
        #expect(engine.nextDeadline == nil, "no press pending: the cloth is no one's")
        let held = engine.tick(at: 11.5)
        #expect(held.events.isEmpty, "\(held.events)")
        let moved = engine.process(TouchFrame(time: 11.6, contacts: [Self.contact(1, .moved, 320, 900), Self.contact(2, .moved, 1620, 900)]))
        #expect(moved.events.isEmpty && moved.contacts.isEmpty)
    }
}
