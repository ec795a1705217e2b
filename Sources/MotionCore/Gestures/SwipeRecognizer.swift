import Glibc

/// Recognizes swipes: one to five fingers moving together in one direction, far and fast
/// enough, recognized when the last finger lifts (as touchegg, fusuma and libinput-gestures
/// bind three- and four-finger swipes to actions).
///
/// Each finger's way from where it landed to where it lifted is its own; the swipe's is
/// their mean. Its length and speed are measured in millimetres where the panel knows them;
/// its direction on screen, in pixels (a panel may be mapped turned). A swipe is
/// `recognized` at the lift when:
/// - the mean way is at least ``GestureThresholds/swipeDistance`` long;
/// - its mean speed, from the first landing to the last lift, is at least
///   ``GestureThresholds/swipeMinimumSpeed`` (slower is a drag);
/// - it points within ``GestureThresholds/swipeAngle`` (30°) of left, right, up or down, and
///   so does every finger's own way that is longer than half the slop (fingers moving
///   apart are a pinch, not a swipe);
/// - no contact was cancelled, and at most five fingers were down.
///
/// Anything else is not a swipe, and says nothing: a swipe is discrete, like a tap, but a
/// touch that was not one is far more common than a tap that failed.
public struct SwipeRecognizer: Sendable {
    /// The limits of a swipe.
    public var thresholds: GestureThresholds
    private var tracker = ContactTracker()
    /// Each finger's landing and last place (`physical`: millimetres where known), and in pixels.
    private var ways: [Int32: (from: Point, to: Point, fromPixels: Point, toPixels: Point)] = [:]
    /// The fingers in the order they landed: the ways are summed in it, as a Dictionary's
    /// order would change the sum's last bits with the process's hash seed.
    private var landed: [Int32] = []
    private var landedAt = 0.0
    private var mostTouches = 0
    private var cancelled = false

    /// The most fingers a swipe may have.
    public static let maximumTouches = 5

    /// Creates a swipe recognizer.
    public init(thresholds: GestureThresholds = GestureThresholds()) {
        self.thresholds = thresholds
    }

    /// Takes the next frame of the contacts assigned to this recognizer.
    public mutating func update(_ frame: TouchFrame) -> SwipeEvent? {
        let wasIdle = tracker.active.isEmpty
        tracker.update(frame)
        if wasIdle && !tracker.active.isEmpty {
            ways = [:]
            landed = []
            landedAt = frame.time
            mostTouches = 0
            cancelled = false
        }
        cancelled = cancelled || tracker.cancelled
        for contact in tracker.active {
            if let way = ways[contact.id] {
                ways[contact.id] = (way.from, contact.physical, way.fromPixels, contact.position)
            } else {
                ways[contact.id] = (contact.physical, contact.physical, contact.position, contact.position)
                landed.append(contact.id)
            }
        }
        for pair in tracker.persistent {
            if let way = ways[pair.after.id] { ways[pair.after.id] = (way.from, pair.after.physical, way.fromPixels, pair.after.position) }
        }
        mostTouches = Swift.max(mostTouches, tracker.active.count)
        guard tracker.active.isEmpty else { return nil }
        let event = recognized(at: frame.time)
        tracker.reset()
        return event
    }

    private func recognized(at time: Double) -> SwipeEvent? {
        guard !cancelled, !ways.isEmpty, mostTouches <= Self.maximumTouches else { return nil }
        let unit = tracker.unit
        let count = Double(ways.count)
        var way = Point.zero, wayPixels = Point.zero
        for id in landed {
            guard let finger = ways[id] else { continue }
            way = way + (finger.to - finger.from)
            wayPixels = wayPixels + (finger.toPixels - finger.fromPixels)
        }
        way = way / count
        wayPixels = wayPixels / count
        let distance = way.distance(to: .zero)
        let duration = Swift.max(time - landedAt, 1e-3)
        guard distance >= thresholds.swipeDistance[unit],
              distance / duration >= thresholds.swipeMinimumSpeed[unit],
              let direction = SwipeDirection(of: wayPixels, within: thresholds.swipeAngle) else { return nil }
        // Every finger that moved goes the same way.
        let slop = thresholds.dragSlop[unit]
        for finger in landed.compactMap({ ways[$0] }) where (finger.to - finger.from).distance(to: .zero) > slop / 2 {
            if SwipeDirection(of: finger.toPixels - finger.fromPixels, within: thresholds.swipeAngle) != direction { return nil }
        }
        return SwipeEvent(time: time, touches: mostTouches, direction: direction,
                          distance: wayPixels.distance(to: .zero), velocity: wayPixels / duration)
    }
}

/// Where a swipe went, on screen.
public enum SwipeDirection: String, Hashable, Sendable, CaseIterable {
    case left, right, up, down

    /// The direction `way` points in, if it is within `angle` of one; y grows downwards, as
    /// on screen.
    init?(of way: Point, within angle: Double) {
        guard way.x != 0 || way.y != 0 else { return nil }
        let heading = atan2(way.y, way.x)  // 0 right, π/2 down
        let candidates: [(SwipeDirection, Double)] = [(.right, 0), (.down, .pi / 2), (.left, .pi), (.up, -.pi / 2)]
        for (direction, axis) in candidates where abs(ContactTracker.wrap(heading - axis)) <= angle {
            self = direction
            return
        }
        return nil
    }
}

/// A swipe, recognized when the last finger lifts.
public struct SwipeEvent: Hashable, Sendable {
    /// Always `recognized`: a swipe is discrete.
    public var state: RecognitionState { .recognized }
    /// The lift's timestamp, in seconds.
    public var time: Double
    /// The most fingers down at once.
    public var touches: Int
    public var direction: SwipeDirection
    /// How far the fingers went on average, in pixels.
    public var distance: Double
    /// The mean velocity from landing to lift, in pixels per second.
    public var velocity: Point
}
