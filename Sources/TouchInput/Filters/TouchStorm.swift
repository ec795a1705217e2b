/// A touch storm: a sensor that floods contacts until it is reset. More new contacts within
/// a second than fingers can make (``PhantomTouchSettings/stormContacts``) make the panel
/// quiet: every contact down is cancelled, and contacts that land are ignored until they
/// lift, for ``PhantomTouchSettings/stormQuiet`` seconds. Landings are counted while quiet
/// too, so a storm still raging when the quiet ends begins a new quiet at once; one that
/// has stopped leaves the panel working again by itself.
///
/// motiond does not reset the sensor: a USB panel could be re-enumerated by writing 0 then
/// 1 to its `authorized` file in sysfs, and a driver unbound and bound again, but both need
/// root, and a panel that storms again after a reset would be reset in a loop. The storm is
/// in health and the log for an operator to act on.
struct TouchStorm {
    /// The landings of the last second, oldest first: those before `oldest` have left it, and
    /// are dropped together once there are more of them than the limit.
    private var landings: [Double] = []
    private var oldest = 0
    /// Until when the panel is quiet; nil when it is not.
    private(set) var quietUntil: Double?

    init() {}

    /// Whether the panel is quiet at `time`.
    func isQuiet(at time: Double) -> Bool {
        guard let quietUntil else { return false }
        return time < quietUntil
    }

    /// A contact landed at `time`; returns true when it begins a storm (the panel was not
    /// quiet, and now is), with `limit` new contacts a second and `quiet` seconds.
    mutating func landed(at time: Double, limit: Int, quiet: Double) -> Bool {
        guard limit > 0 else { return false }
        // A clock that went back (a replay played again) begins the count anew.
        if let last = landings.last, time < last {
            landings.removeAll(keepingCapacity: true)
            oldest = 0
        }
        // Landings older than a second leave the ring from its oldest end.
        while oldest < landings.count, time - landings[oldest] > 1 { oldest += 1 }
        if oldest > limit { landings.removeFirst(oldest); oldest = 0 }
        landings.append(time)
        guard landings.count - oldest > limit, !isQuiet(at: time) else { return false }
        quietUntil = time + quiet
        return true
    }

    /// The landings counted in the last second before the latest one.
    var landingsInLastSecond: Int { landings.count - oldest }
}
