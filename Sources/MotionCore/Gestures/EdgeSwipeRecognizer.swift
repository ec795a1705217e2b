import Glibc

/// Recognizes a swipe in from a screen edge: one finger that lands within
/// ``GestureThresholds/edgeBand`` of an edge and moves inward at least
/// ``GestureThresholds/edgeSwipeDistance``, fast enough (``GestureThresholds/swipeMinimumSpeed``)
/// and within ``GestureThresholds/swipeAngle`` of straight in: how a kiosk opens a drawer, or
/// lets someone leave a full-screen app.
///
/// The edges are the screen's, in the pixels the contacts are mapped to: a touchscreen mapped
/// to part of the screen has the screen's edges only where its part touches them, and a
/// panel mapped turned swipes in from the screen's edges, not its own. Where the panel
/// reports its resolution, the band, distance and speed are millimetres, turned into pixels
/// at the scale the finger moved at (how many pixels its millimetres turned out to be).
///
/// | phase     | input                                                   | next      | emits        |
/// |-----------|---------------------------------------------------------|-----------|--------------|
/// | idle      | one finger lands within the band of an edge              | tracking  | —            |
/// | idle      | a finger lands elsewhere, or a second finger             | done      | —            |
/// | tracking  | the finger has moved the distance inward, fast and straight | done   | `recognized` |
/// | tracking  | it is too slow or goes sideways when it has, or another finger lands | done | — |
/// | any       | the last finger lifts                                   | idle      | —            |
public struct EdgeSwipeRecognizer: Sendable {
    private enum Phase: Sendable { case idle, tracking, done }

    /// The limits of an edge swipe.
    public var thresholds: GestureThresholds
    /// The screen, in pixels.
    public var screen: Size
    private var phase = Phase.idle
    private var tracker = ContactTracker()
    private var landing: (time: Double, position: Point, physical: Point) = (0, .zero, .zero)
    private var edge = ScreenEdge.left

    /// Creates a recognizer for the edges of `screen`.
    public init(screen: Size, thresholds: GestureThresholds = GestureThresholds()) {
        self.screen = screen
        self.thresholds = thresholds
    }

    /// Takes the next frame of the screen's contacts.
    public mutating func update(_ frame: TouchFrame) -> EdgeSwipeEvent? {
        let wasIdle = tracker.active.isEmpty
        tracker.update(frame)
        defer {
            if tracker.active.isEmpty {
                phase = .idle
                tracker.reset()
            }
        }
        if wasIdle, let finger = tracker.active.first {
            phase = .tracking
            landing = (frame.time, finger.position, finger.physical)
            guard tracker.active.count == 1, let nearest = nearestEdge(of: finger.position) else {
                phase = .done
                return nil
            }
            edge = nearest
            return nil
        }
        guard phase == .tracking else { return nil }
        // The finger as it is now, or as it was when it lifted in this frame (a frame that
        // waited behind others may be the lift itself).
        guard tracker.active.count <= 1, tracker.persistent.count == 1, !tracker.cancelled, tracker.landed == 0 else {
            phase = .done
            return nil
        }
        let finger = tracker.persistent[0].after
        let moved = finger.position - landing.position
        let inward = moved.x * edge.inward.x + moved.y * edge.inward.y
        // Pixels per unit of the thresholds: per millimetre at the scale the finger moved at.
        let millimetres = (finger.physical - landing.physical).distance(to: .zero)
        let unit = tracker.unit
        guard !unit.isPhysical || millimetres > 0 else { return nil }
        let scale = unit.isPhysical ? moved.distance(to: .zero) / millimetres : 1
        func pixels(_ distance: PanelDistance) -> Double { distance[unit] * scale }
        guard inward >= pixels(thresholds.edgeSwipeDistance) else { return nil }
        phase = .done
        let duration = Swift.max(frame.time - landing.time, 1e-3)
        let sideways = abs(moved.x * edge.inward.y - moved.y * edge.inward.x)
        guard inward / duration >= pixels(thresholds.swipeMinimumSpeed),
              atan2(sideways, inward) <= thresholds.swipeAngle,
              edge.distance(of: landing.position, on: screen) <= pixels(thresholds.edgeBand) else { return nil }
        return EdgeSwipeEvent(time: frame.time, edge: edge, distance: moved.distance(to: .zero), velocity: moved / duration)
    }

    /// The edge nearest to where a finger landed, if it is within the widest band it could
    /// be judged by (the band in pixels, or in millimetres at up to 50 px/mm).
    private func nearestEdge(of point: Point) -> ScreenEdge? {
        let widest = Swift.max(thresholds.edgeBand.pixels, thresholds.edgeBand.millimetres * 50)
        let nearest = ScreenEdge.allCases.min { $0.distance(of: point, on: screen) < $1.distance(of: point, on: screen) }!
        return nearest.distance(of: point, on: screen) <= widest ? nearest : nil
    }
}

/// An edge of the screen.
public enum ScreenEdge: String, Hashable, Sendable, CaseIterable {
    case left, right, top, bottom

    /// The way in from this edge, on screen (y grows downwards).
    var inward: Point {
        switch self {
        case .left: Point(x: 1, y: 0)
        case .right: Point(x: -1, y: 0)
        case .top: Point(x: 0, y: 1)
        case .bottom: Point(x: 0, y: -1)
        }
    }

    /// How far `point` is from this edge of `screen`, in pixels.
    func distance(of point: Point, on screen: Size) -> Double {
        switch self {
        case .left: point.x
        case .right: screen.width - point.x
        case .top: point.y
        case .bottom: screen.height - point.y
        }
    }
}

/// A swipe in from an edge, recognized when the finger has come far enough.
public struct EdgeSwipeEvent: Hashable, Sendable {
    /// Always `recognized`: an edge swipe is discrete.
    public var state: RecognitionState { .recognized }
    /// The frame's timestamp, in seconds.
    public var time: Double
    public var edge: ScreenEdge
    /// How far the finger came from where it landed, in pixels.
    public var distance: Double
    /// Its mean velocity since it landed, in pixels per second.
    public var velocity: Point
}
