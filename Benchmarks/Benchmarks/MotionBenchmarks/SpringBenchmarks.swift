import Benchmark
import MotionCore

/// What a spring costs per frame: evaluating the closed form (value, velocity and the rest
/// test), and a whole frame through springSource on a frame clock.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .throughput], maxDuration: .seconds(2))
    inputBenchmarks()
    gestureBenchmarks()
    engineBenchmarks()
    tableBenchmarks()
    predictionBenchmarks()
    serverBenchmarks()
    sceneScaleBenchmarks()

    Benchmark("SpringCurve sample (value + velocity + rest test), Double", configuration: .init(scalingFactor: .kilo)) { benchmark in
        sample(SpringCurve(from: 0.0, velocity: 250, to: 1, configuration: .standard), threshold: 0.001, benchmark)
    }

    Benchmark("SpringCurve sample (value + velocity + rest test), Point", configuration: .init(scalingFactor: .kilo)) { benchmark in
        let curve = SpringCurve(from: Point(x: 0, y: 0), velocity: Point(x: 900, y: -400), to: Point(x: 640, y: 360), configuration: .standard)
        sample(curve, threshold: 1, benchmark)
    }

    Benchmark("springSource frame, Point spring writing a property", configuration: .init(scalingFactor: .kilo)) { benchmark in
        let clock = ManualFrameClock(now: 0)
        let position = ReactiveProperty(Point.zero)
        let destination = ReactiveProperty(Point(x: 640, y: 360))
        let spring = Spring(to: destination, initialValue: position, threshold: 1e-9)
        let subscription = springSource(spring, clock: clock).subscribe(next: { position.value = $0 })
        var t = 0.0
        benchmark.startMeasurement()
        for index in benchmark.scaledIterations {
            t += 1.0 / 120
            clock.tick(at: t)
            if index % 240 == 239 {
                // Keep it moving: a new destination every two seconds of frames.
                destination.value = destination.value == .zero ? Point(x: 640, y: 360) : .zero
            }
        }
        benchmark.stopMeasurement()
        subscription.unsubscribe()
    }
}

/// Evaluates what a running spring needs each frame, at 120 Hz times over its first half second.
func sample<Value>(_ curve: SpringCurve<Value>, threshold: Double, _ benchmark: Benchmark) {
    var t = 0.0
    for _ in benchmark.scaledIterations {
        t += 1.0 / 120
        if t > 0.5 { t = 0 }
        blackHole(curve.value(at: t))
        blackHole(curve.velocity(at: t))
        blackHole(curve.isAtRest(at: t, threshold: threshold))
    }
}
