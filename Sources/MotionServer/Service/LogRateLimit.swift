/// At most ``burst`` log lines per ``interval`` for something that can happen without bound
/// (a flood of connections refused, a panel glitching on every frame), the first line after
/// a pause counting what was held back: the journal keeps what matters, and a fault that
/// repeats thousands of times a second cannot crowd everything else out of it.
struct LogRateLimit {
    /// The length of a window, in seconds: it starts with the first line after the last
    /// window ended.
    let interval: Double
    /// The lines a window may hold.
    let burst: Int
    /// What happened and was not logged yet.
    private var pending = 0
    private var windowStart = -Double.infinity
    private var linesInWindow = 0

    init(interval: Double = 10, burst: Int = 1) {
        self.interval = interval
        self.burst = burst
    }

    /// Counts `count` more occurrences at `now`. When a line is due, returns how many it
    /// stands for (these and those held back since the last line) and starts counting
    /// afresh; nil while lines are held back.
    mutating func record(_ count: Int = 1, at now: Double) -> Int? {
        pending += count
        guard pending > 0 else { return nil }
        if now - windowStart >= interval {
            windowStart = now
            linesInWindow = 0
        }
        guard linesInWindow < burst else { return nil }
        linesInWindow += 1
        defer { pending = 0 }
        return pending
    }
}
