import Glibc

/// Touch prediction in the engine (docs/prediction.md): each finger has a
/// ``DampedPredictor`` within a ``PredictionBound``, and each element the fingers move
/// publishes where it will be `horizon` seconds ahead besides where it is:
/// `ID.predicted_position`, and `ID.predicted_rotation`, `ID.predicted_scale` where it turns
/// or scales.
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
    /// position now and then): carried as a direct manipulation carries an element (the
    /// fingers' motion and its similarity, ``DirectlyManipulable``), turned only if it turns
    /// and scaled only if it scales.
    ///
    /// Each finger's move is bounded already (``PredictionBound``); the turn and the spread
    /// are bounded here too, since fingers close together turn a lot for a little move: at
    /// most ``PredictionBound/reachFactor`` times the turn and the spread the same fingers
    /// made over the last horizon (their moves' `before` to `now`). So an element is never
    /// carried further than its fingers just carried it, a little more at most.
    func predict(_ element: Element, moves: [FingerMove], minimumSpan: Double) {
        let motion = ContactTracker.Motion.of(count: moves.count) { (moves[$0].now, moves[$0].then) }
        guard var step = motion.flatMap({ DirectlyManipulable.step($0, minimumSpan: minimumSpan) }) else { return follow(element) }
        let recent = ContactTracker.Motion.of(count: moves.count) { (moves[$0].before, moves[$0].now) }
            .flatMap { DirectlyManipulable.step($0, minimumSpan: minimumSpan) }
        let turn = PredictionBound.reachFactor * Swift.abs(recent?.rotation ?? 0)
        let spread = PredictionBound.reachFactor * Swift.abs(log(recent?.scale ?? 1))
        step.rotation = rotation == nil ? 0 : Swift.min(Swift.max(step.rotation, -turn), turn)
        step.scale = scale == nil ? 1 : exp(Swift.min(Swift.max(log(step.scale), -spread), spread))
        set(position: step.carry(element.position.value), rotation: element.rotation.value + step.rotation,
            scale: element.scale.value * step.scale)
    }

    private func set(position: Point, rotation: Double, scale: Double) {
        if self.position.value != position { self.position.value = position }
        if let property = self.rotation, property.value != rotation { property.value = rotation }
        if let property = self.scale, property.value != scale { property.value = scale }
    }
}

/// A finger's position now, where it is predicted to be, and where it was one horizon ago
/// (what bounds the turn and spread it is predicted to give an element).
struct FingerMove: Equatable {
    var now: Point
    var then: Point
    var before: Point
}

/// Touch prediction over the scene: each finger's predictor, when the predictions lapse,
/// and each element's predicted values from its fingers'. The engine owns one when it
/// predicts, feeds it every frame and asks it before each flush.
final class ScenePrediction {
    let horizon: Double
    /// The screen, which predicted fingers stay on (``PredictionBound``).
    let screen: Rect
    private var fingers = FingerPredictions()
    /// When the predictions lapse if no frame comes: a finger at rest on a panel that then
    /// sends nothing is where it was last seen, not where it was heading.
    private(set) var lapse: Double?
    private var lapsed = false
    /// Each finger's move since the last frame, worked out once: the frame's report and the
    /// elements the finger holds both ask for it, and spring frames ask again until the next
    /// input frame. Emptied, not freed, by each frame.
    private var known: [ContactKey: FingerMove?] = [:]
    /// One element's fingers' moves, by landing id; the arrays are kept between frames.
    private var movesByID: [(id: Int32, move: FingerMove)] = []
    private var moves: [FingerMove] = []

    init(horizon: Double, screen: Rect) {
        self.horizon = horizon
        self.screen = screen
    }

    /// A frame: its fingers' samples; the predictions hold until 40 ms after it.
    func take(_ frame: TouchFrame, device: Int) {
        fingers.take(frame, device: device)
        known.removeAll(keepingCapacity: true)
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
        guard !lapsed else { return nil }
        if let move = known[key] { return move }
        let move = fingers.move(key, horizon: horizon, screen: screen)
        known[key] = move
        return move
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
    private var predictors: [ContactKey: BoundedPredictor<DampedPredictor>] = [:]

    var isEmpty: Bool { predictors.isEmpty }

    mutating func take(_ frame: TouchFrame, device: Int) {
        for contact in frame.contacts {
            let key = ContactKey(device: device, trackingID: contact.trackingID)
            if contact.phase.isActive {
                predictors[key, default: BoundedPredictor()].add(contact.position, millimetres: contact.millimetres, at: frame.time)
            } else {
                predictors[key] = nil
            }
        }
    }

    /// The finger's move over `horizon`, if it is down, kept on `screen`.
    func move(_ key: ContactKey, horizon: Double, screen: Rect) -> FingerMove? {
        guard let predictor = predictors[key], let now = predictor.lastPosition else { return nil }
        return FingerMove(now: now, then: predictor.predict(horizon, within: screen), before: predictor.position(before: horizon) ?? now)
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
