import TouchInput

/// The touches an app gets from a virtual touchscreen under a compositor that drops touch
/// cancels (Debian 12's weston 10, sway 1.7, cage), judged as Chromium judges them: what
/// motiond cancels must end in none of a tap, a long press or a fling, and nothing may stay
/// down. Built from libinput's view with the time of each write (``RecordingVirtualDevice/clock``).
package struct AppTouch: CustomStringConvertible {
    package enum End: Equatable { case up, cancel, stillDown }

    package var slot: Int
    package var downAt: Double
    package var down: (x: Int32, y: Int32)
    /// The farthest it went from where it landed, in pixels.
    package var farthest = 0.0
    /// When it last moved, and when it ended.
    package var lastMotionAt: Double
    package var end = End.stillDown
    package var endAt: Double?
    /// How long it stayed within a tap's slop after it landed.
    package var stillWithinSlop = 0.0
    /// Its positions with their times, in pixels: what a velocity tracker is given.
    package var samples: [(time: Double, x: Double, y: Double)] = []

    /// Chromium's numbers (ui/events/gesture_detection, GestureConfiguration on Linux): a tap
    /// moves at most 15 px; a long press is 1 s within that. Its velocity tracker reckons a
    /// lift's velocity from the samples of the last 100 ms before the last one, however long
    /// before the lift that came (the compositor lab saw a drag left still for 0.15 s before
    /// its lift fling): a fling is a velocity over 50 px/s there, after the touch left the slop.
    package static let tapSlop = 15.0
    package static let longPress = 1.0
    package static let flingWindow = 0.1
    package static let flingVelocity = 50.0

    /// Whether a compositor that drops cancels would leave it as a click.
    package var isTap: Bool { end == .up && farthest <= Self.tapSlop && (endAt ?? .infinity) - downAt < Self.longPress }
    package var isLongPress: Bool { stillWithinSlop >= Self.longPress }
    /// Whether it lifted while moving, as the tracker sees it: a fling, whose stop eats the
    /// next tap's click.
    package var flings: Bool { end == .up && farthest > Self.tapSlop && velocity > Self.flingVelocity }

    /// The speed over the samples of the last 100 ms before the last one, in pixels a second.
    package var velocity: Double {
        guard let last = samples.last, let first = samples.first(where: { last.time - $0.time <= Self.flingWindow }),
              last.time > first.time else { return 0 }
        return ((last.x - first.x) * (last.x - first.x) + (last.y - first.y) * (last.y - first.y)).squareRoot() / (last.time - first.time)
    }
    /// Whether it stays down in the app: a cancel the compositor drops, or no end at all.
    package var staysDown: Bool { end != .up }

    package var description: String {
        "slot \(slot) down at \(downAt) (\(down.x), \(down.y)), farthest \(farthest) px, last moved \(lastMotionAt), \(end) at \(endAt.map { "\($0)" } ?? "-"), still \(stillWithinSlop) s"
    }

    /// The touches of `seen` (with `times`, one each), in the order they landed.
    package static func touches(_ seen: [LibinputModel.Seen], times: [Double]) -> [AppTouch] {
        var done: [AppTouch] = []
        var open: [Int: AppTouch] = [:]
        for (event, time) in zip(seen, times) {
            switch event {
            case .down(let slot, let x, let y):
                open[slot] = AppTouch(slot: slot, downAt: time, down: (x, y), lastMotionAt: time)
                open[slot]?.samples = [(time, Double(x) / VirtualTouchscreenGeometry.unitsPerPixel, Double(y) / VirtualTouchscreenGeometry.unitsPerPixel)]
            case .motion(let slot, let x, let y):
                guard var touch = open[slot] else { continue }
                let distance = Double((x - touch.down.x) * (x - touch.down.x) + (y - touch.down.y) * (y - touch.down.y)).squareRoot()
                    / VirtualTouchscreenGeometry.unitsPerPixel
                if touch.farthest <= tapSlop && distance > tapSlop { touch.stillWithinSlop = time - touch.downAt }
                touch.farthest = max(touch.farthest, distance)
                touch.lastMotionAt = time
                touch.samples.append((time, Double(x) / VirtualTouchscreenGeometry.unitsPerPixel, Double(y) / VirtualTouchscreenGeometry.unitsPerPixel))
                open[slot] = touch
            case .up(let slot), .cancel(let slot):
                guard var touch = open.removeValue(forKey: slot) else { continue }
                if case .up = event { touch.end = .up } else { touch.end = .cancel }
                touch.endAt = time
                if touch.farthest <= tapSlop { touch.stillWithinSlop = time - touch.downAt }
                done.append(touch)
            }
        }
        return (done + open.values).sorted { $0.downAt < $1.downAt || ($0.downAt == $1.downAt && $0.slot < $1.slot) }
    }
}
