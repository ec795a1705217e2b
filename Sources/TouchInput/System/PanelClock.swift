/// Puts a panel's frame stamps on motiond's monotonic clock, which the frame clock and every
/// spring run on.
///
/// A panel's stamps are the kernel's monotonic clock only when it accepted `EVIOCSCLOCKID`.
/// Otherwise they are the wall clock (decades ahead), or whatever a replay or a firmware
/// gives (10⁶ s ahead, say), and the wall clock jumps when it is set. A spring a frame starts
/// at its stamp, while the frame clock ticks on the monotonic clock: a stamp ahead of that
/// clock put every tick before the spring's start, and the toss never came to rest. So:
///
/// - the first frame stamped within ``lateness`` before the clock is taken as stamped on
///   it (a live panel's case, kept exact); any other sets the offset to the clock's now;
/// - a frame that would land ahead of now lowers the offset to put it at now: no event
///   happened after it was read, so the offset only tightens toward the least delay;
/// - a frame that would land more than ``lateness`` behind now re-bases to now (a clock set
///   back, or stamps that ran slow), and ``rebases`` counts it.
///
/// The stamps' differences, what velocities are measured from, are kept between re-bases.
public struct PanelClock: Sendable, Equatable {
    /// Added to the panel's stamps; nil before the first frame.
    public private(set) var offset: Double?
    /// How many times the stamps disagreed with the clock by more than ``lateness`` (ahead or
    /// behind) after the first frame, and the offset was measured again.
    public private(set) var rebases = 0

    /// How far behind the clock a frame may be stamped and still keep its stamp's time: a
    /// frame read late by a busy process (the frame clock then catches up to it), while a
    /// second is longer than any reading delay motiond can have without its watchdog firing.
    public static let lateness = 1.0

    public init() {}

    /// The time on motiond's clock of a frame stamped `stamp` and read at `now`: never
    /// after `now`. A stamp or a clock that is no number, or an offset too large for a double,
    /// gives `now`.
    public mutating func time(of stamp: Double, readAt now: Double) -> Double {
        guard stamp.isFinite, now.isFinite else { return now }
        guard let offset else {
            rebase(stamp, now, measured: stamp <= now && now - stamp <= Self.lateness ? 0 : now - stamp)
            guard let measured = self.offset else { return now }
            return Swift.min(stamp + measured, now)
        }
        let time = stamp + offset
        guard time.isFinite else {
            rebase(stamp, now, counted: true)
            return now
        }
        if time > now {
            rebase(stamp, now, counted: time - now > Self.lateness)
            return now
        }
        if now - time > Self.lateness {
            rebase(stamp, now, counted: true)
            return now
        }
        return time
    }

    /// Measures the offset again, so that `stamp` is `now` (or `measured`), counting it in
    /// ``rebases`` when the stamps and the clock disagreed by more than ``lateness``.
    private mutating func rebase(_ stamp: Double, _ now: Double, measured: Double? = nil, counted: Bool = false) {
        let offset = measured ?? now - stamp
        self.offset = offset.isFinite ? offset : nil
        if counted { rebases += 1 }
    }
}
