import MotionCore
import TouchInput
import NIOCore

/// Runs a ``TimedFrameClock`` on a SwiftNIO event loop, so springs, input and the socket
/// all live on one thread and MotionCore needs no locks.
///
/// Everything must be called on `eventLoop`: the work it schedules is not `Sendable`.
public final class EventLoopFrameScheduler: FrameScheduler {
    /// The loop frames run on.
    public let eventLoop: any EventLoop

    /// Creates a scheduler for `eventLoop`.
    public init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    public var now: Double { monotonicNow() }

    /// Runs `work` at `deadline` through a scheduled callback: unlike a scheduled task, it
    /// makes no promise or future, which cost a spring's frame five allocations and as many
    /// generic metadata lookups.
    public func schedule(at deadline: Double, _ work: @escaping () -> Void) -> () -> Void {
        // NIO's uptime is CLOCK_MONOTONIC, the clock `now` reads.
        let nanoseconds = UInt64(Swift.min(Swift.max(0, deadline), now + 1e9) * 1_000_000_000)
        guard let callback = try? eventLoop.scheduleCallback(at: .uptimeNanoseconds(nanoseconds), handler: ScheduledWork(work)) else {
            return {}
        }
        return { callback.cancel() }
    }
}

/// Work the loop calls back. Only touched on the scheduler's event loop, hence
/// `@unchecked Sendable`.
private final class ScheduledWork: NIOScheduledCallbackHandler, @unchecked Sendable {
    let work: () -> Void

    init(_ work: @escaping () -> Void) {
        self.work = work
    }

    func handleScheduledCallback(eventLoop: some EventLoop) {
        work()
    }
}
