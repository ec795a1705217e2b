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

    /// Chromium's numbers (ui/events/gesture_detection, GestureConfiguration on Linux): a tap
    /// moves at most 15 px; a long press is 1 s within that; a fling needs motion within the
    /// last 100 ms before the lift.
    package static let tapSlop = 15.0
    package static let longPress = 1.0
    package static let flingWindow = 0.1

    /// Whether a compositor that drops cancels would leave it as a click.
    package var isTap: Bool { end == .up && farthest <= Self.tapSlop && (endAt ?? .infinity) - downAt < Self.longPress }
    package var isLongPress: Bool { stillWithinSlop >= Self.longPress }
    /// Whether it lifted while moving: a fling, whose stop eats the next tap's click.
    package var flings: Bool { end == .up && farthest > Self.tapSlop && (endAt ?? .infinity) - lastMotionAt < Self.flingWindow }
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
            case .motion(let slot, let x, let y):
                guard var touch = open[slot] else { continue }
                let distance = Double((x - touch.down.x) * (x - touch.down.x) + (y - touch.down.y) * (y - touch.down.y)).squareRoot()
                    / VirtualTouchscreenGeometry.unitsPerPixel
                if touch.farthest <= tapSlop && distance > tapSlop { touch.stillWithinSlop = time - touch.downAt }
                touch.farthest = max(touch.farthest, distance)
                touch.lastMotionAt = time
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
