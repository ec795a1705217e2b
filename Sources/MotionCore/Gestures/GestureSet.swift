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
/// 5. A long press and a tap exclude each other too: when a long press begins, the tap in
///    progress fails. A long press recognizes together with drag, pinch and rotation (press
///    and drag), and fails by itself when the fingers move beyond its slop first.
/// 6. Swipes and edge swipes are discrete and block nothing: a swipe is also a drag, to
///    whatever follows the drag.
///
/// Recognizers are updated in that order (pinch, rotation, drag, long press, swipe, edge
/// swipe, tap) and their events are returned in it.
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
    public var longPress: LongPressRecognizer?
    public var swipe: SwipeRecognizer?
    public var edgeSwipe: EdgeSwipeRecognizer?
    public var simultaneity: Simultaneity

    /// Creates a set with the given kinds of recognizer, all with `thresholds`. An edge swipe
    /// needs the `screen` whose edges it watches; without one it is not run.
    public init(
        _ kinds: Set<GestureKind> = GestureKind.standard,
        thresholds: GestureThresholds = GestureThresholds(),
        simultaneity: Simultaneity = .simultaneous,
        screen: Size? = nil
    ) {
        pinch = kinds.contains(.pinch) ? PinchRecognizer(thresholds: thresholds) : nil
        rotation = kinds.contains(.rotate) ? RotationRecognizer(thresholds: thresholds) : nil
        drag = kinds.contains(.drag) ? DragRecognizer(thresholds: thresholds) : nil
        tap = kinds.contains(.tap) ? TapRecognizer(thresholds: thresholds) : nil
        longPress = kinds.contains(.longPress) ? LongPressRecognizer(thresholds: thresholds) : nil
        swipe = kinds.contains(.swipe) ? SwipeRecognizer(thresholds: thresholds) : nil
        edgeSwipe = kinds.contains(.edgeSwipe) ? screen.map { EdgeSwipeRecognizer(screen: $0, thresholds: thresholds) } : nil
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
        if let event = longPress?.update(frame) {
            events.append(.longPress(event))
            if event.state == .began { blockTap(at: frame.time, into: &events) }
        }
        if let event = swipe?.update(frame) { events.append(.swipe(event)) }
        if let event = edgeSwipe?.update(frame) { events.append(.edgeSwipe(event)) }
        if let event = tap?.update(frame) { events.append(.tap(event)) }
    }

    /// When a recognizer waits for time rather than for a frame (a long press held still,
    /// on a panel that sends nothing while nothing moves): wake the set at this time with
    /// ``advance(to:into:)``.
    public var nextDeadline: Double? { longPress?.deadline }

    /// Time passed with no frame: a long press whose time has come begins (and fails the tap).
    public mutating func advance(to time: Double, into events: inout [RecognizedGesture]) {
        guard let event = longPress?.advance(to: time) else { return }
        events.append(.longPress(event))
        blockTap(at: time, into: &events)
    }

    private mutating func blockTap(at time: Double, into events: inout [RecognizedGesture]) {
        if let event = tap?.block(at: time) { events.append(.tap(event)) }
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
        blockTap(at: time, into: &events)
        guard simultaneity == .exclusive else { return }
        if winner == nil { winner = kind }
        // In the order pinch, rotation, drag, without the winner.
        if winner != .pinch, let event = pinch?.block(at: time) { events.append(.pinch(event)) }
        if winner != .rotate, let event = rotation?.block(at: time) { events.append(.rotate(event)) }
        if winner != .drag, let event = drag?.block(at: time) { events.append(.drag(event)) }
    }
}
