import Dispatch
import FoundationEssentials
import Glibc
import Logging
import MotionConfiguration
import MotionCore
import NIOCore
import TouchInput
import MotionWire
import MotionDaemon

/// Plays a recording to the daemon as if it were a touchscreen: its events, at their times
/// (scaled by the speed), go through a live device's assembler and filters as they come
/// (``RecordingPlayer``), and what those make of them (frames stamped with the monotonic
/// clock, the filters' notices and counts) goes to the daemon through an ``InputQueue``, as a
/// panel's does from the input thread: coalesced there when the daemon falls behind, and
/// nowhere else. For kiosk developers without a touchscreen, for the README's demo, and for
/// every measurement of the daemon's cost, which so measures the path a kiosk runs.
///
/// It says what happens in the input's own events (``TouchInputEvent``), given to the daemon
/// and to the log as a touchscreen's are (``InputLog``): the recorded device is added,
/// sends frames, and has its filters' counts and notices.
///
/// In motiond a thread of its own waits for each moment and plays it (``ReplayPacing``), as
/// the input thread waits for a panel, and runs them through the daemon itself when it is
/// free (``DaemonLock``), as the input thread does a panel's. The driver's state is then the
/// thread's, from ``start()`` until ``stop()`` has joined it, hence `@unchecked Sendable`.
final class ReplayDriver: @unchecked Sendable {
    private let replay: RecordingReplay
    /// This play of the recording; a new one for each play when looping.
    private var player: RecordingPlayer
    /// The recorded device, read from `replay:FILE`.
    private let device: DeviceIdentity
    private let description: DeviceDescription
    private let speed: Double
    private let loops: Bool
    private let eventLoop: EventLoop
    private let pacing: ReplayPacing
    private let logger: Logger
    /// Where the events go: the daemon and the log, under the daemon's lock, as the input
    /// thread's do.
    private let queue: InputQueue
    private var base = 0.0
    /// The thread that plays (``ReplayPacing/ownThread``), and its wait for the next moment,
    /// which a stop ends.
    private var thread: JoinableThread?
    private let waiting = StoppableWait()
    /// The timer that plays the next moment (``ReplayPacing/eventLoopTimers``).
    private var task: NIOScheduledCallback?
    /// What the loop calls back when the next moment is due: one object for the whole replay,
    /// so that scheduling one allocates nothing (a scheduled task's promise and closures
    /// were a fifth of the daemon's CPU per frame at one client).
    private let timer = ReplayTimer()
    /// The monotonic clock, or in a test the event loop's own (``ReplayPacing/eventLoopTimers(clock:)``),
    /// so that plays fall when the test moves that loop's time.
    private let now: () -> Double
    /// What is due at a moment, and the input events made of it: kept between moments, so
    /// that playing one allocates nothing of its own (the events' array changes places with
    /// the queue's empty one, ``InputQueue/deliver(emptying:)``).
    private var moments: [RecordingReplay.ReplayedFrame] = []
    private var events: [TouchInputEvent] = []
    /// When the first play's first moment came, on the recording's clock: where a looping
    /// replay starts each play again, a second after the last ended.
    private var firstMoment: Double?

