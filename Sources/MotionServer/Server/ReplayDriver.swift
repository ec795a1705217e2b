import FoundationEssentials
import Logging
import MotionConfiguration
import MotionCore
import NIOCore
import TouchInput

/// Plays a recording to the daemon as if it were a touchscreen: each frame at its time
/// (scaled by the speed), stamped with the monotonic clock, on the event loop. For kiosk
/// developers without a touchscreen, and for the README's demo.
final class ReplayDriver {
    private let frames: [TouchFrame]
    private let node: String
    private let description: DeviceDescription
    private let speed: Double
    private let loops: Bool
    private let daemon: Daemon
    private let eventLoop: EventLoop
    private let logger: Logger
    private var next = 0
    private var base = 0.0
    private var task: NIOScheduledCallback?
    /// What the loop calls back when the next frame is due: one object for the whole replay,
    /// so that scheduling a frame allocates nothing (a scheduled task's promise and closures
    /// were a fifth of the daemon's CPU per frame at one client).
    private let timer = ReplayTimer()

    init(path: String, device index: Int?, configuration: Configuration, speed: Double, loops: Bool, daemon: Daemon, eventLoop: EventLoop, logger: Logger) throws {
        let recording: EvemuRecording
        do { recording = try EvemuRecording(reading: String(contentsOfFile: path, encoding: .utf8), device: index) } catch let error as EvemuParseError {
            throw SocketError(description: "\(path):\(error.line): \(error.message)")
        }
        guard let device = recording.device else { throw SocketError(description: "\(path): \(ReplayError.noDeviceHeader)") }
        guard let settings = configuration.deviceSettings(node: path, device: device) else {
            throw SocketError(description: "no [[device]] entry in the configuration selects the recorded device \(OutsideText.quoted(device.name))")
        }
        let replay = try RecordingReplay(recording, mapping: configuration.mapping(for: settings, udevCalibration: nil), filters: configuration.filters(for: settings))
        guard speed > 0, speed.isFinite else { throw SocketError(description: "--speed must be a positive number") }
        let replayed = replay.replayedFrames()
        self.frames = replayed.map(\.frame)
        self.filtering = replayed.map { ($0.counts, $0.notices) }
        self.node = "replay:" + path
        self.description = device
        let axes = device.positionAxes!
        self.setup = DeviceSetup(
            output: CoordinateMapper(xAxis: axes.x, yAxis: axes.y, mapping: replay.mapping).outputRect,
            filters: ResolvedContactFilters(replay.filters, device: device, mapping: replay.mapping), mapping: replay.mapping)
        self.speed = speed
        self.loops = loops
        self.daemon = daemon
        self.eventLoop = eventLoop
        self.logger = logger
        timer.driver = self
    }

    /// Where the recorded device's touches land and how they are filtered, for `devices`.
    private let setup: DeviceSetup
    /// What the filters had done by each frame, and did in it: counted and logged as a live
    /// device's are, play after play.
    private let filtering: [(counts: ContactFilters.Counts, notices: [ContactFilters.Notice])]
    private var plays = 0
    private var reported = ContactFilters.Counts()

    func start() {
        daemon.deviceAdded(node: node, description: description, setup: setup)
        logger.info("replaying \(node) (\(frames.count) frames, \(loops ? "looping" : "once"), speed \(speed))")
        base = monotonicNow() + 0.1
        next = 0
        schedule()
    }

    func stop() { task?.cancel() }

    private func schedule() {
        guard next < frames.count else {
            guard loops else {
                logger.info("the replay ended")
                return
            }
            // A pause of a second of recording time between plays, so each starts as a new
            // gesture (at --speed 100, 10 ms: a fast replay stays fast).
            base = monotonicNow() + (1 - (frames.first?.time ?? 0)) / speed
            next = 0
            plays += 1
            return schedule()
        }
        // A corrupt recording can put centuries between frames, and --speed can stretch them
        // further: wait at most 10⁹ s (31 years, in nanoseconds well within UInt64).
        let at = Swift.min(Swift.max(0, dueTime(next)), monotonicNow() + 1e9)
        // NIO's uptime is CLOCK_MONOTONIC, the clock the frames are stamped with.
        task = try? eventLoop.scheduleCallback(at: .uptimeNanoseconds(UInt64(at * 1e9)), handler: timer)
    }

    /// When frame `index` of this play is due, on the monotonic clock.
    private func dueTime(_ index: Int) -> Double { base + frames[index].time / speed }

    /// Frame `index`, stamped with the time it is due.
    private func stamped(_ index: Int) -> TouchFrame {
        var frame = frames[index]
        frame.time = dueTime(index)
        return frame
    }

    /// Plays the frames that are due, as a touchscreen's would arrive: when the loop was
    /// busy and several are due at once, they are coalesced as live input is
    /// (``FrameCoalescing``), so a replay faster than the daemon keeps current too.
    fileprivate func deliver() {
        let now = monotonicNow()
        let first = next
        next += 1
        while next < frames.count && dueTime(next) <= now && next - first < 1024 { next += 1 }
        if next - first == 1 {
            // The usual case: one frame due, nothing to coalesce.
            daemon.process(stamped(first), device: 0, node: node)
        } else {
            let due = (first..<next).map(stamped)
            let keep = FrameCoalescing.keep(due.map { .frame(device: 0, $0) })
            daemon.framesCoalesced(keep.count { !$0 })
            for (frame, kept) in zip(due, keep) where kept {
                daemon.process(frame, device: 0, node: node)
            }
        }
        for index in first..<next {
            for notice in filtering[index].notices { logger.notice("\(node): \(notice.text)") }
        }
        let counts = (filtering.last?.counts ?? .init()).times(plays) + filtering[next - 1].counts
        if counts != reported {
            reported = counts
            daemon.contactsFiltered(node: node, counts: counts)
        }
        schedule()
    }
}

/// The replay's timer: a class the event loop calls back, held by the driver for the replay's
/// life. Only touched on the driver's event loop, hence `@unchecked Sendable`.
private final class ReplayTimer: NIOScheduledCallbackHandler, @unchecked Sendable {
    weak var driver: ReplayDriver?

    func handleScheduledCallback(eventLoop: some EventLoop) {
        driver?.deliver()
    }
}
