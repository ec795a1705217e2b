/// The recognizers that share one set of contacts, and the rules between them.
///
/// The rules, in full:
/// 1. A tap and the continuous gestures exclude each other: when a drag, pinch or rotation
///    begins, the tap in progress fails. (A tap that becomes a drag fails.)
/// 2. With ``Simultaneity/simultaneous`` (the default, for direct manipulation), drag,
///    pinch and rotation recognize together on the same fingers.
/// 3. With ``Simultaneity/exclusive``, the first continuous gesture to begin wins and the
///    others fail (or are cancelled) until every finger has lifted. Within one frame the
///    order decides: pinch, then rotation, then drag, so two fingers that both spread and
///    move are a pinch.
/// 4. A cancelled contact cancels every gesture using it; the tap fails.
///
/// Recognizers are updated in that order (pinch, rotation, drag, tap) and their events are
/// returned in it.
public struct GestureSet: Sendable {
    /// Whether continuous gestures share the fingers.
    public enum Simultaneity: String, Hashable, Sendable, Codable {
        case simultaneous
        case exclusive
    }

    public var pinch: PinchRecognizer?
    public var rotation: RotationRecognizer?
    public var drag: DragRecognizer?
    public var tap: TapRecognizer?
    public var simultaneity: Simultaneity

    /// Creates a set with the given kinds of recognizer, all with `thresholds`.
    public init(
        _ kinds: Set<GestureKind> = Set(GestureKind.allCases),
        thresholds: GestureThresholds = GestureThresholds(),
        simultaneity: Simultaneity = .simultaneous
    ) {
        pinch = kinds.contains(.pinch) ? PinchRecognizer(thresholds: thresholds) : nil
        rotation = kinds.contains(.rotate) ? RotationRecognizer(thresholds: thresholds) : nil
        drag = kinds.contains(.drag) ? DragRecognizer(thresholds: thresholds) : nil
        tap = kinds.contains(.tap) ? TapRecognizer(thresholds: thresholds) : nil
        self.simultaneity = simultaneity
    }

    /// Runs every recognizer on the frame; the events, in the order above.
    public mutating func update(_ frame: TouchFrame) -> [RecognizedGesture] {
        var events: [RecognizedGesture] = []
        update(frame, into: &events)
        return events
    }

    /// Runs every recognizer on the frame and appends the events to `events`, in the order
    /// above: the engine passes the same array every frame, so a frame allocates nothing.
    public mutating func update(_ frame: TouchFrame, into events: inout [RecognizedGesture]) {
        var winner: GestureKind? = currentWinner

        let pinchEvent = pinch?.update(frame)
        if let event = pinchEvent { events.append(.pinch(event)) }
        arbitrate(.pinch, began: pinchEvent?.state == .began, winner: &winner, at: frame.time, into: &events)
        let rotationEvent = rotation?.update(frame)
        if let event = rotationEvent { events.append(.rotate(event)) }
        arbitrate(.rotate, began: rotationEvent?.state == .began, winner: &winner, at: frame.time, into: &events)
        let dragEvent = drag?.update(frame)
        if let event = dragEvent { events.append(.drag(event)) }
        arbitrate(.drag, began: dragEvent?.state == .began, winner: &winner, at: frame.time, into: &events)
        if let event = tap?.update(frame) { events.append(.tap(event)) }
    }

    /// The continuous gesture in progress, in exclusive mode.
    private var currentWinner: GestureKind? {
        guard simultaneity == .exclusive else { return nil }
        if pinch?.isInProgress == true { return .pinch }
        if rotation?.isInProgress == true { return .rotate }
        if drag?.isInProgress == true { return .drag }
        return nil
    }

    /// Applies rules 1 and 3 when `kind`, just updated, `began`.
    private mutating func arbitrate(_ kind: GestureKind, began: Bool, winner: inout GestureKind?, at time: Double, into events: inout [RecognizedGesture]) {
        guard began else { return }
        if let event = tap?.block(at: time) { events.append(.tap(event)) }
        guard simultaneity == .exclusive else { return }
        if winner == nil { winner = kind }
        // In the order pinch, rotation, drag, without the winner.
        if winner != .pinch, let event = pinch?.block(at: time) { events.append(.pinch(event)) }
        if winner != .rotate, let event = rotation?.block(at: time) { events.append(.rotate(event)) }
        if winner != .drag, let event = drag?.block(at: time) { events.append(.drag(event)) }
    }
}
