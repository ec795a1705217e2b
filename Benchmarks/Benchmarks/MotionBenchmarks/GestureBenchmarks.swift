import Benchmark
import Foundation
import MotionCore

/// What the recognizers cost per frame: drag, pinch, rotation and tap together, on 2 and on
/// 10 fingers moving every frame.
func gestureBenchmarks() {
    for fingers in [2, 10] {
        Benchmark("GestureSet, one frame of \(fingers) moving fingers", configuration: .init(scalingFactor: .kilo)) { benchmark in
            // Fingers on a circle, turning and spreading; a landing frame first.
            func frame(_ index: Int, phase: TouchPhase) -> TouchFrame {
                let t = Double(index) / 120
                let radius = 150 + 20 * sin(t)
                let contacts = (0..<fingers).map { finger -> TouchContact in
                    let angle = Double(finger) / Double(fingers) * 2 * .pi + t
                    let position = Point(x: 960 + radius * cos(angle), y: 540 + radius * sin(angle))
                    return TouchContact(slot: finger, trackingID: Int32(finger), phase: phase, deviceX: 0, deviceY: 0,
                                        position: position, millimetres: position / 4)
                }
                return TouchFrame(time: t, contacts: contacts)
            }
            let frames = [frame(0, phase: .began)] + (1..<4096).map { frame($0, phase: .moved) }
            var set = GestureSet()
            _ = set.update(frames[0])
            var index = 1
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(set.update(frames[index]))
                index = index == frames.count - 1 ? 1 : index + 1
            }
            benchmark.stopMeasurement()
        }
    }
}
