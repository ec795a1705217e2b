/// The positions and sizes the engine takes from outside (a client's `set` and
/// `add_element`, the configuration file), relative to the screen: generous enough for any
/// layout (elements parked off-screen, a scene wider than the screen) and small enough that
/// nothing derived from them (a spring's displacement, a velocity, a distance squared) can
/// overflow. Spring constants have their ranges in ``SpringConfiguration``.
public struct ValueLimits: Hashable, Sendable {
    /// How far beyond each edge of the screen a position may be, in screens.
    public static let screensAround = 10.0
    /// The largest size, in screens, each way.
    public static let largestSize = 10.0

    /// The screen the limits are relative to, in pixels.
    public var screen: Size

    public init(screen: Size) {
        self.screen = screen
    }

    /// The x a position may have: from 10 screen widths left of the screen to 10 right of it.
    public var x: ClosedRange<Double> { -Self.screensAround * screen.width...(Self.screensAround + 1) * screen.width }
    /// The y a position may have: from 10 screen heights above the screen to 10 below it.
    public var y: ClosedRange<Double> { -Self.screensAround * screen.height...(Self.screensAround + 1) * screen.height }

    /// Why `point` is not a position the engine takes, naming the coordinate and its range;
    /// nil when it is one.
    public func problem(position point: Point) -> String? {
        // The usual answer first, making nothing: a restore asks this twice for each of
        // thousands of elements, and the list the loop below walks is an array made each time.
        let x = self.x, y = self.y
        if point.x.isFinite, point.y.isFinite, x.contains(point.x), y.contains(point.y) { return nil }
        for (name, value, range) in [("x", point.x, x), ("y", point.y, y)] where !(value.isFinite && range.contains(value)) {
            return "\(name) must be within \(Self.describe(range)) (\(Int(Self.screensAround)) screens around the \(Self.describe(screen)) screen), not \(value)"
        }
        return nil
    }

    /// Why `size` is not a size the engine takes (each side positive and at most 10 screens'); nil when it is one.
    public func problem(size: Size) -> String? {
        // The usual answer first, making nothing (``problem(position:)``).
        if Self.isSide(size.width, of: screen.width), Self.isSide(size.height, of: screen.height) { return nil }
        for (name, value, side) in [("width", size.width, screen.width), ("height", size.height, screen.height)]
        where !Self.isSide(value, of: side) {
            return "\(name) must be more than 0 and at most \(Self.describe(Self.largestSize * side)) (\(Int(Self.largestSize)) screens), not \(value)"
        }
        return nil
    }

    /// Whether `value` is a side a size may have on a screen `side` pixels that way.
    private static func isSide(_ value: Double, of side: Double) -> Bool {
        value.isFinite && value > 0 && value <= largestSize * side
    }

    private static func describe(_ range: ClosedRange<Double>) -> String { "\(describe(range.lowerBound))…\(describe(range.upperBound))" }
    private static func describe(_ value: Double) -> String { value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value) }
    private static func describe(_ size: Size) -> String { "\(describe(size.width))×\(describe(size.height))" }
}
