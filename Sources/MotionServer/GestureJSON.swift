import MotionCore

extension JSONValue {
    /// A recognizer event: `t`, `gesture`, `state`, `touches`, the gesture's value and its
    /// velocity in the same units per second.
    public static func gesture(_ gesture: RecognizedGesture) -> JSONValue {
        var members: [(String, JSONValue)]
        switch gesture {
        case .drag(let e):
            members = head(e.time, "drag", e.state, e.touches) + [
                ("translation", .point(e.translation)), ("velocity", .point(e.translationVelocity)), ("centroid", .point(e.centroid)),
            ]
        case .pinch(let e):
            members = head(e.time, "pinch", e.state, e.touches) + [
                ("scale", .number(e.scale)), ("velocity", .number(e.scaleVelocity)), ("centroid", .point(e.centroid)),
            ]
        case .rotate(let e):
            members = head(e.time, "rotate", e.state, e.touches) + [
                ("rotation", .number(e.rotation)), ("velocity", .number(e.rotationVelocity)), ("centroid", .point(e.centroid)),
            ]
        case .tap(let e):
            members = head(e.time, "tap", e.state, e.touches) + [("count", .integer(Int64(e.count))), ("location", .point(e.location))]
        }
        return .object(members)
    }

    private static func head(_ time: Double, _ gesture: String, _ state: RecognitionState, _ touches: Int) -> [(String, JSONValue)] {
        [("t", .number(time)), ("gesture", .string(gesture)), ("state", .string(state.rawValue)), ("touches", .integer(Int64(touches)))]
    }
}
