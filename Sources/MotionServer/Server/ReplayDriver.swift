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
    private var task: Scheduled<Void>?

    init(path: String, device index: Int?, configuration: Configuration, speed: Double, loops: Bool, daemon: Daemon, eventLoop: EventLoop, logger: Logger) throws {
        let recording: EvemuRecording
        do { recording = try EvemuRecording(reading: String(contentsOfFile: path, encoding: .utf8), device: index) } catch let error as EvemuParseError {
            throw SocketError(description: "\(path):\(error.line): \(error.message)")
        }
        guard let device = recording.device else { throw SocketError(description: "\(path): \(ReplayError.noDeviceHeader)") }
        guard let settings = configuration.deviceSettings(node: path, device: device) else {
            throw SocketError(description: "no [[device]] entry in the configuration selects the recorded device '\(device.name)'")
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
            filters: ResolvedContactFilters(replay.filters, device: device), mapping: replay.mapping)
        self.speed = speed
        self.loops = loops
        self.daemon = daemon
        self.eventLoop = eventLoop
        self.logger = logger
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
        let at = base + frames[next].time / speed
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        // A corrupt recording can put centuries between frames, and --speed can stretch them
        // further: wait at most 10⁹ s (31 years, in nanoseconds well within Int64).
        let delay = Swift.min(Swift.max(0, at - monotonicNow()), 1e9)
        task = eventLoop.scheduleTask(in: .nanoseconds(Int64(delay * 1e9))) {
            bound.value.deliver()
        }
    }

    /// Plays the frames that are due, as a touchscreen's would arrive: when the loop was
    /// busy and several are due at once, they are coalesced as live input is
    /// (``FrameCoalescing``), so a replay faster than the daemon keeps current too.
    private func deliver() {
        let now = monotonicNow()
        var due: [TouchFrame] = []
        repeat {
            var frame = frames[next]
            frame.time = base + frame.time / speed
            due.append(frame)
            next += 1
        } while next < frames.count && base + frames[next].time / speed <= now && due.count < 1024
        let keep = FrameCoalescing.keep(due.map { .frame(device: 0, $0) })
        daemon.framesCoalesced(keep.count { !$0 })
        for (frame, kept) in zip(due, keep) where kept {
            daemon.process(frame, device: 0, node: node)
        }
        for index in (next - due.count)..<next {
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
