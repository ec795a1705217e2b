import FoundationEssentials
import Glibc
import Logging
import MotionConfiguration
import MotionCore
import NIOCore
import TouchInput

/// Plays a recording to the daemon as if it were a touchscreen: each frame at its time
/// (scaled by the speed), stamped with the monotonic clock, on the event loop, and what the
/// contact filters decided counted and logged at its own time, with or without a frame.
/// For kiosk developers without a touchscreen, and for the README's demo.
///
/// It says what happens in the input's own events (``TouchInputEvent``), given to the daemon
/// and to the log as a touchscreen's are (``InputLog``): the recorded device is added,
/// sends frames, and has its filters' counts and notices.
final class ReplayDriver {
    /// The replay's moments: frames, and filter decisions in frames the filters swallowed.
    private let moments: [RecordingReplay.ReplayedFrame]
    /// The recorded device, read from `replay:FILE`.
    private let device: DeviceIdentity
    private let description: DeviceDescription
    private let speed: Double
    private let loops: Bool
    private let daemon: Daemon
    private let eventLoop: EventLoop
    private let logger: Logger
    /// The input's events as the log words them.
    private var log: InputLog
    private var next = 0
    private var base = 0.0
    private var task: NIOScheduledCallback?
    /// What the loop calls back when the next frame is due: one object for the whole replay,
    /// so that scheduling a frame allocates nothing (a scheduled task's promise and closures
    /// were a fifth of the daemon's CPU per frame at one client).
    private let timer = ReplayTimer()
    /// The monotonic clock, or in a test the event loop's own, so that plays fall when the
    /// test moves that loop's time.
    private let now: () -> Double

    init(path: String, device index: Int?, configuration: Configuration, speed: Double, loops: Bool, daemon: Daemon, eventLoop: EventLoop, logger: Logger,
         clock: @escaping () -> Double = monotonicNow) throws(StartupFailure) {
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch { throw .recordingUnreadable(path: path, reason: Self.reason(error)) }
        let recording: EvemuRecording
        do { recording = try EvemuRecording(reading: text, device: index) } catch { throw .recordingRefused(path: path, error) }
        guard let description = recording.device else { throw .recordingWithoutDevice(path: path) }
        let device = DeviceIdentity.recording(path, description: description)
        guard let match = configuration.match(device) else { throw .recordingNotSelected(name: description.name) }
        let replay: RecordingReplay
        do { replay = try RecordingReplay(recording, mapping: match.mapping, filters: match.filters) } catch { throw .recordingNotReplayable(error) }
        guard speed > 0, speed.isFinite else { throw .replaySpeed(speed) }
        self.moments = replay.replayedFrames()
        self.device = device
        self.description = description
        self.setup = DeviceSetup(description, mapping: replay.mapping, filters: replay.filters)
        self.speed = speed
        self.loops = loops
        self.daemon = daemon
        self.eventLoop = eventLoop
        self.logger = logger
        self.log = InputLog(logger: logger)
        self.now = clock
        timer.driver = self
    }

    /// Why a file cannot be read, as the system says it ("No such file or directory"), not as
    /// Foundation's error describes itself (its domain, code and user info).
    private static func reason(_ error: any Error) -> String {
        if let posix = (error as? CocoaError)?.underlying as? POSIXError ?? error as? POSIXError {
            return String(cString: strerror(posix.code.rawValue))
        }
        return "\(error)"
    }

    /// Where the recorded device's touches land and how they are filtered, for `devices`.
    private let setup: DeviceSetup
    /// Plays finished so far: the filters' counts go on from one play's total, as a live
    /// device's do.
    private var plays = 0
    private var reported = ContactFilters.Counts()

    func start() {
        deliver(.added(device, description, setup))
        logger.info("replaying \(device.node) (\(moments.count { $0.frame != nil }) frames, \(loops ? "looping" : "once"), speed \(speed))")
        base = now() + 0.1
        next = 0
        schedule()
    }

    func stop() { task?.cancel() }

    private func schedule() {
        guard next < moments.count else {
            // A recording with nothing to play (a device description without events) ends
            // at once even when looping: playing it again would only recurse.
            guard loops, !moments.isEmpty else {
                logger.info("the replay ended")
                return
            }
            // A pause of a second of recording time between plays, so each starts as a new
            // gesture (at --speed 100, 10 ms: a fast replay stays fast).
            base = now() + (1 - (moments.first?.time ?? 0)) / speed
            next = 0
            plays += 1
            return schedule()
        }
        // A corrupt recording can put centuries between frames, and --speed can stretch them
        // further: wait at most 10⁹ s (31 years, in nanoseconds well within UInt64).
        let at = Swift.min(Swift.max(0, dueTime(next)), now() + 1e9)
        // NIO's uptime is CLOCK_MONOTONIC, the clock the frames are stamped with.
        task = try? eventLoop.scheduleCallback(at: .uptimeNanoseconds(UInt64(at * 1e9)), handler: timer)
    }

    /// When moment `index` of this play is due, on the driver's clock (the monotonic one).
    private func dueTime(_ index: Int) -> Double { base + moments[index].time / speed }

    /// Moment `index`'s frame, if it has one, stamped with the time it is due.
    private func stamped(_ index: Int) -> TouchFrame? {
        guard var frame = moments[index].frame else { return nil }
        frame.time = dueTime(index)
        return frame
    }

    /// Plays the moments that are due, as a touchscreen's frames would arrive: when the loop
    /// was busy and several are due at once, their frames are coalesced as live input is
    /// (``FrameCoalescing``), so a replay faster than the daemon keeps current too. A moment
    /// without a frame is only counted and logged.
    fileprivate func deliver() {
        let time = now()
        let first = next
        next += 1
        while next < moments.count && dueTime(next) <= time && next - first < 1024 { next += 1 }
        if next - first == 1 {
            // The usual case: one frame due, nothing to coalesce.
            if let frame = stamped(first) { deliver(.frame(frame, from: device)) }
        } else {
            let due = (first..<next).compactMap(stamped)
            let keep = FrameCoalescing.keep(due.map { .frame(device: device.number, $0) })
            daemon.framesCoalesced(keep.count { !$0 })
            for (frame, kept) in zip(due, keep) where kept {
                deliver(.frame(frame, from: device))
            }
        }
        for index in first..<next {
            for notice in moments[index].notices { deliver(.filtered(device, notice)) }
        }
        let counts = (moments.last?.counts ?? .init()).times(plays) + moments[next - 1].counts
        if counts != reported {
            reported = counts
            deliver(.filterCounts(device, counts))
        }
        schedule()
    }

    /// To the daemon and the log, as the input thread's events go.
    private func deliver(_ event: TouchInputEvent) {
        daemon.input(event)
        log.write(event)
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
