/// Runs an engine offline on recorded frames: the frames at their times, and between them
/// the frame clock's ticks at a fixed rate while something moves, then ticks until
/// everything is at rest. What `motionctl simulate` and the tests use; the same frames give
/// the same updates, byte for byte.
public struct Simulation {
    /// Frames per second of the clock.
    public var frameRate: Double
    /// The longest the engine may keep moving after the last frame, in seconds.
    public var settleLimit: Double

    /// Creates a simulation at `frameRate` ticks per second.
    public init(frameRate: Double = 120, settleLimit: Double = 30) {
        precondition(frameRate > 0 && frameRate.isFinite, "a simulation needs a positive frame rate")
        self.frameRate = frameRate
        self.settleLimit = settleLimit
    }

    /// What came out, and whether it all came to rest.
    public struct Outcome {
        /// Every published update, in order.
        public var updates: [PublishedUpdate]
        /// Every gesture event, in order.
        public var events: [FrameEvent]
        /// Every report that held something, in order.
        public var reports: [FrameReport]
        /// The time of the last tick or frame.
        public var endTime: Double
        /// Whether the engine was at rest at the end (false if it hit the settle limit).
        public var settled: Bool
    }

    /// Runs `frames` (in time order) through `engine`, whose clock must be `clock`.
    ///
    /// Attract mode's deadlines (``MotionEngine/nextIdleDeadline``) fire at their exact
    /// times, between frames and ticks. Without `until`, the run ends when everything is at
    /// rest after the last frame (or at the settle limit); with it, the run goes on to
    /// `until` whatever moves or not, and ends there.
    public func run(_ frames: [TouchFrame], through engine: MotionEngine, clock: ManualFrameClock, until: Double? = nil) -> Outcome {
        let recorder = ReportRecorder()
        let runner = clock.frameRunner
        recorder.follow(engine)
        defer { clock.frameRunner = runner }

        var tick = Int((clock.now * frameRate).rounded(.down)) + 1
        func tickTime() -> Double { Double(tick) / frameRate }
        /// Ticks while something moves and fires idle deadlines, in time order, up to `limit`
        /// (excluded: a frame at `limit` comes next; included: the run ends there).
        func advance(to limit: Double, including: Bool, whileRunning: Bool = false) {
            func due(_ time: Double) -> Bool { including ? time <= limit : time < limit }
            func fire(_ deadline: Double) {
                recorder.record(engine.advanceIdle(to: deadline))
                tick = Swift.max(tick, Int((deadline * frameRate).rounded(.down)) + 1)
            }
            while true {
                let deadline = engine.nextIdleDeadline.flatMap { due($0) ? Swift.max($0, clock.now) : nil }
                if clock.isRunning {
                    if let deadline, deadline <= tickTime() {
                        fire(deadline)
                    } else if due(tickTime()) {
                        clock.tick(at: tickTime())
                        tick += 1
                    } else {
                        return
                    }
                } else if whileRunning {
                    return
                } else if let deadline {
                    fire(deadline)
                } else {
                    // Nothing moves and nothing is due: skip the idle ticks (a recording can
                    // hold hours, or a corrupt one centuries, between frames).
                    if Swift.abs(limit * frameRate) < 1e15 {
                        tick = Swift.max(tick, Int((limit * frameRate).rounded(.down)) - 1)
                    }
                    while due(tickTime()) { tick += 1 }
                    return
                }
            }
        }
        for frame in frames {
            advance(to: frame.time, including: false)
            recorder.record(engine.process(frame))
        }
        if let until {
            advance(to: until, including: true)
            if clock.now < until { clock.now = until }
        } else {
            advance(to: (frames.last?.time ?? clock.now) + settleLimit, including: true, whileRunning: true)
        }
        return Outcome(updates: recorder.updates, events: recorder.events, reports: recorder.reports, endTime: clock.now, settled: !clock.isRunning && engine.state.value == .atRest)
    }
}

/// Keeps every report's values and events, from the calls that return reports and, once it
/// follows an engine, from the clock's frames.
public final class ReportRecorder {
    /// The values, in order.
    public private(set) var updates: [PublishedUpdate] = []
    /// The gesture events, in order.
    public private(set) var events: [FrameEvent] = []
    /// Every report kept, whole (copied: a report is lent only until the next call).
    public private(set) var reports: [FrameReport] = []
    /// A recorder that keeps what it is given (``record(_:)``).
    public init() {}

    /// Runs `engine`'s clock frames (``FrameClock/frameRunner``) and keeps their reports.
    public func follow(_ engine: MotionEngine) {
        engine.clock.frameRunner = { [weak self, weak engine] time in
            guard let self, let engine else { return }
            record(engine.runClockFrame(at: time))
        }
    }

    /// Keeps a report.
    public func record(_ report: FrameReport) {
        guard !report.isEmpty else { return }
        updates += report.values
        events += report.events
        reports.append(report)
    }
}
