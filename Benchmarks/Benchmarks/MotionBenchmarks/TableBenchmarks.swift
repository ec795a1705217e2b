import Benchmark
import Foundation
import MotionCore

/// A multi-user table: a 3840 × 2160 surface covered with a grid of photos, each directly
/// manipulable, and visitors moving two fingers on a photo each, at 240 Hz. The first is the
/// table the figures are quoted for (60 contacts over 200 elements); the others vary one of
/// the two, to show how a frame's cost grows with each.
func tableBenchmarks() {
    for (contacts, elements) in [(60, 200), (2, 200), (20, 200), (60, 30), (60, 800)] {
        Benchmark("Table, one frame: \(contacts) contacts over \(elements) elements", configuration: .init(scalingFactor: .kilo)) { benchmark in
            let table = Size(width: 3840, height: 2160)
            let clock = ManualFrameClock(now: 0)
            let engine = MotionEngine(scene: Scene(size: table), clock: clock)
            // A grid as square as the count allows, each photo 90 % of its cell.
            let columns = Int(Double(elements).squareRoot() * 1.5).clamped(1, elements)
            let rows = (elements + columns - 1) / columns
            let cell = Size(width: table.width / Double(columns), height: table.height / Double(rows))
            var centres: [Point] = []
            for index in 0..<elements {
                let centre = Point(x: (Double(index % columns) + 0.5) * cell.width, y: (Double(index / columns) + 0.5) * cell.height)
                centres.append(centre)
                engine.add(Element(id: "photo\(index)", center: centre, size: Size(width: cell.width * 0.9, height: cell.height * 0.9)),
                           interactions: [DirectlyManipulable()])
            }
            // Two fingers on each of contacts / 2 photos spread over the table, turning slowly
            // about the photo's centre: every photo touched moves, turns and scales each frame.
            let touched = (0..<(contacts / 2)).map { $0 * elements / (contacts / 2) }
            func frame(_ index: Int, _ phase: TouchPhase) -> TouchFrame {
                let t = Double(index) / 240
                var fingers: [TouchContact] = []
                for (pair, photo) in touched.enumerated() {
                    let radius = Swift.min(cell.width, cell.height) * (0.2 + 0.05 * sin(t))
                    for finger in 0..<2 {
                        let angle = t + Double(finger) * .pi
                        let position = centres[photo] + Point(x: radius * cos(angle), y: radius * sin(angle))
                        let id = Int32(2 * pair + finger)
                        fingers.append(TouchContact(slot: Int(id), trackingID: id, phase: phase, deviceX: 0, deviceY: 0, position: position))
                    }
                }
                return TouchFrame(time: t, contacts: fingers)
            }
            engine.process(frame(0, .began))
            let frames = (1..<2048).map { frame($0, .moved) }
            for index in 0..<64 { engine.process(frames[index]) }
            var index = 64
            var published = 0
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

extension Int {
    fileprivate func clamped(_ low: Int, _ high: Int) -> Int { Swift.max(low, Swift.min(high, self)) }
}
