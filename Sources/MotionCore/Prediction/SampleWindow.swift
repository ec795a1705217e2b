/// The last few samples of a contact, in a ring that is allocated once: what the windowed
/// predictors fit to.
struct SampleWindow {
    struct Sample {
        var time: Double
        var position: Point
    }

    static let capacity = 16
    private var samples: [Sample]
    private var start = 0
    private(set) var count = 0

    init() {
        samples = Array(repeating: Sample(time: 0, position: Point(x: 0, y: 0)), count: Self.capacity)
    }

    /// The `index`th sample kept, oldest first.
    subscript(index: Int) -> Sample { samples[(start + index) % Self.capacity] }

    var last: Sample? { count > 0 ? self[count - 1] : nil }

    mutating func append(_ sample: Sample) {
        if count == Self.capacity {
            start = (start + 1) % Self.capacity
            count -= 1
        }
        samples[(start + count) % Self.capacity] = sample
        count += 1
    }

    /// Adds a sample and keeps those of the last `span` seconds; after a gap longer than
    /// ``PredictorLimits/resetGap``, only the new one.
    mutating func add(_ position: Point, at time: Double, keeping span: Double) {
        if let last, time - last.time > PredictorLimits.resetGap { removeAll() }
        append(Sample(time: time, position: position))
        keep(within: span)
    }

    /// Keeps only the samples within `span` seconds of the last.
    mutating func keep(within span: Double) {
        guard let last else { return }
        while count > 0 && last.time - self[0].time > span + 1e-9 {
            start = (start + 1) % Self.capacity
            count -= 1
        }
    }

    mutating func removeAll() {
        start = 0
        count = 0
    }

    /// A least-squares fit of each axis against time, over the samples kept but the last
    /// `dropping`: a line, or a parabola when `quadratic` and there are 4 samples or more.
    /// Times are taken from the last sample kept, so the fit's value and slope at 0 are the
    /// position and velocity at that sample. Nil with fewer than 2 samples or no time between.
    func fit(quadratic: Bool, dropping: Int = 0) -> (position: Point, velocity: Point)? {
        let n = count - dropping
        guard n >= 2 else { return nil }
        let origin = self[n - 1].time
        if quadratic && n >= 4 {
            // Normal equations of x(t) = c0 + c1 t + c2 t², solved by Cramer's rule; t in
            // milliseconds, so that the sums of t⁴ stay far from the rounding floor.
            var s = (0.0, 0.0, 0.0, 0.0, 0.0)
            var tx = (0.0, 0.0, 0.0), ty = (0.0, 0.0, 0.0)
            for index in 0..<n {
                let sample = self[index]
                let t = (sample.time - origin) * 1000, t2 = t * t
                s.0 += 1; s.1 += t; s.2 += t2; s.3 += t2 * t; s.4 += t2 * t2
                tx.0 += sample.position.x; tx.1 += sample.position.x * t; tx.2 += sample.position.x * t2
                ty.0 += sample.position.y; ty.1 += sample.position.y * t; ty.2 += sample.position.y * t2
            }
            let det = s.0 * (s.2 * s.4 - s.3 * s.3) - s.1 * (s.1 * s.4 - s.3 * s.2) + s.2 * (s.1 * s.3 - s.2 * s.2)
            if abs(det) > 1e-9 {
                func solve(_ r: (Double, Double, Double)) -> (Double, Double) {
                    let c0 = r.0 * (s.2 * s.4 - s.3 * s.3) - s.1 * (r.1 * s.4 - s.3 * r.2) + s.2 * (r.1 * s.3 - s.2 * r.2)
                    let c1 = s.0 * (r.1 * s.4 - r.2 * s.3) - r.0 * (s.1 * s.4 - s.3 * s.2) + s.2 * (s.1 * r.2 - r.1 * s.2)
                    return (c0 / det, c1 / det)
                }
                let x = solve(tx), y = solve(ty)
                return (Point(x: x.0, y: y.0), Point(x: x.1 * 1000, y: y.1 * 1000))
            }
        }
        var meanT = 0.0, meanX = 0.0, meanY = 0.0
        for index in 0..<n {
            let sample = self[index]
            meanT += sample.time - origin
            meanX += sample.position.x
            meanY += sample.position.y
        }
        meanT /= Double(n); meanX /= Double(n); meanY /= Double(n)
        var variance = 0.0, covX = 0.0, covY = 0.0
        for index in 0..<n {
            let sample = self[index]
            let t = sample.time - origin - meanT
            variance += t * t
            covX += t * (sample.position.x - meanX)
            covY += t * (sample.position.y - meanY)
        }
        guard variance > 0 else { return nil }
        let velocity = Point(x: covX / variance, y: covY / variance)
        return (Point(x: meanX - velocity.x * meanT, y: meanY - velocity.y * meanT), velocity)
    }
}
