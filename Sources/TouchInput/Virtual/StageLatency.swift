import Glibc

/// How long motiond's own stage took for the frames a virtual touchscreen wrote: from the
/// input thread's read of the panel's event that completed a frame to the uinput write's
/// return. The metrics keep a Prometheus histogram of the same; this is what `devices` and
/// `stats` say of it (p50, p99) without a Prometheus server to ask.
///
/// Counts in fixed buckets, 20 a decade from 10 µs to 10 s (each 12 % wider than the one
/// before): a frame costs a logarithm and an increment, no allocation, on the path the apps
/// wait on; a quantile is the upper edge of its bucket, so it is never understated and at
/// most 12 % over.
public struct StageLatency: Sendable, Equatable {
    /// Frames timed.
    public private(set) var count = 0
    /// Frames by bucket: bucket `i` holds those up to ``edge(_:)`` of `i`; the last, those
    /// beyond the top edge.
    private var buckets = [Int](repeating: 0, count: Self.bucketCount)

    static let lowest = 1e-5
    static let perDecade = 20.0
    static let decades = 6.0
    /// The edges from 10 µs to 10 s, and one bucket beyond.
    static let bucketCount = Int(perDecade * decades) + 2

    public init() {}

    /// Counts one frame that took `seconds`.
    public mutating func record(_ seconds: Double) {
        count += 1
        buckets[Self.bucket(of: seconds)] += 1
    }

    /// The bucket `seconds` falls in: the first whose upper edge it does not exceed.
    static func bucket(of seconds: Double) -> Int {
        guard seconds > lowest else { return 0 }
        let index = (log10(seconds / lowest) * perDecade).rounded(.up)
        guard index.isFinite, index < Double(bucketCount - 1) else { return bucketCount - 1 }
        // A value a rounding error above an edge stays in that edge's bucket.
        let below = Int(index) - 1
        return below >= 0 && seconds <= edge(below) ? below : Int(index)
    }

    /// The upper edge of bucket `index`, in seconds; the last bucket's is infinite.
    static func edge(_ index: Int) -> Double {
        index >= bucketCount - 1 ? .infinity : lowest * pow(10, Double(index) / perDecade)
    }

    /// The time within which a share `q` (0.5 for the median, 0.99) of the frames were
    /// written: the upper edge of the bucket that holds that frame, at most 10 s; nil before
    /// a frame.
    public func quantile(_ q: Double) -> Double? {
        guard count > 0 else { return nil }
        let rank = Swift.max(1, Int((q * Double(count)).rounded(.up)))
        var seen = 0
        for (index, frames) in buckets.enumerated() {
            seen += frames
            if seen >= rank { return Swift.min(Self.edge(index), Self.edge(Self.bucketCount - 2)) }
        }
        return Self.edge(Self.bucketCount - 2)
    }

    /// The frames of both: an output's devices over a reload.
    public func adding(_ other: StageLatency) -> StageLatency {
        var sum = self
        sum.count += other.count
        for index in buckets.indices { sum.buckets[index] += other.buckets[index] }
        return sum
    }
}
