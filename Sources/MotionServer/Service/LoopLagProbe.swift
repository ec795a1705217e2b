import NIOCore
import MotionDaemon

/// Measures how late the event loop runs: once a second it asks to be woken, and how long
/// after that deadline it ran is the lag (`motiond_event_loop_lag_seconds`, and `/healthz`,
/// which is unhealthy past ``HealthReport/loopLagLimit``). A loop that is current wakes
/// within a millisecond; one blocked or overloaded shows it in the next check.
final class LoopLagProbe {
    static let interval: TimeAmount = .seconds(1)
    private let loop: EventLoop
    private unowned let daemon: Daemon
    private let lock: DaemonLock
    private var task: Scheduled<Void>?

    /// On `loop`; tells `daemon` under `lock`.
    init(daemon: Daemon, lock: DaemonLock, loop: EventLoop) {
        self.daemon = daemon
        self.lock = lock
        self.loop = loop
    }

    func start() {
        let deadline = NIODeadline.now() + Self.interval
        task = loop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            let late = NIODeadline.now() - deadline
            lock.withLock { daemon.loopLagMeasured(max(0, Double(late.nanoseconds) / 1e9)) }
            start()
        }
    }

    func stop() {
        task?.cancel()
        task = nil
    }
}
