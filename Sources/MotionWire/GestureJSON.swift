import MotionCore

extension JSONValue {
    /// A recognizer event: `t`, `gesture`, `state`, `touches`, the gesture's value and its
    /// velocity in the same units per second.
    public static func gesture(_ gesture: RecognizedGesture) -> JSONValue {
        let head: [(String, JSONValue)] = [("t", .number(gesture.time)), ("gesture", .string(gesture.kind.rawValue)),
                                           ("state", .string(gesture.state.rawValue))]
        return .object(head + gestureValues(gesture, velocity: true))
    }

    /// What a gesture says beyond its kind, state and time: `touches`, its value, its
    /// velocity (when asked for), and where it is. The socket's `state` events put their own
    /// head before these.
    package static func gestureValues(_ gesture: RecognizedGesture, velocity: Bool) -> [(String, JSONValue)] {
        func speed(_ value: JSONValue) -> [(String, JSONValue)] { velocity ? [("velocity", value)] : [] }
        switch gesture {
        case .drag(let e):
            return [("touches", .integer(Int64(e.touches))), ("translation", .point(e.translation))] + speed(.point(e.translationVelocity))
                + [("centroid", .point(e.centroid))]
        case .pinch(let e):
            return [("touches", .integer(Int64(e.touches))), ("scale", .number(e.scale))] + speed(.number(e.scaleVelocity))
                + [("centroid", .point(e.centroid))]
        case .rotate(let e):
            return [("touches", .integer(Int64(e.touches))), ("rotation", .number(e.rotation))] + speed(.number(e.rotationVelocity))
                + [("centroid", .point(e.centroid))]
        case .tap(let e):
            return [("touches", .integer(Int64(e.touches))), ("count", .integer(Int64(e.count))), ("location", .point(e.location))]
        case .longPress(let e):
            return [("touches", .integer(Int64(e.touches))), ("duration", .number(e.duration)), ("location", .point(e.location))]
        case .swipe(let e):
            return [("touches", .integer(Int64(e.touches))), ("direction", .string(e.direction.rawValue)), ("distance", .number(e.distance)),
                    ("velocity", .point(e.velocity))]
        case .edgeSwipe(let e):
            return [("touches", 1), ("edge", .string(e.edge.rawValue)), ("distance", .number(e.distance)), ("velocity", .point(e.velocity))]
        }
    }
}
