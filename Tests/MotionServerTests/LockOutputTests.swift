import Glibc
import MotionCore
import OSCTestSupport
import DaemonTestSupport
import Testing
import TouchInput
@testable import MotionConfiguration
@testable import MotionServer
@testable import MotionTUIO
import MotionWire
@testable import MotionDaemon

/// What a lock looks like from outside the scene: TUIO's receivers and the apps' virtual
/// touchscreens drop the fingers it took,
/// `health` says it, a reload does not say it again, and `for` takes nothing but seconds.
@Suite("A lock seen from outside")
struct LockOutputTests {
    /// Every datagram sent, to every target.
    final class Datagrams: DatagramSink {
        var sent: [[UInt8]] = []
        func send(_ datagram: borrowing [UInt8]) -> Int32? {
            sent.append(copy datagram)
            return nil
        }
        func close() {}

        /// The cursors alive in each bundle sent since the last call, and forgets them.
        func takeAlive() throws -> [[Int32]] {
            defer { sent = [] }
            return try sent.compactMap { datagram in
                let alive = try OSCTestDecoder.bundle(datagram).messages.first { $0.address == "/tuio/2Dcur" && $0.arguments.first == .string("alive") }
                return alive.map { $0.arguments.dropFirst().compactMap(\.int) }
            }
        }
    }

    @Test("TUIO: the finger down at the lock leaves at once, lifting during the lock changes nothing, and neither it nor one landing during the lock appears after")
    func tuioTakesTheCancels() throws {
        let datagrams = Datagrams()
        let configuration = try Configuration.parse("""
            [[tuio]]
            target = "127.0.0.1:3333"
            """, file: "t.toml")
        let clock = ManualFrameClock(now: 10)
        let scheduler = HandScheduler(now: 10)
        let tuio = TUIOTargets(makeSink: { _ in datagrams }, wallClock: { (1_800_000_000, 0) })
        let daemon = Daemon(configuration: configuration, clock: clock, idleScheduler: scheduler, tuio: tuio, controlPolicy: { _ in true })
        daemon.configureSinks()  // started, as DaemonService starts it
        let panel = DeviceIdentity(number: 0, node: "/dev/input/event7")
        func frame(_ time: Double, _ contacts: TouchContact...) {
            clock.now = time
            scheduler.advance(to: time)
            daemon.process(TouchFrame(time: time, contacts: contacts), from: panel)
        }
        frame(10, fingerContact(1, .began, 500, 500))
        #expect(try datagrams.takeAlive().last == [1])

        clock.now = 10.2
        _ = daemon.lock(for: 2)
        #expect(try datagrams.takeAlive() == [[]], "the lock's own bundle: nothing alive")
        frame(10.4, fingerContact(1, .moved, 600, 500), fingerContact(2, .began, 900, 500))
        frame(11.5, fingerContact(1, .ended, 600, 500), fingerContact(2, .moved, 910, 500))
        frame(12.5, fingerContact(2, .moved, 920, 500))
        #expect(!daemon.engine.isLocked)
        frame(13.6, fingerContact(2, .moved, 930, 500))
        let after = try datagrams.takeAlive()
        #expect(after.allSatisfy { $0.isEmpty }, "no finger alive after the lock began: \(after)")

        frame(14, fingerContact(3, .began, 500, 500))
        #expect(try datagrams.takeAlive().last?.count == 1, "a finger landing after the lock is sent")
    }

    @Test("the apps' virtual touchscreen (cancel = \"cancel\") takes the lock's cancels: the finger down at the lock turns palm and is released at once, and nothing of the lock's fingers is shown after, even once it ended")
    func virtualTouchscreenTakesTheCancels() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        let (reader, writer) = (ends[0], ends[1])
        defer { close(reader) }
        _ = fcntl(reader, F_SETFL, O_NONBLOCK)
        let configuration = try Configuration.parse("[[virtual_touchscreen]]\noutput = \"HDMI-A-1\"\ncancel = \"cancel\"\n\n[[device]]\nvirtual_touchscreen = \"HDMI-A-1\"\n",
                                                    file: "v.toml")
        let clock = ManualFrameClock(now: 10)
        let scheduler = HandScheduler(now: 10)
        let daemon = Daemon(configuration: configuration, clock: clock, idleScheduler: scheduler, controlPolicy: { _ in true })
        daemon.virtualTouchscreens.makeDevice = { output, geometry in VirtualTouchscreen(output: output, geometry: geometry, writingTo: writer) }
        let notes = daemon.configureSinks()
        try #require(daemon.virtualOutputs == ["HDMI-A-1"], "\(notes)")
        /// The `EV_ABS` events written since the last call, as (code, value).
        func shown() -> [[Int32]] {
            var bytes: [UInt8] = [], buffer = [UInt8](repeating: 0, count: 4096)
            while case let count = read(reader, &buffer, buffer.count), count > 0 { bytes += buffer[..<count] }
            let header = MemoryLayout<timeval>.size, size = MemoryLayout<timeval>.size + 8
            return stride(from: 0, to: bytes.count / size * size, by: size).compactMap { start in
                func field(_ offset: Int, _ width: Int) -> Int32 {
                    (0..<width).reduce(0) { $0 | Int32(bytes[start + header + offset + $1]) << (8 * $1) }
                }
                return field(0, 2) == Int32(EventType.absolute) ? [field(2, 2), field(4, 4)] : nil
            }
        }
        let panel = DeviceIdentity(number: 0, node: "/dev/input/event7", description: DeviceDescription(name: "Panel"))
        func frame(_ time: Double, _ contacts: TouchContact...) {
            clock.now = time
            scheduler.advance(to: time)
            daemon.process(TouchFrame(time: time, contacts: contacts), from: panel)
        }
        frame(10, fingerContact(1, .began, 500, 500))
        #expect(shown().contains { $0[0] == Int32(AbsoluteAxis.trackingID) && $0[1] >= 0 }, "the finger is shown")

