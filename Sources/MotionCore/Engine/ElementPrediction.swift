import Glibc

/// Touch prediction in the engine (docs/prediction.md): each finger has a
/// ``DampedPredictor``, and each element the fingers move publishes where it will be
/// `horizon` seconds ahead besides where it is: `ID.predicted_position`, and
/// `ID.predicted_rotation`, `ID.predicted_scale` where it turns or scales.
///
/// The predicted values are the element's own whenever no finger moves it: at rest, while a
/// spring carries it, and while a finger is down but has not yet dragged it past the slop.
final class PredictedElement {
    let position: ReactiveProperty<Point>
    let rotation: ReactiveProperty<Double>?
    let scale: ReactiveProperty<Double>?

    /// The predicted streams of `element`, whose interactions are added; nil for an element
    /// no finger moves.
    init?(_ element: Element) {
        let kinds = element.recognizers
        guard !kinds.isDisjoint(with: [.drag, .pinch, .rotate]) else { return nil }
        position = ReactiveProperty(element.position.value)
        rotation = kinds.contains(.rotate) ? ReactiveProperty(element.rotation.value) : nil
        scale = kinds.contains(.pinch) ? ReactiveProperty(element.scale.value) : nil
    }

    /// The streams, named as the element's are after its id.
    var streams: [(name: String, property: PublishedProperty)] {
        [("predicted_position", .point(position))]
            + (rotation.map { [("predicted_rotation", PublishedProperty.number($0))] } ?? [])
            + (scale.map { [("predicted_scale", PublishedProperty.number($0))] } ?? [])
    }

    /// No prediction: the element's own values.
    func follow(_ element: Element) {
        set(position: element.position.value, rotation: element.rotation.value, scale: element.scale.value)
    }

    /// Where `element` will be when its fingers have moved as `moves` predict (each finger's
    /// position now and then), the element following them as it does now.
    func predict(_ element: Element, moves: [FingerMove], minimumSpan: Double) {
        let predicted = FingerMove.transform(moves, position: element.position.value, rotation: element.rotation.value,
                                             scale: element.scale.value, turns: rotation != nil, scales: scale != nil,
                                             minimumSpan: minimumSpan)
        set(position: predicted.position, rotation: predicted.rotation, scale: predicted.scale)
    }

    private func set(position: Point, rotation: Double, scale: Double) {
        if self.position.value != position { self.position.value = position }
        if let property = self.rotation, property.value != rotation { property.value = rotation }
        if let property = self.scale, property.value != scale { property.value = scale }
    }
}

/// A finger's position now and where it is predicted to be.
struct FingerMove: Equatable {
    var now: Point
    var then: Point

    /// The element at `position`, `rotation` and `scale` carried by the fingers' predicted
    /// moves as a direct manipulation carries it: their centroid's move, and about it, when
    /// two fingers or more are at least `minimumSpan` apart, their turn (if the element
    /// `turns`) and their spread (if it `scales`).
    static func transform(_ moves: [FingerMove], position: Point, rotation: Double, scale: Double, turns: Bool, scales: Bool,
                          minimumSpan: Double) -> (position: Point, rotation: Double, scale: Double) {
        guard !moves.isEmpty else { return (position, rotation, scale) }
        let count = Double(moves.count)
        var before = Point(x: 0, y: 0), after = Point(x: 0, y: 0)
        for move in moves {
            before = Point(x: before.x + move.now.x / count, y: before.y + move.now.y / count)
            after = Point(x: after.x + move.then.x / count, y: after.y + move.then.y / count)
        }
        var turn = 0.0, growth = 1.0
        if moves.count >= 2 && (turns || scales) {
            // The similarity that best takes the fingers from now to then, about the centroid.
            var dot = 0.0, cross = 0.0, spreadBefore = 0.0, spreadAfter = 0.0
            for move in moves {
                let a = Point(x: move.now.x - before.x, y: move.now.y - before.y)
                let b = Point(x: move.then.x - after.x, y: move.then.y - after.y)
                dot += a.x * b.x + a.y * b.y
                cross += a.x * b.y - a.y * b.x
                spreadBefore += (a.x * a.x + a.y * a.y).squareRoot()
                spreadAfter += (b.x * b.x + b.y * b.y).squareRoot()
            }
            if spreadBefore / count >= minimumSpan && spreadAfter / count >= minimumSpan {
                if turns { turn = atan2(cross, dot) }
                if scales { growth = spreadAfter / spreadBefore }
            }
        }
        let offset = Point(x: position.x - before.x, y: position.y - before.y)
        let c = cos(turn) * growth, s = sin(turn) * growth
        let moved = Point(x: after.x + offset.x * c - offset.y * s, y: after.y + offset.x * s + offset.y * c)
        return (moved, rotation + turn, scale * growth)
    }
}

