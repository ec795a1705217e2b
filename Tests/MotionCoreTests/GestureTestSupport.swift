import Foundation
@testable import MotionCore

/// Generates touch frames from finger paths, as a device reporting at a fixed rate would.
struct FingerScript {
    /// A finger: its tracking id, when it is down, and where it is at each time (pixels).
    struct Finger {
        var id: Int32
        var down: ClosedRange<Double>
        var path: (Double) -> Point
    }

    var fingers: [Finger]
    /// Pixels per millimetre on each axis, or nil for a device with no resolution.
    var pixelsPerMillimetre: (x: Double, y: Double)? = nil

    /// Frames at `rate` Hz from the first landing to the last lift.
    func frames(rate: Double) -> [TouchFrame] {
        let start = fingers.map(\.down.lowerBound).min()!
        let end = fingers.map(\.down.upperBound).max()!
        var times = Set((0...Int(((end - start) * rate).rounded(.up))).map { start + Double($0) / rate }.filter { $0 <= end + 1e-12 })
        // Every landing and lift gets a frame of its own time.
        for finger in fingers { times.insert(finger.down.lowerBound); times.insert(finger.down.upperBound) }
        var previous: [Int32: Point] = [:]
        var frames: [TouchFrame] = []
        for time in times.sorted() {
            var contacts: [TouchContact] = []
            for (slot, finger) in fingers.enumerated() where finger.down.contains(time) {
                let position = finger.path(time)
                let phase: TouchPhase
                if previous[finger.id] == nil { phase = .began }
                else if time == finger.down.upperBound { phase = .ended }
                else { phase = previous[finger.id] == position ? .stationary : .moved }
                contacts.append(contact(slot: slot, id: finger.id, phase: phase, at: position))
                previous[finger.id] = phase == .ended ? nil : position
            }
            if !contacts.isEmpty { frames.append(TouchFrame(time: time, contacts: contacts)) }
        }
        return frames
    }

    func contact(slot: Int, id: Int32, phase: TouchPhase, at position: Point) -> TouchContact {
        let mm = pixelsPerMillimetre.map { Point(x: position.x / $0.x, y: position.y / $0.y) }
        return TouchContact(slot: slot, trackingID: id, phase: phase, deviceX: Int32(position.x.rounded()),
                            deviceY: Int32(position.y.rounded()), position: position, millimetres: mm)
    }
}

extension FingerScript.Finger {
    /// A finger going round `centre` at `radius`, from `angle` turning `turn` radians over `down`.
    static func circle(id: Int32, centre: Point, radius: Double, from angle: Double, turn: Double, down: ClosedRange<Double>) -> FingerScript.Finger {
        FingerScript.Finger(id: id, down: down) { t in
            let progress = (t - down.lowerBound) / (down.upperBound - down.lowerBound)
            let a = angle + turn * progress
            return Point(x: centre.x + radius * cos(a), y: centre.y + radius * sin(a))
        }
    }

    /// A finger moving in a straight line from `from` to `to` over `down`.
    static func line(id: Int32, from: Point, to: Point, down: ClosedRange<Double>) -> FingerScript.Finger {
        FingerScript.Finger(id: id, down: down) { t in
            let progress = (t - down.lowerBound) / (down.upperBound - down.lowerBound)
            return from + (to - from) * progress
        }
    }
}

extension Array where Element == RecognizedGesture {
    var drags: [DragEvent] { compactMap { if case .drag(let e) = $0 { return e }; return nil } }
    var pinches: [PinchEvent] { compactMap { if case .pinch(let e) = $0 { return e }; return nil } }
    var rotations: [RotationEvent] { compactMap { if case .rotate(let e) = $0 { return e }; return nil } }
    var taps: [TapEvent] { compactMap { if case .tap(let e) = $0 { return e }; return nil } }
}

/// Runs frames through a gesture set and collects every event.
func recognize(_ frames: [TouchFrame], _ kinds: Set<GestureKind> = Set(GestureKind.allCases),
               simultaneity: GestureSet.Simultaneity = .simultaneous) -> [RecognizedGesture] {
    var set = GestureSet(kinds, simultaneity: simultaneity)
    return frames.flatMap { set.update($0) }
}