        clock.now = 10.2
        _ = daemon.lock(for: 2)
        let locking = shown()
        #expect(locking.contains([Int32(AbsoluteAxis.toolType), ToolType.palm]) && locking.contains([Int32(AbsoluteAxis.trackingID), -1]), "\(locking)")
        frame(10.4, fingerContact(1, .moved, 600, 500), fingerContact(2, .began, 900, 500))
        frame(11.5, fingerContact(1, .ended, 600, 500), fingerContact(2, .moved, 910, 500))
        frame(12.5, fingerContact(2, .moved, 920, 500))
        #expect(!daemon.engine.isLocked)
        frame(13, fingerContact(2, .ended, 930, 500))
        #expect(shown().isEmpty, "nothing of the lock's fingers")

        frame(14, fingerContact(3, .began, 500, 500))
        #expect(shown().contains { $0[0] == Int32(AbsoluteAxis.trackingID) && $0[1] >= 0 }, "a finger landing after the lock is shown")
        daemon.finish(reason: "the test ends")
    }

    @Test("health says how long a lock lasts yet, and is not unhealthy for it; null once it ended")
    func healthSaysLocked() throws {
        let (daemon, clock) = try makeDaemon()
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        func health() throws -> JSONInput {
            daemon.receive(#"{"id":9,"op":"health"}"#, from: session)
            return try #require(try output.take().first { $0["id"]?.integer == 9 }?["result"])
        }
        #expect(try health()["locked_for"]?.kind == "null")
        daemon.receive(#"{"id":1,"op":"lock","for":90}"#, from: session)
        clock.now += 30
        let locked = try health()
        #expect(locked["locked_for"]?.number == 60, "\(locked)")
        #expect(!(locked["problems"]?.array ?? []).contains { $0.string?.contains("lock") == true }, "a lock is asked for: no problem")
        daemon.receive(#"{"id":2,"op":"unlock"}"#, from: session)
        #expect(try health()["locked_for"]?.kind == "null")
    }

    @Test("a reload that makes the scene anew while locked sends screen.locked once, with the subscription's values, not again as a change")
    func reloadSaysLockedOnce() throws {
        let (daemon, clock) = try makeDaemon()
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        daemon.receive(#"{"id":1,"op":"subscribe","streams":["screen.locked"]}"#, from: session)
        daemon.receive(#"{"id":2,"op":"lock","for":60}"#, from: session)
        _ = try output.take()
        for reload in 1...2 {
            daemon.reload(daemon.configuration)
            clock.now += 1
            daemon.publishPending()
            daemon.process(TouchFrame(time: clock.now, contacts: [fingerContact(1, .began, 10, 10)]), from: DeviceIdentity(number: 0, node: "/dev/input/event7"))
            let locked = try output.take().filter { $0["stream"]?.string == "screen.locked" }
            #expect(locked.count == 1 && locked.first?["value"]?.bool == true, "reload \(reload): \(locked)")
        }
        daemon.receive(#"{"id":3,"op":"unlock"}"#, from: session)
        #expect(try output.take().contains { $0["stream"]?.string == "screen.locked" && $0["value"]?.bool == false }, "the end is still said")
    }

    @Test("the daemon takes `for` as a JSON number of seconds from 1 to 3600, whatever a client sends")
    func hostileDurations() throws {
        let (daemon, _) = try makeDaemon()
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        _ = try output.take()
        for bad in ["1e999", "-1e999", "-5", "0", "0.999", "3600.001", "1e308", "null", "true", #""0x10""#, #""16""#, "[16]", #"{"s":16}"#] {
            daemon.receive(#"{"id":1,"op":"lock","for":"# + bad + "}", from: session)
            let reply = try #require(try output.take().first)
            #expect(reply["error"]?["code"]?.string == "bad_request" || reply["error"]?["code"]?.string == "bad_json", "\(bad): \(reply)")
            #expect(!daemon.engine.isLocked, "\(bad)")
        }
        daemon.receive(#"{"id":1,"op":"lock","for":3600}"#, from: session)
        #expect(daemon.engine.isLocked)
    }
}
