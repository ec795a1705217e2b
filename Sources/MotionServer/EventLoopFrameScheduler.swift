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

    public func schedule(at deadline: Double, _ work: @escaping () -> Void) -> () -> Void {
        let bound = NIOLoopBound(work, eventLoop: eventLoop)
        let delay = Swift.max(0, deadline - now)
        let task = eventLoop.scheduleTask(in: .nanoseconds(Int64(delay * 1_000_000_000))) {
            bound.value()
        }
        return { task.cancel() }
    }
}
