import CLinux
import Glibc

/// A thread's wait until a time on the monotonic clock, which another thread can end at once
/// for good (``stop()``): what the replay's thread waits on between moments.
///
/// A futex on a stop flag, with the deadline as its timeout, so that a wait is one system call,
/// as a panel's input thread's `poll` is, and a stop needs no wake-ups to be seen:
/// - the replay's thread once slept in slices of 50 ms to look for a stop, and in a virtual
///   machine, where a thread's wake-up costs some 100 µs, those wake-ups in the pause between
///   plays were some 8 % of motiond's CPU at one client (docs/performance.md);
/// - then it waited on a condition variable, whose mutex glibc takes back as contended after
///   a timed wait, so that letting it go made a second system call every moment, to wake
///   nobody.
final class StoppableWait: @unchecked Sendable {
    /// 0 until ``stop()``, then 1; read and written only through CLinux's atomics.
    private let stopped: UnsafeMutablePointer<UInt32>

    init() {
        stopped = .allocate(capacity: 1)
        stopped.initialize(to: 0)
    }

    deinit {
        stopped.deallocate()
    }

    /// Waits until `deadline`, seconds on `CLOCK_MONOTONIC`: true when it came, false when
    /// the wait was stopped (before or during it).
    func wait(until deadline: Double) -> Bool {
        // Past 10⁹ s from the clock's start (31 years), a deadline is as good as never; one
        // that is no time at all (NaN) is past.
        let bounded = deadline.isNaN ? 0 : Swift.min(Swift.max(deadline, 0), 1e9)
        let whole = bounded.rounded(.down)
        var time = timespec(tv_sec: Int(whole), tv_nsec: Swift.min(Int((bounded - whole) * 1e9), 999_999_999))
        return motiond_wait_unless_flag(stopped, &time) == 0
    }

    /// Ends the wait in progress, and every later one, at once.
    func stop() {
        motiond_set_flag_and_wake(stopped)
    }
}
