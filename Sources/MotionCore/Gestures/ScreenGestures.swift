/// A gesture the whole screen watches for, whatever elements are under the fingers, and the
/// name a UI knows it by (`[[screen_gesture]]`): a kiosk's admin menu behind a three-finger
/// press of two seconds, or a back gesture from the left edge.
public struct ScreenGesturePattern: Hashable, Sendable {
    /// What the UI hears: `screen.gesture` events carry it as `name`.
    public var name: String
    /// `longPress`, `swipe` or `edgeSwipe`.
    public var gesture: GestureKind
    /// Fingers: at least this many for a long press, exactly this many for a swipe; nil for
    /// any (a long press of one finger or more).
    public var touches: Int?
    /// A long press's own duration, instead of `[gestures] long_press_duration`.
    public var duration: Double?
    /// An edge swipe's edge; nil for any.
    public var edge: ScreenEdge?
    /// A swipe's direction; nil for any.
    public var direction: SwipeDirection?
    /// Whether it takes the fingers from the elements: when it begins (a long press) or is
    /// recognized (a swipe), the elements' gestures on those fingers are cancelled, and the
    /// fingers go to no element until they lift.
    public var exclusive: Bool

    /// The kinds a screen gesture can be.
    public static let kinds: [GestureKind] = [.longPress, .swipe, .edgeSwipe]

    public init(name: String, gesture: GestureKind, touches: Int? = nil, duration: Double? = nil,
                edge: ScreenEdge? = nil, direction: SwipeDirection? = nil, exclusive: Bool = false) {
        self.name = name
        self.gesture = gesture
        self.touches = touches
        self.duration = duration
        self.edge = edge
        self.direction = direction
        self.exclusive = exclusive
    }
}

/// A screen gesture that happened: its pattern's name, and the recognizer's event.
public struct ScreenGestureEvent: Hashable, Sendable {
    public var name: String
    public var gesture: RecognizedGesture
    /// Whether its pattern takes the fingers from the elements (and this event is the moment
    /// it does: a long press's `began`, a swipe's `recognized`).
    public var takesFingers: Bool
}

/// Watches every contact on the screen for the configured patterns, each with a recognizer
/// of its own (a pattern may have its own duration or fingers).
///
/// What is published: a long press's `began`, `ended` and `cancelled` (not its `changed`,
/// which a UI acting on a name has no use for, nor `failed`, which every touch would
/// carry); a swipe's and an edge swipe's `recognized`, when they match the pattern's
/// fingers, direction or edge.
public struct ScreenGestures: Sendable {
    private struct Watch: Sendable {
        var pattern: ScreenGesturePattern
        var longPress: LongPressRecognizer?
        var swipe: SwipeRecognizer?
        var edgeSwipe: EdgeSwipeRecognizer?

        /// Whether it watches for what `other` did before a reload: the same name and gesture.
        func continues(_ other: Watch) -> Bool {
            pattern.name == other.pattern.name && pattern.gesture == other.pattern.gesture
        }

        /// Goes on with `previous`'s recognizer (the fingers it follows, the press it holds)
        /// under this watch's settings.
        mutating func carryOn(from previous: Watch) {
            if var press = previous.longPress, let settings = longPress {
                press.thresholds = settings.thresholds
                press.touches = settings.touches
                longPress = press
            }
            if var swipe = previous.swipe, let settings = self.swipe {
                swipe.thresholds = settings.thresholds
                self.swipe = swipe
            }
            if var edgeSwipe = previous.edgeSwipe, let settings = self.edgeSwipe {
                edgeSwipe.thresholds = settings.thresholds
                edgeSwipe.screen = settings.screen
                self.edgeSwipe = edgeSwipe
            }
        }

        /// Starts again with no finger followed, under the same settings.
        mutating func restart() {
            if let press = longPress { longPress = LongPressRecognizer(thresholds: press.thresholds, touches: press.touches) }
            if let swipe { self.swipe = SwipeRecognizer(thresholds: swipe.thresholds) }
            if let edgeSwipe { self.edgeSwipe = EdgeSwipeRecognizer(screen: edgeSwipe.screen, thresholds: edgeSwipe.thresholds) }
        }
    }