/// Touch prediction over the scene: each finger's predictor, when the predictions lapse,
/// and each element's predicted values from its fingers'. The engine owns one when it
/// predicts, feeds it every frame and asks it before each flush.
final class ScenePrediction {
    let horizon: Double
    private var fingers = FingerPredictions()
    /// When the predictions lapse if no frame comes: a finger at rest on a panel that then
    /// sends nothing is where it was last seen, not where it was heading.
    private(set) var lapse: Double?
    private var lapsed = false
    /// One element's fingers' moves, by landing id; the arrays are kept between frames.
    private var movesByID: [(id: Int32, move: FingerMove)] = []
    private var moves: [FingerMove] = []

    init(horizon: Double) {
        self.horizon = horizon
    }

    /// A frame: its fingers' samples; the predictions hold until 40 ms after it.
    func take(_ frame: TouchFrame, device: Int) {
        fingers.take(frame, device: device)
        lapsed = false
        lapse = fingers.isEmpty ? nil : frame.time + PredictorLimits.resetGap
    }

    /// Whether the predictions lapse by `time`; from then until the next frame, nothing is
    /// predicted.
    func lapse(by time: Double) -> Bool {
        guard let lapse, lapse <= time else { return false }
        self.lapse = nil
        lapsed = true
        return true
    }

    /// A finger's predicted move, unless the predictions lapsed.
    func move(_ key: ContactKey) -> FingerMove? {
        lapsed ? nil : fingers.move(key, horizon: horizon)
    }

    /// Sets `element`'s predicted values from the fingers that hold it (each by key and
    /// landing id) while they move it, to its own values otherwise.
    func update(_ predicted: PredictedElement, of element: Element, fingers held: [(key: ContactKey, id: Int32)],
                minimumSpan: Double) {
        movesByID.removeAll(keepingCapacity: true)
        if element.state.value == .active {
            for (key, id) in held {
                if let move = move(key) { movesByID.append((id, move)) }
            }
        }
        guard !movesByID.isEmpty else { return predicted.follow(element) }
        // In the order the fingers landed: the sums come out the same every run.
        movesByID.sort { $0.id < $1.id }
        moves.removeAll(keepingCapacity: true)
        for (_, move) in movesByID { moves.append(move) }
        predicted.predict(element, moves: moves, minimumSpan: minimumSpan)
    }
}

/// Each finger's predictor, over every device: fed every frame, emptied of fingers that
/// lifted. Its dictionary keeps its storage, so a frame allocates nothing once fingers have
/// come and gone.
struct FingerPredictions {
    private var predictors: [ContactKey: DampedPredictor] = [:]

    var isEmpty: Bool { predictors.isEmpty }

    mutating func take(_ frame: TouchFrame, device: Int) {
        for contact in frame.contacts {
            let key = ContactKey(device: device, trackingID: contact.trackingID)
            if contact.phase.isActive {
                predictors[key, default: DampedPredictor()].add(contact.position, at: frame.time)
            } else {
                predictors[key] = nil
            }
        }
    }

    /// The finger's move over `horizon`, if it is down.
    func move(_ key: ContactKey, horizon: Double) -> FingerMove? {
        guard let predictor = predictors[key], let now = predictor.lastPosition else { return nil }
        return FingerMove(now: now, then: predictor.predict(horizon))
    }

    mutating func removeAll() { predictors.removeAll(keepingCapacity: true) }
}

extension MotionEngine {
    /// Where a finger down will be `prediction` seconds ahead, for `screen.contacts`; nil
    /// without prediction or once it lapsed.
    public func predictedPosition(device: Int, trackingID: Int32) -> Point? {
        predictedMove(ContactKey(device: device, trackingID: trackingID))?.then
    }
}
