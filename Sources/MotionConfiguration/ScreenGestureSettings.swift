import MotionCore

/// `[[screen_gesture]]`: a gesture the whole screen watches for, by name.
///
///     [[screen_gesture]]
///     name = "admin"            # what subscribers of screen.gesture hear
///     gesture = "long_press"    # long_press, swipe or edge_swipe
///     touches = 3               # long press: at least; swipe: exactly (1 to 5)
///     duration = 2.0            # long press: seconds held (default [gestures] long_press_duration)
///     exclusive = true          # take the fingers from the elements when it happens
///
///     [[screen_gesture]]
///     name = "back"
///     gesture = "edge_swipe"
///     edge = "left"             # edge swipe: left, right, top or bottom (default any)
///
/// A swipe may name its `direction` (left, right, up or down).
enum ScreenGestureSettings {
    /// As many as anyone would bind, and a bound on what one frame costs.
    static let maximum = 32

    static func read(_ table: inout TableReader, names: inout [String: String]) throws(ConfigurationError) -> ScreenGesturePattern {
        guard let name = try table.string("name") else {
            throw table.error(nil, "[[screen_gesture]] needs name = \"…\": what subscribers of screen.gesture hear")
        }
        guard !name.isEmpty, name.utf8.count <= 64, name.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == "-" || $0 == ".") }) else {
            throw table.error("name", "a screen gesture's name is 1 to 64 ASCII letters, digits, '_', '-' or '.', not \"\(name.prefix(64))\"")
        }
        if let first = names[name] {
            throw table.error("name", "screen gesture '\(name)' is defined twice: first at \(first), again here")
        }
        names[name] = table.place("name")
        guard let gestureName = try table.string("gesture") else {
            throw table.error(nil, "[[screen_gesture]] '\(name)' needs gesture = \"long_press\", \"swipe\" or \"edge_swipe\"")
        }
        guard let gesture = GestureKind(rawValue: gestureName), ScreenGesturePattern.kinds.contains(gesture) else {
            throw table.error("gesture", "gesture is \"long_press\", \"swipe\" or \"edge_swipe\", not \"\(gestureName.prefix(64))\"")
        }
        var pattern = ScreenGesturePattern(name: name, gesture: gesture)
        if let touches = try table.number("touches", in: 1...Double(SwipeRecognizer.maximumTouches)) {
            guard touches == touches.rounded(), gesture != .edgeSwipe else {
                throw table.error("touches", gesture == .edgeSwipe ? "an edge swipe is one finger: touches does not apply" : "touches is a whole number of fingers, 1 to 5")
            }
            pattern.touches = Int(touches)
        }
        if let duration = try table.number("duration", in: 0.05...60) {
            guard gesture == .longPress else { throw table.error("duration", "duration applies to a long_press") }
            pattern.duration = duration
        }
        if let edge = try table.string("edge") {
            guard gesture == .edgeSwipe else { throw table.error("edge", "edge applies to an edge_swipe") }
            guard let known = ScreenEdge(rawValue: edge) else { throw table.error("edge", "edge is \"left\", \"right\", \"top\" or \"bottom\", not \"\(edge.prefix(64))\"") }
            pattern.edge = known
        }
        if let direction = try table.string("direction") {
            guard gesture == .swipe else { throw table.error("direction", "direction applies to a swipe") }
            guard let known = SwipeDirection(rawValue: direction) else {
                throw table.error("direction", "direction is \"left\", \"right\", \"up\" or \"down\", not \"\(direction.prefix(64))\"")
            }
            pattern.direction = known
        }
        pattern.exclusive = try table.bool("exclusive") ?? false
        try table.finish()
        return pattern
    }
}
