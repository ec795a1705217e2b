import Glibc

/// The input thread's scheduling priority: above the rest of motiond's threads and the
/// kiosk's apps, so that a machine busy with them (a browser rendering, a debug build in an
/// emulated CPU) still gives the reading thread its turn when a panel writes. Its work is
/// bounded by the panel's rate; what it cannot read in time the kernel drops (`SYN_DROPPED`:
/// whole touches lost), while the daemon's work behind it is coalesced (``InputQueue``).
/// Android runs its input reader at nice -8 (`PRIORITY_URGENT_DISPLAY`) for the same reason.
///
/// Raising a thread's priority needs `CAP_SYS_NICE` or an `RLIMIT_NICE` that allows it; the
/// shipped unit filters `setpriority` out (`SystemCallFilter=~@resources`), so there the
/// thread keeps the service's priority (a drop-in's `Nice=` sets the whole service's).
enum ReadingPriority {
    /// The nice value asked for.
    static let nice: Int32 = -8

    /// Gives the calling thread ``nice``; nil if it did, else why not (an `errno`).
    static func raiseThisThread() -> Int32? {
        // On Linux the nice value is a thread's, and 0 names the calling thread (setpriority(2)).
        setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, nice) == 0 ? nil : errno
    }

    /// The calling thread's nice value.
    static func ofThisThread() -> Int32 {
        errno = 0
        return getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
    }
}
