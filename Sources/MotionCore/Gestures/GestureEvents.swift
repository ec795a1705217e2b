/// The recognizers motiond has.
public enum GestureKind: String, Hashable, Sendable, Codable, CaseIterable {
    case drag
    case pinch
    case rotate
    case tap
    case longPress = "long_press"
    case swipe
    case edgeSwipe = "edge_swipe"

    /// What a ``GestureSet`` runs unless told otherwise: the recognizers elements have had
    /// from the start. The others are asked for by name, so that a scene made before them
    /// recognizes exactly what it did.
    public static let standard: Set<GestureKind> = [.drag, .pinch, .rotate, .tap]
}

/// A drag's update: cumulative translation of the fingers' centroid since touch-down.
public struct DragEvent: TranslationGestureEvent, Hashable, Sendable {
    public var state: RecognitionState
    /// The frame's timestamp, in seconds.
    public var time: Double
    /// Fingers down (at `.ended`, the fingers that were down before the lift).
    public var touches: Int
    /// Translation since the first finger landed, in pixels; absolute, never a delta.
    public var translation: Point
    /// In pixels per second.
    public var translationVelocity: Point
    /// Where the fingers are, in pixels.
    public var centroid: Point
}

/// A pinch's update: cumulative scale since touch-down.
public struct PinchEvent: ScaleGestureEvent, Hashable, Sendable {
    public var state: RecognitionState
    public var time: Double
    public var touches: Int
    /// The fingers' spread now divided by their spread at touch-down; 1 means unchanged.
    public var scale: Double
    /// Per second.
    public var scaleVelocity: Double
    /// The fingers' centroid, in pixels: the natural pivot of the scale.
    public var centroid: Point
}

/// A rotation's update: cumulative angle since touch-down.
public struct RotationEvent: RotationGestureEvent, Hashable, Sendable {
    public var state: RecognitionState
    public var time: Double
    public var touches: Int
    /// Radians, positive clockwise on screen, continuous past ±π.
    public var rotation: Double
    /// Radians per second.
    public var rotationVelocity: Double
    /// The fingers' centroid, in pixels: the natural pivot of the rotation.
    public var centroid: Point
}

/// A tap, recognized when the fingers lift, or failed.
public struct TapEvent: GestureEvent, Hashable, Sendable {
    /// `.recognized` or `.failed`.
    public var state: RecognitionState
    public var time: Double
    /// The most fingers down at once during the tap.
    public var touches: Int
    /// 1 for a single tap, 2 for the second tap of a double tap, and so on.
    public var count: Int
    /// Where the fingers landed, in pixels.
    public var location: Point
}

/// Any recognizer's event, as a ``GestureSet`` emits them.
public enum RecognizedGesture: Hashable, Sendable {
    case drag(DragEvent)
    case pinch(PinchEvent)
    case rotate(RotationEvent)
    case tap(TapEvent)
    case longPress(LongPressEvent)
    case swipe(SwipeEvent)
    case edgeSwipe(EdgeSwipeEvent)

    /// Which recognizer.
    public var kind: GestureKind {
        switch self {
        case .drag: return .drag
        case .pinch: return .pinch
        case .rotate: return .rotate
        case .tap: return .tap
        case .longPress: return .longPress
        case .swipe: return .swipe
        case .edgeSwipe: return .edgeSwipe
        }
    }

    /// The frame's timestamp, in seconds.
    public var time: Double {
        switch self {
        case .drag(let e): return e.time
        case .pinch(let e): return e.time
        case .rotate(let e): return e.time
        case .tap(let e): return e.time
        case .longPress(let e): return e.time
        case .swipe(let e): return e.time
        case .edgeSwipe(let e): return e.time
        }
    }

    /// The fingers the event counts.
    public var touches: Int {
        switch self {
        case .drag(let e): return e.touches
        case .pinch(let e): return e.touches
        case .rotate(let e): return e.touches
        case .tap(let e): return e.touches
        case .longPress(let e): return e.touches
        case .swipe(let e): return e.touches
        case .edgeSwipe: return 1
        }
    }

    /// The event's state.
    public var state: RecognitionState {
        switch self {
        case .drag(let e): return e.state
        case .pinch(let e): return e.state
        case .rotate(let e): return e.state
        case .tap(let e): return e.state
        case .longPress(let e): return e.state
        case .swipe(let e): return e.state
        case .edgeSwipe(let e): return e.state
        }
    }
}

extension GestureKind {
    // Compared and hashed by case, not by name: a raw-valued enum otherwise takes
    // RawRepresentable's, which hash and compare the raw string, and every element of a scene
    // asks its set of kinds for each one when its streams are named.
    public static func == (lhs: GestureKind, rhs: GestureKind) -> Bool { lhs.allCasesIndex == rhs.allCasesIndex }
    public func hash(into hasher: inout Hasher) { hasher.combine(allCasesIndex) }

    /// The kind's place in `allCases`, for tables indexed by kind.
    var allCasesIndex: Int {
        switch self {
        case .drag: return 0
        case .pinch: return 1
        case .rotate: return 2
        case .tap: return 3
        case .longPress: return 4
        case .swipe: return 5
        case .edgeSwipe: return 6
        }
    }
}
