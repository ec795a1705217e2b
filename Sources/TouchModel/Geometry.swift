/// A point or a 2-D vector, in screen pixels unless said otherwise; y grows downward.
public struct Point: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The horizontal coordinate.
    public var x: Double
    /// The vertical coordinate, growing downward.
    public var y: Double

    /// Creates a point.
    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    /// The origin.
    public static let zero = Point(x: 0, y: 0)

    /// Component-wise sum.
    public static func + (lhs: Point, rhs: Point) -> Point { Point(x: lhs.x + rhs.x, y: lhs.y + rhs.y) }
    /// Component-wise difference.
    public static func - (lhs: Point, rhs: Point) -> Point { Point(x: lhs.x - rhs.x, y: lhs.y - rhs.y) }
    /// Both components multiplied by `rhs`.
    public static func * (lhs: Point, rhs: Double) -> Point { Point(x: lhs.x * rhs, y: lhs.y * rhs) }
    /// Both components divided by `rhs`.
    public static func / (lhs: Point, rhs: Double) -> Point { Point(x: lhs.x / rhs, y: lhs.y / rhs) }
    /// The point mirrored through the origin.
    public static prefix func - (point: Point) -> Point { Point(x: -point.x, y: -point.y) }

    /// The distance from the origin.
    public var length: Double { (x * x + y * y).squareRoot() }

    /// The distance to another point.
    public func distance(to other: Point) -> Double { (other - self).length }

    public var description: String { "(\(x), \(y))" }
}

/// A width and a height, in screen pixels unless said otherwise.
public struct Size: Hashable, Sendable, Codable {
    /// The horizontal extent.
    public var width: Double
    /// The vertical extent.
    public var height: Double

    /// Creates a size.
    public init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }
}

/// An axis-aligned rectangle.
public struct Rect: Hashable, Sendable, Codable {
    /// The corner with the smallest coordinates (top left on screen).
    public var origin: Point
    /// The extent.
    public var size: Size

    /// Creates a rectangle from its top-left corner and size.
    public init(origin: Point, size: Size) {
        self.origin = origin
        self.size = size
    }

    /// Creates a rectangle from its top-left corner and size.
    public init(x: Double, y: Double, width: Double, height: Double) {
        self.init(origin: Point(x: x, y: y), size: Size(width: width, height: height))
    }

    /// The smallest x.
    public var minX: Double { Swift.min(origin.x, origin.x + size.width) }
    /// The largest x.
    public var maxX: Double { Swift.max(origin.x, origin.x + size.width) }
    /// The smallest y.
    public var minY: Double { Swift.min(origin.y, origin.y + size.height) }
    /// The largest y.
    public var maxY: Double { Swift.max(origin.y, origin.y + size.height) }
    /// The centre.
    public var center: Point { Point(x: (minX + maxX) / 2, y: (minY + maxY) / 2) }

    /// Whether `point` lies inside or on the edge.
    public func contains(_ point: Point) -> Bool {
        point.x >= minX && point.x <= maxX && point.y >= minY && point.y <= maxY
    }
}
