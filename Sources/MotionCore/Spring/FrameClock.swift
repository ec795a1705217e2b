/// The source of animation frames: springs ask it for a callback per frame while they move.
///
/// A clock only needs to run while someone observes it, which is what lets an idle kiosk
/// sleep: when every spring is at rest, no observer is left and no frame is scheduled.
/// Times are seconds on a monotonic clock, the same clock as the touch frames'.
public protocol FrameClock: AnyObject {
    /// The current time, in seconds. Springs start and retarget at this time.
    var now: Double { get }

    /// Calls `handler` with each frame's timestamp until the subscription is cancelled.
    func observeFrames(_ handler: @escaping (Double) -> Void) -> Subscription

    /// Runs `body` with ``now`` pinned to `time`: how the engine processes a touch frame at
    /// the kernel's timestamp, so that springs it starts start then.
    func perform(at time: Double, _ body: () -> Void)

    /// Who runs each frame when it is due: called with the frame's time instead of the clock
    /// delivering it, so that whoever runs the engine runs the frame as it runs an input
    /// frame, and gets the frame's report back from the engine
    /// (``MotionEngine/runClockFrame(at:)``). Nil: the clock delivers its frames itself.
    var frameRunner: ((Double) -> Void)? { get set }

    /// Delivers a frame at `time` to every observer, now: what a ``frameRunner`` calls.
    func deliverFrame(at time: Double)

    /// Runs a frame at `time` now if one was due by then and has not run: an input frame
    /// stamped `time` but read late (a busy process reads a batch at once) then meets the
    /// scene as it was at its time. Without it, a second tap read together with the first
    /// was hit-tested where the first tap's spring had not yet moved anything, and landed
    /// beside the element it touched.
    func catchUp(to time: Double)
}

/// A clock that keeps its observers in ``FrameObservers``, and hears when one unsubscribes.
protocol FrameObserverOwner: AnyObject {
    /// `entry` unsubscribed: it comes off the list.
    func remove(_ entry: FrameObservers.Entry)
}

/// A list of frame observers, shared by the clocks.
struct FrameObservers {
    /// An observer, which is also its subscription: one object where an entry, a subscription
    /// and its closure were three, for each spring set going (a restored scene sets thousands).
    final class Entry: Subscription {
        let handler: (Double) -> Void
        var isActive = true
        /// Weak: a subscription may outlive its clock.
        private weak var owner: FrameObserverOwner?

        init(_ handler: @escaping (Double) -> Void, of owner: FrameObserverOwner) {
            self.handler = handler
            self.owner = owner
            super.init()
        }

        override func cancel() { owner?.remove(self) }
    }

    private var entries: [Entry] = []
    /// Entries removed but still in `entries`. They are cleared out together once they are
    /// half of it, so that a removal costs the same however many springs run: a reload of
    /// 10,000 elements whose springs all move stops them one by one, and a walk over the
    /// rest at each made that quadratic.
    private var removed = 0

    var isEmpty: Bool { entries.count == removed }
    var count: Int { entries.count - removed }

    /// Adds a handler of `owner`'s; unsubscribing from the entry returned removes it.
    mutating func add(_ handler: @escaping (Double) -> Void, of owner: FrameObserverOwner) -> Entry {
        let entry = Entry(handler, of: owner)
        entries.append(entry)
        return entry
    }

    mutating func remove(_ entry: Entry) {
        guard entry.isActive else { return }
        entry.isActive = false
        removed += 1
        if removed * 2 > entries.count {
            // In place, keeping the order the rest are called in.
            entries.removeAll { !$0.isActive }
            removed = 0
        }
    }

    /// Calls every handler present when the frame started; one removed meanwhile is skipped.
    func deliver(_ time: Double) {
        for entry in entries where entry.isActive {
            entry.handler(time)
        }
    }
}

/// A clock driven by hand: frames happen when ``tick(at:)`` is called. For tests, and for
/// offline tools such as `motionctl spring` that sample a curve at chosen times.
public final class ManualFrameClock: FrameClock, FrameObserverOwner {
    private var observers = FrameObservers()

    /// The current time; set it to start springs at a chosen moment.
    public var now: Double

    /// How many frames were delivered to at least one observer.
    public private(set) var deliveredFrames = 0

    /// Creates a clock whose time is `now`.
    public init(now: Double = 0) {
        self.now = now
    }

    /// Whether anyone is waiting for frames, i.e. whether a real clock would be running.
    public var isRunning: Bool { !observers.isEmpty }

    public var frameRunner: ((Double) -> Void)?

    /// Sets the time to `time` and runs a frame: by its ``frameRunner`` if it has one,
    /// otherwise by delivering it to every observer.
    public func tick(at time: Double) {
        now = time
        guard !observers.isEmpty else { return }
        if let frameRunner { frameRunner(time) } else { deliverFrame(at: time) }
    }

