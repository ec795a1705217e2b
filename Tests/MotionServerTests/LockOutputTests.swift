import MotionCore
import OSCTestSupport
import Testing
import TouchInput
@testable import MotionConfiguration
@testable import MotionServer
@testable import MotionTUIO

/// What a lock looks like from outside the scene: TUIO's receivers drop the fingers it took.
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
        let scheduler = ScreenGestureProtocolTests.HandScheduler(now: 10)
        let tuio = TUIOTargets(makeSink: { _ in datagrams }, wallClock: { (1_800_000_000, 0) })
        let daemon = Daemon(configuration: configuration, clock: clock, idleScheduler: scheduler, output: tuio, controlPolicy: { _ in true })
        let panel = DeviceIdentity(number: 0, node: "/dev/input/event7")
        func frame(_ time: Double, _ contacts: TouchContact...) {
            clock.now = time
            scheduler.advance(to: time)
            daemon.process(TouchFrame(time: time, contacts: contacts), from: panel)
        }
        frame(10, LockTests.contact(1, .began, 500, 500))
        #expect(try datagrams.takeAlive().last == [1])

        clock.now = 10.2
        _ = daemon.lock(for: 2)
        #expect(try datagrams.takeAlive() == [[]], "the lock's own bundle: nothing alive")
        frame(10.4, LockTests.contact(1, .moved, 600, 500), LockTests.contact(2, .began, 900, 500))
        frame(11.5, LockTests.contact(1, .ended, 600, 500), LockTests.contact(2, .moved, 910, 500))
        frame(12.5, LockTests.contact(2, .moved, 920, 500))
        #expect(!daemon.engine.isLocked)
        frame(13.6, LockTests.contact(2, .moved, 930, 500))
        let after = try datagrams.takeAlive()
        #expect(after.allSatisfy { $0.isEmpty }, "no finger alive after the lock began: \(after)")

        frame(14, LockTests.contact(3, .began, 500, 500))
        #expect(try datagrams.takeAlive().last?.count == 1, "a finger landing after the lock is sent")
    }
}
