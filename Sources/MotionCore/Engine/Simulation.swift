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
        /// The time of the last tick or frame.
        public var endTime: Double
        /// Whether the engine was at rest at the end (false if it hit the settle limit).
        public var settled: Bool
    }

    /// Runs `frames` (in time order) through `engine`, whose clock must be `clock`.
    public func run(_ frames: [TouchFrame], through engine: MotionEngine, clock: ManualFrameClock) -> Outcome {
        var updates: [PublishedUpdate] = []
        let previous = engine.onUpdates
        engine.onUpdates = { updates += $0; previous($0) }
        defer { engine.onUpdates = previous }

        var tick = Int((clock.now * frameRate).rounded(.down)) + 1
        func tickTime() -> Double { Double(tick) / frameRate }
        for frame in frames {
            if !clock.isRunning, Swift.abs(frame.time * frameRate) < 1e15 {
                // Nothing moves: skip the idle ticks (a recording can hold hours, or a corrupt
                // one centuries, between frames), landing just before the frame's tick.
                tick = Swift.max(tick, Int((frame.time * frameRate).rounded(.down)) - 1)
            }
            while tickTime() < frame.time {
                if clock.isRunning { clock.tick(at: tickTime()) }
                tick += 1
            }
            engine.process(frame)
        }
        let last = frames.last?.time ?? clock.now
        while clock.isRunning && tickTime() <= last + settleLimit {
            clock.tick(at: tickTime())
            tick += 1
        }
        return Outcome(updates: updates, endTime: clock.now, settled: !clock.isRunning && engine.state.value == .atRest)
    }
}
