#ifndef MOTIOND_CLINUX_SHIM_H
#define MOTIOND_CLINUX_SHIM_H
// The Linux system calls Swift cannot make itself: `syscall` is variadic, which Swift does
// not import. A futex, for MotionServer's StoppableWait.
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

// Waits until `deadline` on CLOCK_MONOTONIC unless `*flag` is set (not 0), or set meanwhile
// by motiond_set_flag_and_wake: 1 when the flag was set, 0 when the deadline came. One
// futex wait a call, where a condition variable's timed wait also wakes its mutex's
// (nobody) as it lets go: glibc retakes that mutex as contended.
static inline int motiond_wait_unless_flag(uint32_t *flag, const struct timespec *deadline) {
    for (;;) {
        if (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != 0) return 1;
        // FUTEX_WAIT_BITSET: an absolute deadline, on CLOCK_MONOTONIC without FUTEX_CLOCK_REALTIME.
        long result = syscall(SYS_futex, flag, FUTEX_WAIT_BITSET_PRIVATE, 0, deadline, NULL, FUTEX_BITSET_MATCH_ANY);
        if (result == -1 && errno == ETIMEDOUT) return __atomic_load_n(flag, __ATOMIC_ACQUIRE) != 0;
        if (result == -1 && errno != EAGAIN && errno != EINTR) {
            // A futex refused (no such call, a deadline out of range): sleep as without one.
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, deadline, NULL) == EINTR) {}
            return __atomic_load_n(flag, __ATOMIC_ACQUIRE) != 0;
        }
        // Woken, the flag already set (EAGAIN), a signal (EINTR): look at the flag again.
    }
}

// Sets `*flag` and wakes every thread in motiond_wait_unless_flag on it.
static inline void motiond_set_flag_and_wake(uint32_t *flag) {
    __atomic_store_n(flag, 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, flag, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}
#endif
