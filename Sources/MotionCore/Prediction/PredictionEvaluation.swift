/// How well a predictor does on recorded contacts: what `motionctl predict` reports
/// (docs/prediction.md).
///
/// For every sample of every contact, the predictor, having seen the samples up to it,
/// predicts where the contact will be `horizon` later; that is compared with where it
/// really was then. Where it really was comes from the samples around that time: many
/// panels send nothing while nothing changes, so across a gap longer than one and a half
/// usual intervals the contact is taken to have stayed put, and to have moved only during
/// the last interval before the next sample; across shorter gaps, in a straight line.
/// Samples whose horizon lies beyond the contact's last are not counted.
public enum PredictionEvaluation {
    /// One sample of one contact.
    public struct Sample: Equatable, Sendable {
        public var time: Double
        public var position: Point
        /// The position in millimetres, where the panel reports its resolution: what the
        /// bound's speed limit is measured in (``PredictionBound``).
        public var millimetres: Point?
        public init(time: Double, position: Point, millimetres: Point? = nil) {
            self.time = time
            self.position = position
            self.millimetres = millimetres
        }
    }

    /// The errors of one predictor at one horizon, in the units `distance` gives.
    public struct Errors: Equatable, Sendable {
        public var mean: Double
        /// The 95th percentile (nearest rank).
        public var p95: Double
        public var max: Double
        /// How many predictions were compared.
        public var count: Int
    }

    /// Each contact's samples, from the frame it landed in to the one it lifted in; a
    /// cancelled contact's last position (a palm, a lost event) is left out.
    public static func tracks(_ frames: [TouchFrame]) -> [[Sample]] {
        var open: [ContactKey: Int] = [:]
        var tracks: [[Sample]] = []
        for frame in frames {
            for contact in frame.contacts {
                let key = ContactKey(slot: contact.slot, trackingID: contact.trackingID)
                if contact.phase == .began || open[key] == nil {
                    guard contact.phase != .cancelled, contact.phase != .ended || open[key] != nil else { continue }
                    open[key] = tracks.count
                    tracks.append([])
                }
                guard let index = open[key] else { continue }
                if contact.phase != .cancelled, tracks[index].last?.time ?? -.infinity < frame.time {
                    tracks[index].append(Sample(time: frame.time, position: contact.position, millimetres: contact.millimetres))
                }
                if !contact.phase.isActive { open[key] = nil }
            }
        }
        return tracks.filter { $0.count >= 2 }
    }

    private struct ContactKey: Hashable {
        var slot: Int
        var trackingID: Int32
    }

    /// How many predictions `horizon` ahead ``evaluate(_:tracks:horizon:screen:distance:)``
    /// compares on `tracks`, whatever the predictor: the samples with at least `horizon` of
    /// their contact after them. None when every contact ends sooner.
    public static func comparisons(_ tracks: [[Sample]], horizon: Double) -> Int {
        tracks.reduce(0) { count, track in
            guard let last = track.last else { return count }
            return count + track.count { $0.time + horizon <= last.time }
        }
    }

    /// The errors of the `kind` predictor on `tracks` at `horizon` seconds, each error the
    /// `distance` of the difference between predicted and true positions. Each prediction
    /// passes through the bound the daemon applies (``BoundedPredictor``), on `screen`
    /// where it is given.
    public static func evaluate(_ kind: PredictorKind, tracks: [[Sample]], horizon: Double, screen: Rect? = nil,
                                distance: (Point) -> Double = { ($0.x * $0.x + $0.y * $0.y).squareRoot() }) -> Errors {
        kind.withType { type in evaluate(type, tracks: tracks, horizon: horizon, screen: screen, distance: distance) }
    }

    /// The errors of predictor `type`; see ``evaluate(_:tracks:horizon:screen:distance:)``.
    public static func evaluate<P: TouchPredictor>(_ type: P.Type, tracks: [[Sample]], horizon: Double, screen: Rect? = nil,
                                                   distance: (Point) -> Double) -> Errors {
        var errors: [Double] = []
        for track in tracks {
            var predictor = BoundedPredictor<P>()
            let interval = medianInterval(track)
            for sample in track {
                predictor.add(sample.position, millimetres: sample.millimetres, at: sample.time)
                guard let truth = position(of: track, at: sample.time + horizon, interval: interval) else { continue }
                let predicted = predictor.predict(horizon, within: screen)
                errors.append(distance(Point(x: predicted.x - truth.x, y: predicted.y - truth.y)))
            }
        }
        guard !errors.isEmpty else { return Errors(mean: 0, p95: 0, max: 0, count: 0) }
        errors.sort()
        let rank = Int((0.95 * Double(errors.count)).rounded(.up)) - 1
        return Errors(mean: errors.reduce(0, +) / Double(errors.count), p95: errors[Swift.max(0, rank)], max: errors[errors.count - 1],
                      count: errors.count)
    }

    /// The usual time between a track's samples: their median interval.
    static func medianInterval(_ track: [Sample]) -> Double {
        guard track.count >= 2 else { return 0.01 }
        let intervals = zip(track.dropFirst(), track).map { $0.time - $1.time }.sorted()
        return intervals[intervals.count / 2]
    }

    /// Where the contact was at `time`, from its samples; nil after its last.
    static func position(of track: [Sample], at time: Double, interval: Double) -> Point? {
        guard let last = track.last, time <= last.time else { return nil }
        guard let after = track.firstIndex(where: { $0.time > time }) else { return last.position }
        guard after > 0 else { return track[0].position }
        let a = track[after - 1], b = track[after]
        // Across a long gap the contact stayed put until the last interval before `b`.
        let start = b.time - a.time > 1.5 * interval ? b.time - 1.5 * interval : a.time
        guard time > start, b.time > start else { return a.position }
        let fraction = (time - start) / (b.time - start)
        return Point(x: a.position.x + (b.position.x - a.position.x) * fraction, y: a.position.y + (b.position.y - a.position.y) * fraction)
    }
}