    init(path: String, device index: Int?, configuration: Configuration, speed: Double, loops: Bool, daemon: Daemon, lock: DaemonLock, eventLoop: EventLoop,
         logger: Logger, pacing: ReplayPacing = .ownThread) throws(StartupFailure) {
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
        self.replay = replay
        self.player = RecordingPlayer(replay)
        self.device = device
        self.description = description
        self.setup = DeviceSetup(description, mapping: replay.mapping, filters: replay.filters)
        self.speed = speed
        self.loops = loops
        self.eventLoop = eventLoop
        self.pacing = pacing
        self.logger = logger
        if case .eventLoopTimers(let clock) = pacing { self.now = clock } else { self.now = monotonicNow }
        let target = InputTarget(daemon: daemon, log: InputLog(logger: logger))
        self.queue = InputQueue(lock: lock, handle: target.take)
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
    /// The filters' counts of the plays finished so far: the counts go on from one play's
    /// total, as a live device's do.
    private var earlierPlays = ContactFilters.Counts()
    private var reported = ContactFilters.Counts()
    /// Whether this play gave anything: a recording that gives nothing (a device description
    /// without events) ends at once even when looping, which would only recurse.
    private var playedAny = false

    /// Starts playing: the device arrives, and its first moment is played a tenth of a second
    /// later. Fails only if the replay's thread cannot be made; then nothing was played.
    func start() throws(StartupFailure) {
        base = now() + 0.1
        switch pacing {
        case .eventLoopTimers:
            announce()
            scheduleNext()
        case .ownThread:
            // The thread announces the device, and start() returns once it has, as the input
            // thread's start does: the device is queued before any client can hear of it late.
            let announced = DispatchSemaphore(value: 0)
            thread = try JoinableThread(name: "motiond replay") { [self] in
                announce()
                announced.signal()
                while let at = nextDue(), waiting.wait(until: at) { deliver() }
            }
            announced.wait()
        }
    }

    /// The recorded device arrives, and the log says what is played.
    private func announce() {
        queue.deliver([.added(device, description, setup)])
        // Said once the device's arrival was: the loop runs what it is given in order.
        // The frames the panel sent (its SYN_REPORTs): what the filters make of them comes as
        // it is played, not run through the assembler once more here for a count.
        let recorded = replay.recording.events.count { $0.type == EventType.synchronization && $0.code == SynchronizationCode.report }
        let said = "replaying \(device.node) (\(recorded) frames recorded, \(loops ? "looping" : "once"), speed \(speed))"
        eventLoop.execute { [logger] in logger.info("\(said)") }
    }

    /// Stops playing; with its own thread, once the thread has seen it (the stop ends its
    /// wait for the next moment at once), or after a second whatever it is doing. The caller
    /// (the daemon's stop, on the loop, holding the daemon's lock, which the thread never
    /// waits for) waits that long.
    func stop() {
        task?.cancel()
        guard let thread else { return }
        waiting.stop()
        _ = thread.join(timeout: 1)
        // What the thread queued last runs now, before the parts started earlier stop (the
        // scene's goodbye), not after them.
        queue.closeAndRunWaiting()
    }

    // MARK: Pacing

    /// When the next moment is due, on the driver's clock; nil when the replay ended (said in
    /// the log). A looping replay starts its next play here.
    private func nextDue() -> Double? {
        guard let next = player.nextTime else {
            guard loops, playedAny else {
                // After what the last moment's batch says.
                eventLoop.execute { [logger] in logger.info("the replay ended") }
                return nil
            }
            // A pause of a second of recording time between plays, so each starts as a new
            // gesture (at --speed 100, 10 ms: a fast replay stays fast).
            base = now() + (1 - (firstMoment ?? 0)) / speed
            earlierPlays = earlierPlays + player.counts
            player = RecordingPlayer(replay)
            playedAny = false
            return nextDue()
        }
        // A corrupt recording can put centuries between frames, and --speed can stretch them
        // further: wait at most 10⁹ s (31 years, in nanoseconds well within UInt64).
        return Swift.min(Swift.max(0, dueTime(next)), now() + 1e9)
    }

    /// Sets the loop's timer for the next moment (``ReplayPacing/eventLoopTimers``).
    private func scheduleNext() {
        guard let at = nextDue() else { return }
        // NIO's uptime is CLOCK_MONOTONIC, the clock the frames are stamped with.
        task = try? eventLoop.scheduleCallback(at: .uptimeNanoseconds(UInt64(at * 1e9)), handler: timer)
    }

    /// The timer fired: plays what is due, and sets the timer for the next moment.
    fileprivate func timerFired() {
        deliver()
        scheduleNext()
    }

    /// When a moment at `time` on the recording's clock is due, on the driver's clock (the
    /// monotonic one).
    private func dueTime(_ time: Double) -> Double { base + time / speed }

    /// Plays what is due, as a touchscreen's events arrive (the next moment at least, which
    /// the thread woke for or the timer fired for): its frames stamped with the time each was due, then what the
    /// filters decided, then their counts if they changed; the queue coalesces frames that a
    /// busy daemon let gather (``InputQueue``).
    private func deliver() {
        guard let next = player.nextTime else { return }
        let recordingTime = Swift.max(next, (now() - base) * speed)
        moments.removeAll(keepingCapacity: true)
        player.play(until: recordingTime, into: &moments)
        if firstMoment == nil { firstMoment = moments.first?.time }
        playedAny = playedAny || !moments.isEmpty
        for moment in moments {
            guard var frame = moment.frame else { continue }
            frame.time = dueTime(moment.time)
            events.append(.frame(frame, from: device))
        }
        for moment in moments {
            for notice in moment.notices { events.append(.filtered(device, notice)) }
        }
        let counts = earlierPlays + player.counts
        if counts != reported {
            reported = counts
            events.append(.filterCounts(device, counts))
        }
        queue.deliver(emptying: &events)
    }
}

/// The replay's timer: a class the event loop calls back, held by the driver for the replay's
/// life. Only touched on the driver's event loop, hence `@unchecked Sendable`.
private final class ReplayTimer: NIOScheduledCallbackHandler, @unchecked Sendable {
    weak var driver: ReplayDriver?

    func handleScheduledCallback(eventLoop: some EventLoop) {
        driver?.timerFired()
    }
}

/// Who waits for a recording's next moment.
enum ReplayPacing {
    /// A thread of the replay's own sleeps until each moment is due and plays it, as the input
    /// thread waits for a panel, and runs them through the daemon as that thread does a
    /// panel's. motiond's.
    case ownThread
    /// The event loop's timers, the moments due on `clock`: a test's embedded loop, whose time
    /// the test moves by hand.
    case eventLoopTimers(clock: () -> Double)
}
