import MotionCore
import TouchInput
import NIOCore

/// Runs the daemon's timers (a ``TimedFrameClock``'s frames, the engine's deadline, the
/// scene's write) on a SwiftNIO event loop, each under the daemon's lock (``DaemonLock``), so
/// MotionCore needs no locks of its own.
///
/// Call it only holding that lock, from any thread: the input thread schedules a spring's
/// frames as it runs a touch.
public final class EventLoopFrameScheduler: FrameScheduler {
    /// The loop the timers fire on.
    public let eventLoop: any EventLoop
    private let lock: DaemonLock

    /// Creates a scheduler for `eventLoop`, whose work runs under `lock`.
    init(eventLoop: any EventLoop, lock: DaemonLock) {
        self.eventLoop = eventLoop
        self.lock = lock
    }

    public var now: Double { monotonicNow() }

    /// Runs `work` at `deadline` through a scheduled callback: unlike a scheduled task, it
    /// makes no promise or future, which cost a spring's frame five allocations and as many
    /// generic metadata lookups.
    public func schedule(at deadline: Double, _ work: @escaping () -> Void) -> () -> Void {
        // NIO's uptime is CLOCK_MONOTONIC, the clock `now` reads.
        let nanoseconds = UInt64(Swift.min(Swift.max(0, deadline), now + 1e9) * 1_000_000_000)
        let scheduled = ScheduledWork(work, lock: lock)
        guard let callback = try? eventLoop.scheduleCallback(at: .uptimeNanoseconds(nanoseconds), handler: scheduled) else {
            return {}
        }
        return {
            scheduled.isCancelled = true
            callback.cancel()
        }
    }
}

/// Work the loop calls back, under the daemon's lock. Cancelled under that lock too: NIO's
/// cancel cannot stop a callback the loop has already taken and that waits for the lock
/// while another thread cancels it, so the work looks at its own flag once it holds the lock.
/// Only touched under the lock, hence `@unchecked Sendable`.
private final class ScheduledWork: NIOScheduledCallbackHandler, @unchecked Sendable {
    let work: () -> Void
    let lock: DaemonLock
    var isCancelled = false

    init(_ work: @escaping () -> Void, lock: DaemonLock) {
        self.work = work
        self.lock = lock
    }

    func handleScheduledCallback(eventLoop: some EventLoop) {
        lock.withLock {
            if !isCancelled { work() }
        }
    }
}
