import Testing
import TouchInput

/// The virtual touchscreen's own latency as `stats` says it: a quantile is never below the
/// frames' own and at most a bucket (12 %) above.
@Suite("Stage latency quantiles")
struct StageLatencyTests {
    @Test("p50 and p99 of known latencies: at or above the true ones, within 12.3 %; nil before a frame; two devices' frames add")
    func quantiles() {
        var latency = StageLatency()
        #expect(latency.quantile(0.5) == nil)
        // 1,000 frames: 0.1 ms, 0.2 ms … 100 ms.
        let seconds = (1...1000).map { Double($0) * 1e-4 }
        for value in seconds.shuffled() { latency.record(value) }
        #expect(latency.count == 1000)
        for (q, truth) in [(0.5, seconds[499]), (0.99, seconds[989]), (1.0, seconds[999]), (0.001, seconds[0])] {
            let found = latency.quantile(q) ?? -1
            #expect(found >= truth && found <= truth * 1.123, "q \(q): \(found), truly \(truth)")
        }
        var other = StageLatency()
        for _ in 0..<3000 { other.record(0.5) }
        let both = latency.adding(other)
        #expect(both.count == 4000)
        #expect((both.quantile(0.5) ?? 0) >= 0.5 && (both.quantile(0.5) ?? 1) <= 0.5 * 1.123)
    }

    @Test("an edge's own value stays in its bucket; nothing, negative or beyond 10 s is still counted, at the ends")
    func edges() {
        var latency = StageLatency()
        latency.record(1e-3)
        #expect(latency.quantile(1) == 1e-3 || abs((latency.quantile(1) ?? 0) - 1e-3) < 1e-15, "\(String(describing: latency.quantile(1)))")
        var extremes = StageLatency()
        for value in [-1.0, 0, 1e-7, 100, .infinity] { extremes.record(value) }
        #expect(extremes.count == 5)
        #expect(extremes.quantile(0.2) == 1e-5)
        #expect(extremes.quantile(1) == 10)
    }
}
