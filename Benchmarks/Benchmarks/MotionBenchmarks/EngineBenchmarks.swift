import Benchmark
import Foundation
import MotionCore

/// What the engine costs per touch frame: routing, recognizers, interactions and the
/// coalesced publication, for one element under two fingers and for ten elements under one
/// finger each.
func engineBenchmarks() {
    // The same, with the screen watching for three [[screen_gesture]] patterns (a long press,
    // a swipe, an edge swipe): what they add to a frame.
    // And with touch prediction 16 ms ahead ([screen] prediction): the fingers' predictors and
    // each element's predicted streams.
    for (elements, watching, prediction, name) in [(1, false, 0.0, "1 element, 2 contacts"), (10, false, 0, "10 elements, 10 contacts"),
                                                   (1, true, 0, "1 element, 2 contacts, 3 screen gestures"), (10, true, 0, "10 elements, 10 contacts, 3 screen gestures"),
                                                   (1, false, 0.016, "1 element, 2 contacts, prediction"), (10, false, 0.016, "10 elements, 10 contacts, prediction")] {
        Benchmark("Engine, one frame: \(name)", configuration: .init(scalingFactor: .kilo)) { benchmark in
            let clock = ManualFrameClock(now: 0)
            let engine = MotionEngine(scene: Scene(size: Size(width: 1920, height: 1080)), clock: clock, prediction: prediction)
            var published = 0
            for index in 0..<elements {
                let element = Element(id: "e\(index)", center: Point(x: 96 + Double(index) * 192, y: 540), size: Size(width: 180, height: 600))
                engine.add(element, interactions: [DirectlyManipulable()])
            }
            if watching {
                engine.watch([ScreenGesturePattern(name: "admin", gesture: .longPress, touches: 3, duration: 2),
                              ScreenGesturePattern(name: "next", gesture: .swipe, touches: 3),
                              ScreenGesturePattern(name: "back", gesture: .edgeSwipe, edge: .left)])
            }
            // Two fingers on the one element, or one finger on each of ten, moving every frame.
            let fingers = elements == 1 ? [Point(x: 60, y: 500), Point(x: 130, y: 580)] : (0..<10).map { Point(x: 96 + Double($0) * 192, y: 540) }
            func frame(_ index: Int, _ phase: TouchPhase) -> TouchFrame {
                let t = Double(index) / 120
                return TouchFrame(time: t, contacts: fingers.enumerated().map { slot, start in
                    TouchContact(slot: slot, trackingID: Int32(slot), phase: phase, deviceX: 0, deviceY: 0,
                                 position: start + Point(x: 20 * sin(t + Double(slot)), y: 20 * cos(t)))
                })
            }
            engine.process(frame(0, .began))
            let frames = (1..<4096).map { frame($0, .moved) }
            var index = 0
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                // Given back once read, as the daemon does: the next report reuses its storage.
                var report = engine.process(frames[index])
                published += report.values.count
                engine.takeBack(&report)
                index = (index + 1) % frames.count
            }
            benchmark.stopMeasurement()
            blackHole(published)
        }
    }
}
