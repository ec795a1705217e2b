import Logging
import NIOConcurrencyHelpers
import Testing
import TouchInput
@testable import MotionServer

/// What the log says when a touchscreen is no longer read: an operator tells a panel that
/// went away (a warning: someone should look) from one motiond let go of (information).
@Suite("The input's log")
struct InputLogTests {
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

    @Test("a touchscreen unplugged went away (warning); one a reload deselects, or a stop closes, is no longer read (info)",
          arguments: [
            (TouchInputEvent.Removal.unplugged, Logger.Level.warning, "/dev/input/event7 went away; its touches were cancelled"),
            (.deselected, .info, "stopped reading /dev/input/event7, which the configuration no longer selects; its touches were cancelled"),
            (.stopped, .info, "stopped reading /dev/input/event7: motiond is stopping"),
          ] as [(TouchInputEvent.Removal, Logger.Level, String)])
    func removal(why: TouchInputEvent.Removal, level: Logger.Level, message: String) {
        let lines = Lines()
        InputLog.write(.removed(DeviceIdentity(number: 7, node: "/dev/input/event7"), why: why), to: lines.logger)
        #expect(lines.all.map(\.0) == [level])
        #expect(lines.all.map(\.1) == [message])
    }
}
