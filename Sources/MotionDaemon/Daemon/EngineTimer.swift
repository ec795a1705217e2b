import MotionCore

/// The engine's timer: wakes it at its next deadline, on the scheduler's clock: attract
/// mode's (`screen.idle`, `reset_after`) and a screen gesture's (a long press held still). Moved only when the deadline moves, so following it
/// after every frame is cheap while a finger is down.
final class EngineTimer {
    private let scheduler: FrameScheduler
    /// Runs the engine to a time: the daemon's ``Daemon/tick(at:)``, which publishes what it did.
    private let fire: (Double) -> Void
    /// The deadline set, and for which engine (a reload brings a new one).
    private var pending: (deadline: Double, engine: ObjectIdentifier, cancel: () -> Void)?

    init(_ scheduler: FrameScheduler, fire: @escaping (Double) -> Void) {
        self.scheduler = scheduler
        self.fire = fire
    }

    /// Sets the timer to `engine`'s next deadline, if that moved.
    func follow(_ engine: MotionEngine) {
        let next = engine.nextDeadline
        if let pending, pending.deadline == next, pending.engine == ObjectIdentifier(engine) { return }
        if pending == nil && next == nil { return }
        cancel()
        guard let next else { return }
        // Unowned, not weak: the timer cancels what it set as it goes (its deinit), and a
        // weak reference would give it and the engine side tables, which put every retain and
        // release of them, a few a frame, on the runtime's slow path. A reload's new engine
        // moves the timer (``follow(_:)``, under the same lock), so a deadline set for an
        // engine gone is cancelled before it can fire.
        let cancel = scheduler.schedule(at: next) { [unowned self, unowned scheduler] in
            pending = nil
            fire(Swift.max(next, scheduler.now))
        }
        pending = (next, ObjectIdentifier(engine), cancel)
    }

    /// Stops it.
    func cancel() {
        pending?.cancel()
        pending = nil
    }

    deinit {
        cancel()
    }
}
