import Benchmark
import Foundation
import MotionCore

/// What each predictor costs per sample: adding it and predicting from it, as the daemon
/// does for each finger each frame. A finger circling at 120 Hz.
func predictionBenchmarks() {
    for kind in PredictorKind.allCases {
        Benchmark("Predictor, one sample added and predicted: \(kind.rawValue)", configuration: .init(scalingFactor: .kilo)) { benchmark in
            kind.withType { type in run(type, benchmark) }
        }
    }
}

private func run<P: TouchPredictor>(_ type: P.Type, _ benchmark: Benchmark) {
    let samples = (0..<4096).map { index -> (Double, Point) in
        let t = Double(index) / 120
        return (t, Point(x: 960 + 300 * cos(2 * t), y: 540 + 300 * sin(2 * t)))
    }
    var predictor = P()
    for (time, position) in samples.prefix(64) { predictor.add(position, at: time) }
    var index = 64, laps = 0.0
    var sum = 0.0
    benchmark.startMeasurement()
    for _ in benchmark.scaledIterations {
        let (time, position) = samples[index]
        // Time goes on past the table's end, a lap at a time, as a finger's would.
        predictor.add(position, at: time + laps * Double(samples.count) / 120)
        sum += predictor.predict(0.016).x
        index += 1
        if index == samples.count { index = 0; laps += 1 }
    }
    benchmark.stopMeasurement()
    blackHole(sum)
}