    public func deliverFrame(at time: Double) {
        now = time
        guard !observers.isEmpty else { return }
        deliveredFrames += 1
        observers.deliver(time)
    }

    public func observeFrames(_ handler: @escaping (Double) -> Void) -> Subscription {
        observers.add(handler, of: self)
    }

    func remove(_ entry: FrameObservers.Entry) {
        observers.remove(entry)
    }

    /// Sets the time to `time`, then runs `body`.
    public func perform(at time: Double, _ body: () -> Void) {
        now = time
        body()
    }

    /// Nothing: a clock driven by hand runs the frames its driver ticks (``Simulation``
    /// ticks every frame due before an input frame itself).
    public func catchUp(to time: Double) {}
}

/// Schedules work at a time on a monotonic clock; what a ``TimedFrameClock`` runs on.
///
/// motiond's engine provides one backed by its event loop; tests provide one driven by hand.
public protocol FrameScheduler: AnyObject {
    /// The current time, in seconds.
    var now: Double { get }

    /// Runs `work` at `deadline` (or as soon after as possible). The returned function
    /// cancels it if it has not run yet.
    func schedule(at deadline: Double, _ work: @escaping () -> Void) -> () -> Void
}

/// A clock that ticks at a fixed rate, but only while someone observes it.
///
/// Each frame is stamped with the scheduler's time when it actually runs, so a late frame
/// carries its real time and springs, evaluated in closed form, stay exact. Deadlines follow
/// a fixed grid from the first frame, so the rate does not drift; frames missed while the
/// process was busy are skipped, not replayed.
public final class TimedFrameClock: FrameClock, FrameObserverOwner {
    /// Frames per second.
    public let rate: Double
    private let scheduler: FrameScheduler
    private var observers = FrameObservers()
    /// The grid: frame k is due at `gridOrigin + k / rate`, computed, not accumulated.
    private var gridOrigin = 0.0
    private var nextFrame = 0
    private var cancelPending: (() -> Void)?
    /// The timestamp of the frame being delivered, so that everything done during a frame
    /// (a spring started by another's value, say) happens at the same instant.
    private var frameTime: Double?

    /// How many times the clock woke up to deliver a frame.
    public private(set) var wakeUps = 0

    /// Creates a clock ticking `rate` times a second on `scheduler`.
    ///
    /// - Precondition: `rate` is positive and finite.
    public init(rate: Double = 120, scheduler: FrameScheduler) {
        precondition(rate.isFinite && rate > 0, "a frame clock needs a positive rate")
        self.rate = rate
        self.scheduler = scheduler
    }

    /// The scheduler's time, or during a frame (or ``perform(at:_:)``), that frame's timestamp.
    public var now: Double { frameTime ?? scheduler.now }

    public var frameRunner: ((Double) -> Void)?

    public func perform(at time: Double, _ body: () -> Void) {
        let previous = frameTime
        frameTime = time
        body()
        frameTime = previous
    }

    public func deliverFrame(at time: Double) {
        perform(at: time) { observers.deliver(time) }
    }

    /// Whether a frame is scheduled.
    public var isRunning: Bool { cancelPending != nil }

    public func observeFrames(_ handler: @escaping (Double) -> Void) -> Subscription {
        let entry = observers.add(handler, of: self)
        if cancelPending == nil {
            gridOrigin = scheduler.now
            nextFrame = 1
            scheduleNextFrame()
        }
        return entry
    }

    func remove(_ entry: FrameObservers.Entry) {
        observers.remove(entry)
        if observers.isEmpty {
            cancelPending?()
            cancelPending = nil
        }
    }

    private func scheduleNextFrame() {
        let deadline = gridOrigin + Double(nextFrame) / rate
        cancelPending = scheduler.schedule(at: deadline) { [weak self] in self?.frame() }
    }

    /// Runs the frame due by `time` at `time`, when it is not later than the scheduler's
    /// now (a frame is never run ahead of the clock) and no frame is being delivered.
    public func catchUp(to time: Double) {
        guard cancelPending != nil, frameTime == nil, gridOrigin + Double(nextFrame) / rate <= time, time <= scheduler.now else { return }
        cancelPending?()
        frame(at: time)
    }

    private func frame() {
        wakeUps += 1
        frame(at: scheduler.now)
    }

    private func frame(at time: Double) {
        cancelPending = nil
        if let frameRunner { frameRunner(time) } else { deliverFrame(at: time) }
        guard !observers.isEmpty, cancelPending == nil else { return }
        // The next grid point after this frame's real time: late frames skip, never pile up.
        nextFrame = Swift.max(nextFrame + 1, Int(((time - gridOrigin) * rate).rounded(.down)) + 1)
        scheduleNextFrame()
    }
}
