import Glibc

/// A thread's wait until a time on the monotonic clock, which another thread can end at once
/// for good (``stop()``): what the replay's thread waits on between moments.
///
/// A condition variable on `CLOCK_MONOTONIC`, so that a wait is one system call, as a
/// panel's input thread's `poll` is, and a stop needs no wake-ups to be seen: the replay's
/// thread once slept in slices of 50 ms to look for a stop, and in a virtual machine, where a
/// thread's wake-up costs some 100 µs, those wake-ups in the pause between plays were some
/// 8 % of motiond's CPU at one client (docs/performance.md).
final class StoppableWait: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    /// Under the mutex.
    private var stopped = false

    init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Waits until `deadline`, seconds on `CLOCK_MONOTONIC`: true when it came, false when
    /// the wait was stopped (before or during it).
    func wait(until deadline: Double) -> Bool {
        // Past 10⁹ s from the clock's start (31 years), a deadline is as good as never.
        let bounded = Swift.min(Swift.max(deadline, 0), 1e9)
        let whole = bounded.rounded(.down)
        var time = timespec(tv_sec: Int(whole), tv_nsec: Int((bounded - whole) * 1e9))
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !stopped {
            // 0: woken, by a stop or spuriously; anything else is the deadline (ETIMEDOUT).
            if pthread_cond_timedwait(condition, mutex, &time) != 0 { return !stopped }
        }
        return false
    }

    /// Ends the wait in progress, and every later one, at once.
    func stop() {
        pthread_mutex_lock(mutex)
        stopped = true
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }
}
