import Foundation
import Logging
import MotionCore
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOPosix
import DaemonTestSupport
import Testing
@testable import TouchInput
@testable import MotionConfiguration
@testable import MotionServer
import MotionWire
@testable import MotionDaemon

/// `motiond --replay` on an embedded event loop whose time is the replay's clock: what the
/// daemon counts and logs of a replayed device's filters, play after play.
@Suite("Replays in the daemon")
struct ReplayDriverTests {
    /// What a logger was told, message by message.
    final class LogLines: LogHandler, @unchecked Sendable {
        private let lines = NIOLockedValueBox<[String]>([])
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            lines.withLockedValue { $0.append(event.message.description) }
        }
        var all: [String] { lines.withLockedValue { $0 } }
        var logger: Logger { Logger(label: "replay") { _ in self } }
    }

    /// A generated recording, written to a file: a 409.6 mm panel at 10 units/mm with a touch
    /// axis of 0…1000, on which a finger taps (8 mm) at 0 and lifts at 0.05 s, the last frame
    /// the filters let through; then two palms (45 and 50 mm) land at 0.2 and 0.35 s and lift
    /// at 0.45 s, which `palm_size = 300` swallows whole.
    static func palmsAfterTheLastFrame(in directory: URL) throws -> String {
        var device = DeviceDescription(name: "generated palm panel")
        device.properties = [InputProperty.direct]
        device.axes = [
            AbsoluteAxis.slot: AxisInfo(minimum: 0, maximum: 9),
            AbsoluteAxis.trackingID: AxisInfo(minimum: 0, maximum: 65535),
            AbsoluteAxis.positionX: AxisInfo(minimum: 0, maximum: 4095, resolution: 10),
            AbsoluteAxis.positionY: AxisInfo(minimum: 0, maximum: 4095, resolution: 10),
            AbsoluteAxis.touchMajor: AxisInfo(minimum: 0, maximum: 1000),
        ]
        device.codes[EventType.synchronization] = [0]
        device.codes[EventType.absolute] = Set(device.axes.keys)
        var events: [InputEvent] = []
        func abs(_ time: Double, _ code: UInt16, _ value: Int32) { events.append(InputEvent(time: time, type: EventType.absolute, code: code, value: value)) }
        func report(_ time: Double) { events.append(InputEvent(time: time, type: EventType.synchronization, code: SynchronizationCode.report, value: 0)) }
        func land(_ time: Double, slot: Int32, id: Int32, x: Int32, major: Int32) {
            abs(time, AbsoluteAxis.slot, slot); abs(time, AbsoluteAxis.trackingID, id)
            abs(time, AbsoluteAxis.positionX, x); abs(time, AbsoluteAxis.positionY, 1500); abs(time, AbsoluteAxis.touchMajor, major)
            report(time)
        }
        land(0, slot: 0, id: 1, x: 500, major: 80)
        abs(0.05, AbsoluteAxis.trackingID, -1); report(0.05)
        land(0.2, slot: 0, id: 2, x: 1500, major: 450)
        land(0.35, slot: 1, id: 3, x: 3000, major: 500)
        abs(0.45, AbsoluteAxis.trackingID, -1); abs(0.45, AbsoluteAxis.slot, 0); abs(0.45, AbsoluteAxis.trackingID, -1); report(0.45)
        let path = directory.appendingPathComponent("palms.evemu").path
        try EvemuWriter.text(EvemuRecording(device: device, events: events)).write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The driver of that recording on `loop`, with `palm_size = 300`, started: its first
    /// moment is due 0.1 s after the loop's time 0.
    static func replay(_ path: String, loops: Bool, on loop: EmbeddedEventLoop, daemon: Daemon, log: LogLines) throws -> ReplayDriver {
        let configuration = try Configuration.parse("[[device]]\npalm_size = 300\n", file: "palms.toml")
        let driver = try ReplayDriver(path: path, device: nil, configuration: configuration, speed: 1, loops: loops, daemon: daemon, lock: DaemonLock(),
                                      eventLoop: loop, logger: log.logger, pacing: .eventLoopTimers(clock: { Double(loop.now.uptimeNanoseconds) / 1e9 }))
        try driver.start()
        return driver
    }

    /// What `work` returns, run on `loop`, waited for at most 10 s: a hung loop fails the
    /// test instead of holding it.
    static func onLoop<T: Sendable>(_ loop: any EventLoop, _ work: @escaping @Sendable () throws -> T) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let result = NIOLockedValueBox<Result<T, any Error>?>(nil)
        loop.execute {
            result.withLockedValue { $0 = Result { try work() } }
            done.signal()
        }
        try #require(done.wait(timeout: .now() + 10) == .success, "the event loop did not run the work within 10 s")
        return try #require(result.withLockedValue { $0 }).get()
    }

    static func at(_ seconds: Double) -> NIODeadline { .uptimeNanoseconds(UInt64(seconds * 1e9)) }

    static func scratch() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("motiond-replay-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test("palms that land after the replay's last frame are counted and logged when their verdicts are made, as ignored from landing, not cancelled")
    func palmsAfterLastFrame() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try Self.palmsAfterTheLastFrame(in: directory)
        let loop = EmbeddedEventLoop()
        let (daemon, _) = try makeDaemon()
        let log = LogLines()
        let driver = try Self.replay(path, loops: false, on: loop, daemon: daemon, log: log)
        defer { driver.stop() }
        let node = "replay:" + path
        let palms = { daemon.touchscreens.devices.device(node)?.filtered.palms }
        let landed = { log.all.filter { $0.contains("ignored from landing") } }

        // The tap has played; the first palm lands at 0.3 and is one 0.1 s later (0.4), the
        // second, landing at 0.45, when it lifts (0.55).
        loop.advanceTime(to: Self.at(0.35))
        #expect(palms() == 0 && landed().isEmpty)
        loop.advanceTime(to: Self.at(0.45))
        #expect(palms() == 1)
        #expect(landed().count == 1 && landed()[0].hasPrefix("\(node): contact 2 at "), "\(log.all)")
        loop.advanceTime(to: Self.at(5))
        #expect(palms() == 2)
        #expect(landed().count == 2 && landed()[1].hasPrefix("\(node): contact 3 at "), "\(log.all)")
        #expect(!log.all.contains { $0.contains("was cancelled") }, "\(log.all)")
        #expect(log.all.last == "the replay ended")
    }

    @Test("on a thread of its own, as motiond plays: the recording reaches the daemon under its lock, filtered and counted as on the loop's timers, and a looping replay stops when told")
    func ownThread() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try Self.palmsAfterTheLastFrame(in: directory)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        let configuration = try Configuration.parse("[[device]]\npalm_size = 300\n", file: "palms.toml")
        // The daemon runs on the replay's thread and is read on the loop, under this lock.
        let lock = DaemonLock()
        func start(loops: Bool, log: LogLines) throws -> NIOLoopBound<(Daemon, ReplayDriver)> {
            try Self.onLoop(loop) {
                let (daemon, _) = try makeDaemon()
                daemon.mayEnter = { lock.isHeldByThisThread }
                let driver = try ReplayDriver(path: path, device: nil, configuration: configuration, speed: 1, loops: loops, daemon: daemon,
                                              lock: lock, eventLoop: loop, logger: log.logger)
                try driver.start()
                return NIOLoopBound((daemon, driver), eventLoop: loop)
            }
        }
        // Once: it ends by itself, within the recording's half second (10 s allowed).
        let log = LogLines()
        let once = try start(loops: false, log: log)
        let deadline = Date().addingTimeInterval(10)
        while !log.all.contains("the replay ended") && Date() < deadline { usleep(10_000) }
        #expect(log.all.contains("the replay ended"), "\(log.all)")
        let metrics = try Self.onLoop(loop) { lock.withLock { String(decoding: once.value.0.metricsExposition(), as: UTF8.self) } }
        #expect(metrics.contains("motiond_input_frames_total{device=\"replay:\(path)\"} 2"), "the tap's landing and lift")
        #expect(metrics.contains("motiond_contacts_filtered_total{device=\"replay:\(path)\",filter=\"palm\"} 2"))
        try Self.onLoop(loop) { lock.withLock { once.value.1.stop() } }
        // Looping: it plays until stopped, and the stop joins its thread (within a second).
        let loopingLog = LogLines()
        let looping = try start(loops: true, log: loopingLog)
        let played = Date().addingTimeInterval(10)
        while !loopingLog.all.contains(where: { $0.hasPrefix("replaying ") }) && Date() < played { usleep(10_000) }
        try Self.onLoop(loop) { lock.withLock { looping.value.1.stop() } }
        #expect(loopingLog.all.contains(where: { $0.hasPrefix("replaying ") }), "\(loopingLog.all)")
        #expect(!loopingLog.all.contains("the replay ended"), "a looping replay ends only when stopped: \(loopingLog.all)")
    }

    @Test("a replayed device is one identity, replay:FILE, wherever it shows: selected by that node, logged, listed and counted as a touchscreen is")
    func replayedIdentity() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try Self.palmsAfterTheLastFrame(in: directory)
        let node = "replay:" + path
        let loop = EmbeddedEventLoop()
        let (daemon, _) = try makeDaemon()
        let log = LogLines()
        let configuration = try Configuration.parse("[[device]]\nnode = \"\(node)\"\npalm_size = 300\n", file: "palms.toml")
        let driver = try ReplayDriver(path: path, device: nil, configuration: configuration, speed: 1, loops: false, daemon: daemon, lock: DaemonLock(),
                                      eventLoop: loop, logger: log.logger, pacing: .eventLoopTimers(clock: { Double(loop.now.uptimeNanoseconds) / 1e9 }))
        try driver.start()
        defer { driver.stop() }
        loop.advanceTime(to: Self.at(5))

        let device = try #require(daemon.touchscreens.devices.device(node))
        #expect(device.identity == DeviceIdentity(number: 0, node: node, name: "generated palm panel"))
        #expect(log.all.first?.hasPrefix("using \(node) (\"generated palm panel\"), output ") == true, "\(log.all)")
        let listed = try JSONInput(parsing: daemon.touchscreens.devices.json(configuration: configuration).encoded[...])
        let selectedBy = listed["devices"]?.array?.first?["selected_by"]?["device"]
        #expect(selectedBy?["key"]?.string == "node" && selectedBy?["value"]?.string == node)
        let metrics = String(decoding: daemon.metricsExposition(), as: UTF8.self)
        #expect(metrics.contains("motiond_input_frames_total{device=\"\(node)\"} 2"), "the tap's landing and lift")
        #expect(metrics.contains("motiond_contacts_filtered_total{device=\"\(node)\",filter=\"palm\"} 2"))
    }

    @Test("looping, each play counts its palms on from the last play's total, and each is logged once")
    func loopingCounts() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try Self.palmsAfterTheLastFrame(in: directory)
        let loop = EmbeddedEventLoop()
        let (daemon, _) = try makeDaemon()
        let log = LogLines()
        let driver = try Self.replay(path, loops: true, on: loop, daemon: daemon, log: log)
        defer { driver.stop() }
        let node = "replay:" + path
        // A play is 0.45 s of moments and a pause of 1 s: plays begin at 0.1, 1.55, 3.0, 4.45,
        // and each play's first palm is one 0.2 s into it.
        loop.advanceTime(to: Self.at(4.85))
        let logged = log.all.filter { $0.contains("ignored from landing") }
        #expect(logged.count == 7, "\(log.all)")
        #expect(daemon.touchscreens.devices.device(node)?.filtered.palms == 7)
        #expect(logged.filter { $0.contains("contact 2 ") }.count == 4 && logged.filter { $0.contains("contact 3 ") }.count == 3)
    }

    @Test("a looping replay of a recording with nothing to play (a device description) ends instead of recursing")
    func loopingNothing() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("description.evemu").path
        var device = DeviceDescription(name: "panel without events")
        device.properties = [InputProperty.direct]
        device.axes = [AbsoluteAxis.slot: AxisInfo(minimum: 0, maximum: 9), AbsoluteAxis.trackingID: AxisInfo(minimum: 0, maximum: 65535),
                       AbsoluteAxis.positionX: AxisInfo(minimum: 0, maximum: 4095), AbsoluteAxis.positionY: AxisInfo(minimum: 0, maximum: 4095)]
        device.codes[EventType.absolute] = Set(device.axes.keys)
        try EvemuWriter.text(EvemuRecording(device: device, events: [])).write(toFile: path, atomically: true, encoding: .utf8)
        let loop = EmbeddedEventLoop()
        let (daemon, _) = try makeDaemon()
        let log = LogLines()
        let driver = try ReplayDriver(path: path, device: nil, configuration: try Configuration.parse("", file: "empty.toml"), speed: 1, loops: true, daemon: daemon, lock: DaemonLock(),
                                      eventLoop: loop, logger: log.logger, pacing: .eventLoopTimers(clock: { Double(loop.now.uptimeNanoseconds) / 1e9 }))
        try driver.start()
        loop.advanceTime(to: Self.at(2))
        #expect(log.all.last == "the replay ended")
    }
}

@Suite("Filter notices in the log")
struct FilterNoticeTextTests {
    @Test("a palm ignored from landing says so and never says cancelled; one that grew into a palm was cancelled")
    func palmText() {
        var notice = ContactFilters.Notice(kind: .palm(fromLanding: true), trackingID: 7, position: Point(x: 100.4, y: 200.6), time: 1)
        #expect(notice.text == "contact 7 at (100, 201) landed larger than a palm (palm_size): it is ignored from landing until it lifts, and never began")
        notice.kind = .palm(fromLanding: false)
        #expect(notice.text == "contact 7 at (100, 201) is larger than a palm (palm_size) and was cancelled; it is ignored until it lifts")
    }
}
