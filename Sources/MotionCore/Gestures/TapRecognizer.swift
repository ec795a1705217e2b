/// Recognizes taps, counting multiple taps (double, triple…) in a row.
///
/// A tap is discrete: `possible → recognized` when the fingers lift, or `possible → failed`
/// when a finger moves too far from where it landed, the press lasts too long, a contact
/// is cancelled, or a continuous gesture takes the fingers (see ``GestureSet``). A tap
/// whose fingers land within the multiple-tap interval and distance of the previous tap
/// counts on from it.
public struct TapRecognizer: Sendable {
    private enum Phase: Sendable { case idle, pressing, failed }

    /// The limits of a tap.
    public var thresholds: GestureThresholds
    private var phase = Phase.idle
    private var tracker = ContactTracker()
    private var landedAt = 0.0
    private var landings: [Int32: Point] = [:]
    private var location = Point.zero
    private var locationPhysical = Point.zero
    private var mostTouches = 0
    private var previous: (liftedAt: Double, location: Point, count: Int)?

    /// Creates a tap recognizer.
    public init(thresholds: GestureThresholds = GestureThresholds()) {
        self.thresholds = thresholds
    }

    /// Takes the next frame of the contacts assigned to this recognizer.
    public mutating func update(_ frame: TouchFrame) -> TapEvent? {
        let wasIdle = tracker.active.isEmpty
        tracker.update(frame)
        if wasIdle && !tracker.active.isEmpty {
            phase = .pressing
            landedAt = frame.time
            landings = [:]
            mostTouches = 0
            location = tracker.centroid
            locationPhysical = Self.centroid(tracker.active.map(\.physical))
        }
        for contact in tracker.active where landings[contact.id] == nil {
            landings[contact.id] = contact.physical
        }
        mostTouches = Swift.max(mostTouches, tracker.active.count)

        var event: TapEvent?
        if phase == .pressing && (tracker.cancelled || movedTooFar() || frame.time - landedAt > thresholds.tapMaximumDuration) {
            event = fail(at: frame.time)
        }
        if tracker.active.isEmpty {
            if phase == .pressing { event = recognize(at: frame.time) }
            phase = .idle
            tracker.reset()
        }
        return event
    }

    /// Fails the tap in progress (a continuous gesture took its fingers).
    public mutating func block(at time: Double) -> TapEvent? {
        phase == .pressing ? fail(at: time) : nil
    }

    private func movedTooFar() -> Bool {
        tracker.anyMoved(from: landings, beyond: thresholds.tapSlop[tracker.unit])
    }

    private mutating func fail(at time: Double) -> TapEvent {
        phase = .failed
        previous = nil
        return TapEvent(state: .failed, time: time, touches: mostTouches, count: 0, location: location)
    }

    private mutating func recognize(at time: Double) -> TapEvent {
        let distance = thresholds.multipleTapDistance[tracker.unit]
        var count = 1
        if let previous, landedAt - previous.liftedAt <= thresholds.multipleTapInterval,
           locationPhysical.distance(to: previous.location) <= distance {
            count = previous.count + 1
        }
        previous = (time, locationPhysical, count)
        return TapEvent(state: .recognized, time: time, touches: mostTouches, count: count, location: location)
    }

    private static func centroid(_ points: [Point]) -> Point {
        points.isEmpty ? .zero : points.reduce(Point.zero, +) / Double(points.count)
    }
}
