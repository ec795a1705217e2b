/// How far a prediction may carry a finger: never further than the motion it extrapolates
/// makes physically plausible (docs/prediction.md, Limits).
///
/// A predictor extrapolates whatever its samples say, and a panel can say things no finger
/// does: a contact jumping between the screen's corners every millisecond has a "velocity" of
/// millions of pixels a second, and any extrapolating predictor throws it far off the
/// screen. So every prediction motiond publishes, whatever the predictor, passes through
/// this bound, which keeps three rules:
///
/// 1. **Reach**: the predicted move from the last sample is at most ``reachFactor`` times
///    the distance the finger covered in the last horizon: the length of its path over the
///    last `horizon` seconds of samples (for a finger down for less, what it covered at
///    that speed in a horizon). A finger keeps moving as it just did, a little faster at
///    most: one at rest is predicted where it is.
/// 2. **Speed**: the predicted move is at most ``maximumSpeed`` (10 m/s, faster than any
///    fling) times the horizon, in millimetres where the panel reports its resolution
///    (converted at the pixels per millimetre of the finger's last horizon), else
///    ``maximumSpeedPixels`` (the same at 5 px/mm, as the gesture thresholds' pixel
///    fallbacks assume).
/// 3. **Screen**: where the screen is known, the predicted position is kept on it (or, for
///    a finger already off it, no further off than its last sample).
///
/// It keeps the samples of the last ``longestHorizon`` seconds (and one before), in a ring
/// allocated once, and starts afresh after a gap of ``PredictorLimits/resetGap`` as the
/// predictors do.
public struct PredictionBound {
    /// How much further than it covered in the last horizon a finger may be predicted to
    /// move in the next: room for a finger speeding up, and for a predictor that reads the
    /// velocity at the last sample rather than over the horizon.
    public static let reachFactor = 1.5
    /// The fastest a finger is taken to move, in millimetres per second: 10 m/s. Flings on
    /// touchscreens reach 1 to 3 m/s.
    public static let maximumSpeed = 10_000.0
    /// ``maximumSpeed`` on a panel that does not report its resolution, in screen pixels
    /// per second (at 5 px/mm, a 1920-pixel screen 384 mm wide).
    public static let maximumSpeedPixels = 50_000.0
    /// The longest horizon the bound looks back over: `[screen] prediction`'s limit. A
    /// longer one is measured from the oldest sample kept.
    public static let longestHorizon = 0.05

    /// One sample: where the finger was, in screen pixels and (when the panel says) in
    /// millimetres.
    struct Sample {
        var time: Double
        var position: Point
        var millimetres: Point?
    }

    /// Enough for ``longestHorizon`` at 1,000 samples a second; at faster rates the stretch
    /// is shorter, and the bound tighter, never looser.
    static let capacity = 64
    private var samples: [Sample]
    private var start = 0
    private var count = 0

    /// A bound that has seen nothing: until its first sample it leaves predictions as they
    /// are (there is no last sample to measure them from).
    public init() {
        samples = Array(repeating: Sample(time: 0, position: Point(x: 0, y: 0)), count: Self.capacity)
    }

    private subscript(index: Int) -> Sample { samples[(start + index) % Self.capacity] }

    /// The finger's last position, if it has one.
    public var lastPosition: Point? { count > 0 ? self[count - 1].position : nil }

    /// The finger was at `position` (`millimetres` where the panel reports them) at `time`.
    public mutating func add(_ position: Point, millimetres: Point? = nil, at time: Double) {
        if count > 0, time - self[count - 1].time > PredictorLimits.resetGap { start = 0; count = 0 }
        if count == Self.capacity { start = (start + 1) % Self.capacity; count -= 1 }
        samples[(start + count) % Self.capacity] = Sample(time: time, position: position, millimetres: millimetres)
        count += 1
        // Keep what the longest horizon needs: the samples within it, and the one before.
        while count > 2 && time - self[1].time >= Self.longestHorizon {
            start = (start + 1) % Self.capacity
            count -= 1
        }
    }

