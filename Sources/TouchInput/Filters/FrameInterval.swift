/// How often a device reports while fingers are down: the median of its latest gaps between
/// frames, for the jump filter, which judges a move against the panel's own pace (a panel at
/// 20 Hz takes 50 ms a frame, one at 240 Hz 4 ms) rather than a fixed time, as libinput
/// judges a touchpad's jumps against its frame interval.
///
/// A gap of a quarter second or more is a pause between touches, not the pace, and frames
/// with one time (two devices' events merged, a replay's duplicates) say nothing of it.
struct FrameInterval {
    /// Gaps kept: enough for a median that a dropped frame or two does not move.
    static let kept = 15
    /// Gaps needed before the median is believed.
    static let needed = 3
    /// The longest gap that is still the pace of the frames.
    static let longestGap = 0.25

    /// The latest gaps, in a ring.
    private var gaps: [Double] = []
    private var next = 0
    /// Where the median is found, kept so that finding it allocates nothing.
    private var sorted: [Double] = []
    private var lastTime: Double?
    /// The median gap, in seconds; nil until ``needed`` gaps were seen.
    private(set) var median: Double?

    init() {
        gaps.reserveCapacity(Self.kept)
        sorted.reserveCapacity(Self.kept)
    }

    /// A frame came at `time`.
    mutating func frame(at time: Double) {
        defer { lastTime = time }
        guard let lastTime, time - lastTime > 0, time - lastTime < Self.longestGap else { return }
        if gaps.count < Self.kept { gaps.append(time - lastTime) } else { gaps[next] = time - lastTime }
        next = (next + 1) % Self.kept
        // The pace changes slowly: the median is found again once the ring has turned (and
        // at each gap until it is full), not at every frame.
        guard gaps.count >= Self.needed, gaps.count < Self.kept || next == 0 else { return }
        sorted.removeAll(keepingCapacity: true)
        sorted.append(contentsOf: gaps)
        sorted.sort()
        median = sorted[sorted.count / 2]
    }
}