    private var watches: [Watch]

    /// Watches for `patterns` on `screen`, with `thresholds` where a pattern sets nothing.
    public init(_ patterns: [ScreenGesturePattern], screen: Size, thresholds: GestureThresholds) {
        watches = patterns.map { pattern in
            var watch = Watch(pattern: pattern)
            var own = thresholds
            if let duration = pattern.duration { own.longPressDuration = duration }
            switch pattern.gesture {
            case .longPress: watch.longPress = LongPressRecognizer(thresholds: own, touches: pattern.touches ?? 1)
            case .swipe: watch.swipe = SwipeRecognizer(thresholds: own)
            case .edgeSwipe: watch.edgeSwipe = EdgeSwipeRecognizer(screen: screen, thresholds: own)
            default: break
            }
            return watch
        }
    }

    /// Whether no pattern is watched for.
    public var isEmpty: Bool { watches.isEmpty }

    /// Takes the next frame of every contact on the screen (ids unique across devices).
    public mutating func update(_ frame: TouchFrame, into events: inout [ScreenGestureEvent]) {
        for index in watches.indices {
            if let event = watches[index].longPress?.update(frame) { take(.longPress(event), from: index, into: &events) }
            if let event = watches[index].swipe?.update(frame) { take(.swipe(event), from: index, into: &events) }
            if let event = watches[index].edgeSwipe?.update(frame) { take(.edgeSwipe(event), from: index, into: &events) }
        }
    }

    /// When a long press held still is due, for whoever drives this to wake it then.
    public var nextDeadline: Double? {
        watches.compactMap { $0.longPress?.deadline }.min()
    }

    /// Time passed with no frame: long presses whose time has come begin.
    public mutating func advance(to time: Double, into events: inout [ScreenGestureEvent]) {
        for index in watches.indices {
            if let event = watches[index].longPress?.advance(to: time) { take(.longPress(event), from: index, into: &events) }
        }
    }

    /// A reload: hands the gestures in progress over to `heir`, the new configuration's
    /// patterns. Each pattern that `heir` has too (the same name and gesture) carries on there
    /// under its new settings: a press held ends at its lift, one not yet begun waits the new
    /// duration. The others end here: a long press held is `cancelled` at `time`, into `events`.
    public mutating func handOver(to heir: inout ScreenGestures, at time: Double, into events: inout [ScreenGestureEvent]) {
        for index in watches.indices {
            if let kept = heir.watches.firstIndex(where: { $0.continues(watches[index]) }) {
                heir.watches[kept].carryOn(from: watches[index])
            } else if let event = watches[index].longPress?.block(at: time) {
                take(.longPress(event), from: index, into: &events)
            }
        }
    }

    /// A lock: every gesture in progress ends (a long press held is `cancelled` at `time`,
    /// into `events`) and every recognizer forgets the fingers down, which are locked out
    /// until they lift: a cloth down across the lock's end is none of theirs.
    public mutating func restart(at time: Double, into events: inout [ScreenGestureEvent]) {
        for index in watches.indices {
            if let event = watches[index].longPress?.block(at: time) { take(.longPress(event), from: index, into: &events) }
            watches[index].restart()
        }
    }

    private func take(_ gesture: RecognizedGesture, from index: Int, into events: inout [ScreenGestureEvent]) {
        let pattern = watches[index].pattern
        let matches: Bool
        switch gesture {
        case .longPress(let e): matches = [.began, .ended, .cancelled].contains(e.state)
        case .swipe(let e): matches = (pattern.touches.map { $0 == e.touches } ?? true) && (pattern.direction.map { $0 == e.direction } ?? true)
        case .edgeSwipe(let e): matches = pattern.edge.map { $0 == e.edge } ?? true
        default: matches = false
        }
        guard matches else { return }
        let takes = pattern.exclusive && (gesture.state == .began || gesture.state == .recognized)
        events.append(ScreenGestureEvent(name: pattern.name, gesture: gesture, takesFingers: takes))
    }
}