    /// The finger's path over the `horizon` seconds before its last sample (all of it, for
    /// a finger down for less): its length in pixels and, where every sample on it has
    /// them, in millimetres, and how long it took. The segment across the stretch's start
    /// counts for the part of it within the stretch, as if covered at an even speed.
    func stretch(_ horizon: Double) -> (pixels: Double, millimetres: Double?, duration: Double) {
        guard count > 1 else { return (0, nil, 0) }
        let last = self[count - 1], start = last.time - horizon
        var pixels = 0.0, millimetres: Double? = 0, begins = last.time
        var index = count - 1
        while index > 0 && self[index].time > start {
            let a = self[index - 1], b = self[index]
            // The part of the segment after the stretch's start: all of it, or a fraction.
            let part = a.time >= start || b.time <= a.time ? 1 : (b.time - start) / (b.time - a.time)
            pixels += (b.position - a.position).length * part
            millimetres = millimetres.flatMap { sum in a.millimetres.flatMap { p in b.millimetres.map { sum + ($0 - p).length * part } } }
            begins = Swift.max(a.time, start)
            index -= 1
        }
        return (pixels, millimetres, last.time - begins)
    }

    /// Where the finger was `horizon` seconds before its last sample, between the samples
    /// around then in a straight line, or its oldest sample kept when it is younger: what an
    /// element's predicted turn and spread are bounded by.
    public func position(before horizon: Double) -> Point? {
        guard count > 0 else { return nil }
        let time = self[count - 1].time - horizon
        var index = count - 1
        while index > 0 && self[index - 1].time > time { index -= 1 }
        guard index > 0 else { return self[0].position }
        let a = self[index - 1], b = self[index]
        guard b.time > a.time else { return b.position }
        let fraction = Swift.min(Swift.max((time - a.time) / (b.time - a.time), 0), 1)
        return a.position + (b.position - a.position) * fraction
    }

    /// `predicted`, `horizon` seconds after the last sample, brought back within the three
    /// rules: along the same direction, no further from the last sample than the reach and
    /// the speed allow, then onto `screen` where it is given. Before any sample, `predicted`.
    public func limit(_ predicted: Point, horizon: Double, within screen: Rect? = nil) -> Point {
        guard count > 0 else { return predicted }
        let last = self[count - 1].position
        let move = predicted - last
        let length = move.length
        guard length.isFinite else { return last }
        // Reach: the distance covered in the last horizon (at the speed it was covered, for
        // a finger down for less), a little more at most.
        let path = stretch(horizon)
        var allowed = path.duration > 0 ? Self.reachFactor * path.pixels * horizon / path.duration : 0
        // Speed: in millimetres where the path has them (at its pixels per millimetre), else
        // in pixels.
        if let millimetres = path.millimetres, millimetres > 0 {
            allowed = Swift.min(allowed, Self.maximumSpeed * horizon * path.pixels / millimetres)
        } else {
            allowed = Swift.min(allowed, Self.maximumSpeedPixels * horizon)
        }
        var bounded = length > allowed ? last + move * (allowed / length) : predicted
        // Screen: on it, or no further off it than the finger already is.
        if let screen, screen.size.width > 0, screen.size.height > 0 {
            let left = Swift.min(screen.origin.x, last.x), right = Swift.max(screen.origin.x + screen.size.width, last.x)
            let top = Swift.min(screen.origin.y, last.y), bottom = Swift.max(screen.origin.y + screen.size.height, last.y)
            bounded = Point(x: Swift.min(Swift.max(bounded.x, left), right), y: Swift.min(Swift.max(bounded.y, top), bottom))
        }
        return bounded
    }
}

/// A predictor whose every prediction passes through a ``PredictionBound``: what the
/// daemon keeps per finger, and what `motionctl predict` measures, whatever the predictor.
public struct BoundedPredictor<Predictor: TouchPredictor> {
    private var predictor = Predictor()
    private var bound = PredictionBound()

    /// A predictor that has seen nothing.
    public init() {}

    /// The finger was at `position` (`millimetres` where the panel reports them) at `time`,
    /// after the previous sample's.
    public mutating func add(_ position: Point, millimetres: Point? = nil, at time: Double) {
        predictor.add(position, at: time)
        bound.add(position, millimetres: millimetres, at: time)
    }

    /// Where the finger will be `horizon` seconds after its last sample, within the bound
    /// (and on `screen` where it is given).
    public func predict(_ horizon: Double, within screen: Rect? = nil) -> Point {
        bound.limit(predictor.predict(horizon), horizon: horizon, within: screen)
    }

    /// The last sample's position, if any.
    public var lastPosition: Point? { bound.lastPosition }

    /// Where the finger was `horizon` seconds before its last sample.
    public func position(before horizon: Double) -> Point? { bound.position(before: horizon) }
}
