import Logging
import MotionCore
import NIOConcurrencyHelpers
import Testing
import TouchInput
@testable import MotionServer
import MotionWire
@testable import MotionDaemon

/// What the log says of the contact filters' notices: every stuck contact and palm, and
/// jumps and re-pairings at most 10 lines in 10 s per device and kind, counting the rest;
/// and when a touchscreen is no longer read, whether it went away (a warning: someone should
/// look) or motiond let go of it (information).
@Suite("Input log")
struct InputLogTests {
    static let panel = DeviceIdentity(number: 0, node: "/dev/input/event5")
    static let other = DeviceIdentity(number: 1, node: "/dev/input/event6")

    static func notice(_ kind: ContactFilters.Notice.Kind, _ id: Int32, at time: Double) -> ContactFilters.Notice {
        ContactFilters.Notice(kind: kind, trackingID: id, position: Point(x: 10, y: 20), time: time)
    }

    @Test("60 contacts jumping on every frame for a second (6,000 notices) make 10 lines; the next, 10 s after the first, counts the 5,991 not logged; re-pairings, and another device's jumps, have lines of their own")
    func jumpsAreRateLimited() {
        let lines = ReplayDriverTests.LogLines()
        var now = 0.0
        var log = InputLog(logger: lines.logger) { now }
        for frame in 0..<100 {
            now = Double(frame) / 100
            for contact in 0..<60 { log.write(.filtered(Self.panel, Self.notice(.jump, Int32(contact), at: now))) }
        }
        #expect(InputLog.noticeLimit == 10)
        #expect(lines.all.count == 10, "\(lines.all.count) lines: \(lines.all.prefix(12))")
        #expect(lines.all == (0..<10).map { "/dev/input/event5: " + Self.notice(.jump, Int32($0), at: 0).text }, "\(lines.all)")
        log.write(.filtered(Self.panel, Self.notice(.repaired(inSlotOf: 8), 7, at: now)))
        log.write(.filtered(Self.other, Self.notice(.jump, 3, at: now)))
        #expect(lines.all.count == 12, "\(lines.all)")
        #expect(lines.all.allSatisfy { !$0.contains("not logged") }, "\(lines.all)")
        // Still within 10 s of the first line: held back, and counted.
        now = 9.9
        log.write(.filtered(Self.panel, Self.notice(.jump, 1, at: now)))
        #expect(lines.all.count == 12, "\(lines.all)")
        now = 10.5
        log.write(.filtered(Self.panel, Self.notice(.jump, 2, at: now)))
        #expect(lines.all.count == 13, "\(lines.all)")
        #expect(lines.all.last == "/dev/input/event5: " + Self.notice(.jump, 2, at: now).text + " (and 5991 more jumps on this device since the last such line, not logged)",
                "\(String(describing: lines.all.last))")
    }

    @Test("every stuck contact and palm is logged, however many; a device plugged in again starts afresh")
    func stuckAndPalmsAreAllLogged() {
        let lines = ReplayDriverTests.LogLines()
        let now = 1.0
        var log = InputLog(logger: lines.logger) { now }
        for contact in 0..<50 {
            log.write(.filtered(Self.panel, Self.notice(contact % 2 == 0 ? .stuck : .palm(fromLanding: false), Int32(contact), at: now)))
        }
        #expect(lines.all.count == 50)
        for contact in 0..<12 { log.write(.filtered(Self.panel, Self.notice(.jump, Int32(contact), at: now))) }
        #expect(lines.all.count == 60)
        log.write(.removed(Self.panel, why: .unplugged))
        log.write(.filtered(Self.panel, Self.notice(.jump, 3, at: now)))
        #expect(lines.all.count == 62 && lines.all.last?.contains("contact 3 jumped") == true, "\(lines.all.suffix(2))")
    }

    /// What a logger was told, with each message's level.
    final class Lines: LogHandler, @unchecked Sendable {
        private let lines = NIOLockedValueBox<[(Logger.Level, String)]>([])
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) { lines.withLockedValue { $0.append((event.level, event.message.description)) } }
        var all: [(Logger.Level, String)] { lines.withLockedValue { $0 } }
        var logger: Logger { Logger(label: "input") { _ in self } }
    }

    @Test("a touchscreen unplugged went away, one that failed to read is named with the reason (warnings); one a reload deselects, or a stop closes, is no longer read (info)",
          arguments: [
            (TouchInputEvent.Removal.unplugged, Logger.Level.warning, "/dev/input/event7 went away; its touches were cancelled"),
            (.failed(errno: 22), .warning, "/dev/input/event7 could not be read (Invalid argument), so motiond let it go; its touches were cancelled"),
            (.deselected, .info, "stopped reading /dev/input/event7, which the configuration no longer selects; its touches were cancelled"),
            (.stopped, .info, "stopped reading /dev/input/event7: motiond is stopping"),
          ] as [(TouchInputEvent.Removal, Logger.Level, String)])
    func removal(why: TouchInputEvent.Removal, level: Logger.Level, message: String) {
        let lines = Lines()
        var log = InputLog(logger: lines.logger)
        log.write(.removed(DeviceIdentity(number: 7, node: "/dev/input/event7"), why: why))
        #expect(lines.all.map(\.0) == [level])
        #expect(lines.all.map(\.1) == [message])
    }
}
