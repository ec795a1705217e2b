/// Recognizes a long press: fingers held within a slop for ``GestureThresholds/longPressDuration``,
/// the touch equivalent of a right click and the usual way into a kiosk's admin menu.
///
/// | phase    | input                                                 | next     | emits       |
/// |----------|-------------------------------------------------------|----------|-------------|
/// | idle     | a finger lands                                        | pressing | —           |
/// | pressing | another finger lands                                  | pressing | — (the time starts again) |
/// | pressing | a finger moves beyond the slop, or a contact cancelled | failed   | `failed`    |
/// | pressing | the time is reached with at least `touches` fingers   | held     | `began`     |
/// | pressing | the last finger lifts                                 | idle     | — (a tap, or nothing) |
/// | held     | the fingers move                                      | held     | `changed`   |
/// | held     | a contact cancelled                                   | failed   | `cancelled` |
/// | held     | the last finger lifts                                 | idle     | `ended`     |
/// | failed   | the last finger lifts                                 | idle     | —           |
///
/// The time is checked on every frame and by ``advance(to:)``: a finger held perfectly still
/// on many panels sends no frames at all, so whoever drives the recognizer wakes it at
/// ``deadline``. Once held, the fingers may move anywhere (press and drag, as iOS allows): the
/// slop only decides whether the press began.
public struct LongPressRecognizer: Sendable {
    private enum Phase: Sendable { case idle, pressing, held, failed }

    /// The limits of a long press.
    public var thresholds: GestureThresholds
    /// The fewest fingers down for a long press.
    public var touches: Int
    private var phase = Phase.idle
    private var tracker = ContactTracker()
    private var landings: [Int32: Point] = [:]
    private var pressedAt = 0.0
    private var mostTouches = 0
    private var location = Point.zero

    /// Creates a recognizer of presses by at least `touches` fingers.
    public init(thresholds: GestureThresholds = GestureThresholds(), touches: Int = 1) {
        precondition(touches >= 1, "a long press needs a finger")
        self.thresholds = thresholds
        self.touches = touches
    }

    /// When the press in progress becomes a long press if nothing changes; nil when none is
    /// pending.
    public var deadline: Double? {
        phase == .pressing && tracker.active.count >= touches ? pressedAt + thresholds.longPressDuration : nil
    }

    /// Takes the next frame of the contacts assigned to this recognizer.
    public mutating func update(_ frame: TouchFrame) -> LongPressEvent? {
        let wasIdle = tracker.active.isEmpty
        let before = location
        tracker.update(frame)
        if wasIdle && !tracker.active.isEmpty {
            phase = .pressing
            landings = [:]
            mostTouches = 0
        }
        if tracker.landed > 0 && phase == .pressing { pressedAt = frame.time }
        for contact in tracker.active where landings[contact.id] == nil {
            landings[contact.id] = contact.physical
        }
        mostTouches = Swift.max(mostTouches, tracker.active.count)
        if !tracker.active.isEmpty { location = tracker.centroid }

        var event: LongPressEvent?
        switch phase {
        case .idle, .failed:
            break
        case .pressing:
            if tracker.cancelled || movedTooFar() {
                phase = .failed
                event = self.event(.failed, at: frame.time)
            } else if let deadline, frame.time >= deadline {
                phase = .held
                event = self.event(.began, at: frame.time)
            }
        case .held:
            if tracker.cancelled {
                phase = .failed
                event = self.event(.cancelled, at: frame.time)
            } else if tracker.active.isEmpty {
                event = self.event(.ended, at: frame.time)
            } else if location != before {
                event = self.event(.changed, at: frame.time)
            }
        }
        if tracker.active.isEmpty {
            phase = .idle
            tracker.reset()
        }
        return event
    }

    /// Time passed with no frame: the press begins if its time has come, stamped with the
    /// time it came (a timer fires late; the press began on time).
    public mutating func advance(to time: Double) -> LongPressEvent? {
        guard let deadline, time >= deadline else { return nil }
        phase = .held
        return event(.began, at: deadline)
    }

    /// Stops the press in progress (another gesture took its fingers).
    public mutating func block(at time: Double) -> LongPressEvent? {
        switch phase {
        case .pressing:
            phase = .failed
            return event(.failed, at: time)
        case .held:
            phase = .failed
            return event(.cancelled, at: time)
        case .idle, .failed:
            return nil
        }
    }

    /// Whether the press has begun and its fingers are still down.
    public var isHeld: Bool { phase == .held }

    private func movedTooFar() -> Bool {
        tracker.anyMoved(from: landings, beyond: thresholds.longPressSlop[tracker.unit])
    }

    private func event(_ state: RecognitionState, at time: Double) -> LongPressEvent {
        LongPressEvent(state: state, time: time, touches: mostTouches, location: location, duration: Swift.max(0, time - pressedAt))
    }
}

/// A long press's update.
public struct LongPressEvent: Hashable, Sendable {
    /// `began` when the time is reached, `changed` as the fingers move, `ended` at the lift;
    /// `failed` when a finger moved too far first, `cancelled` when a contact was cancelled.
    public var state: RecognitionState
    /// The frame's timestamp (or the deadline's, for `began` without a frame), in seconds.
    public var time: Double
    /// The most fingers down at once.
    public var touches: Int
    /// The fingers' centroid, in pixels.
    public var location: Point
    /// Seconds since the last finger landed.
    public var duration: Double
}
