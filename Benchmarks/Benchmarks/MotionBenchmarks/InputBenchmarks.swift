import Benchmark
import Foundation
import MotionCore
import TouchInput

/// The biggest recording among the test fixtures: two fingers, 695 events, 98 frames.
let biggestRecording = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
    .appendingPathComponent("Tests/Fixtures/recordings/whot-evemu-devices__ep0430m09__2f-drag-scroll.evemu")

/// What reading touch input costs: one frame through the assembler (the work per frame of a
/// live device, after libevdev), and parsing a recording.
func inputBenchmarks() {
    Benchmark("Frame assembly, one frame of the 2-finger ep0430 recording", configuration: .init(scalingFactor: .kilo)) { benchmark in
        let recording = try! EvemuRecording(parsing: String(contentsOf: biggestRecording, encoding: .utf8))
        var assembler = TouchFrameAssembler(description: recording.device!)
        let events = recording.events
        var index = 0
        benchmark.startMeasurement()
        // Steady state: the recording ends with every finger up, so it loops seamlessly.
        for _ in benchmark.scaledIterations {
            var frame: TouchFrame?
            while frame == nil {
                frame = assembler.consume(events[index])
                index = index + 1 == events.count ? 0 : index + 1
            }
            blackHole(frame)
        }
        benchmark.stopMeasurement()
    }

    Benchmark("Parse the ep0430 recording (695 events)") { benchmark in
        let text = try! String(contentsOf: biggestRecording, encoding: .utf8)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try! EvemuRecording(parsing: text))
        }
        benchmark.stopMeasurement()
    }
}
