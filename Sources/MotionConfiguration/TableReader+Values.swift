import FoundationEssentials
import MotionCore
import TOMLKit
import TouchInput

/// The typed values a table's keys hold: each reader marks its key read (``TableReader/value(_:)``)
/// and refuses a value of the wrong type or out of its range with the key's file and line.
extension TableReader {
    /// The error for `key`, set to `value`, which is not what the setting takes.
    func wrongType(_ key: String, _ expected: String, _ value: SettingsValue) -> ConfigurationError {
        // TOML has nan and inf, which no setting takes: name the number, not its container.
        if let number = value.firstNonFinite {
            return error(key, "\(key) must be \(expected), and only finite ones: \(number) is not a number motiond can use")
        }
        return error(key, "\(key) must be \(expected), not \(value.description)")
    }

    mutating func string(_ key: String) throws(ConfigurationError) -> String? {
        guard let value = value(key) else { return nil }
        guard let string = value.string else { throw wrongType(key, "a string", value) }
        return string
    }

    /// A string that must be an absolute path: a relative one would depend on the directory
    /// motiond happens to be started from.
    mutating func absolutePath(_ key: String) throws(ConfigurationError) -> String? {
        guard let path = try string(key) else { return nil }
        guard path.hasPrefix("/") else { throw error(key, "\(key) must be an absolute path, not \"\(path)\"") }
        guard !path.hasSuffix("/") else { throw error(key, "\(key) must name a file, not the directory \"\(path)\"") }
        return path
    }

    mutating func bool(_ key: String) throws(ConfigurationError) -> Bool? {
        guard let value = value(key) else { return nil }
        guard let bool = value.bool else { throw wrongType(key, "true or false", value) }
        return bool
    }

    mutating func int(_ key: String) throws(ConfigurationError) -> Int? {
        guard let value = value(key) else { return nil }
        guard let int = value.int else { throw wrongType(key, "an integer", value) }
        return int
    }

    /// A number, integer or not, optionally within `range`.
    mutating func number(_ key: String, in range: ClosedRange<Double>? = nil) throws(ConfigurationError) -> Double? {
        guard let value = value(key) else { return nil }
        guard let number = value.number else { throw wrongType(key, "a number", value) }
        if let range, !range.contains(number) {
            throw error(key, "\(key) must be between \(compactNumber(range.lowerBound)) and \(compactNumber(range.upperBound)), not \(compactNumber(number))")
        }
        return number
    }

    mutating func numbers(_ key: String) throws(ConfigurationError) -> [Double]? {
        guard let value = value(key) else { return nil }
        guard let array = value.array else { throw wrongType(key, "an array of numbers", value) }
        var numbers: [Double] = []
        for element in array {
            guard let number = element.number else { throw wrongType(key, "an array of numbers", value) }
            numbers.append(number)
        }
        return numbers
    }

    mutating func strings(_ key: String) throws(ConfigurationError) -> [String]? {
        guard let value = value(key) else { return nil }
        guard let array = value.array else { throw wrongType(key, "an array of strings", value) }
        var strings: [String] = []
        for element in array {
            guard let string = element.string else { throw wrongType(key, "an array of strings", value) }
            strings.append(string)
        }
        return strings
    }

    /// `[x, y]` or `{ x = …, y = … }`.
    mutating func point(_ key: String) throws(ConfigurationError) -> Point? {
        guard let value = value(key) else { return nil }
        guard let point = try pair(value, key: key, names: ("x", "y")) else {
            throw wrongType(key, "a point, [x, y] or { x = …, y = … }", value)
        }
        let position = Point(x: point.0, y: point.1)
        if let problem = limits.problem(position: position) { throw error(key, "\(key): \(problem)") }
        return position
    }

    /// `[width, height]` or `{ width = …, height = … }`, both positive and within the limits.
    mutating func size(_ key: String) throws(ConfigurationError) -> Size? {
        guard let value = value(key) else { return nil }
        guard let size = try pair(value, key: key, names: ("width", "height")) else {
            throw wrongType(key, "a size, [width, height] or { width = …, height = … }", value)
        }
        guard size.0 > 0 && size.1 > 0 else { throw error(key, "\(key) must be positive, not \(compactNumber(size.0)) × \(compactNumber(size.1))") }
        if let problem = limits.problem(size: Size(width: size.0, height: size.1)) { throw error(key, "\(key): \(problem)") }
        return Size(width: size.0, height: size.1)
    }

    /// A device's output: `[width, height]` at the screen's top-left corner, or `[x, y,
    /// width, height]` (or the same as inline tables), positive and within the screen: a
    /// rectangle past the screen's edge would put touches where nothing is drawn.
    mutating func output(_ key: String, screen: Size) throws(ConfigurationError) -> Rect? {
        guard let value = peek(key) else { return nil }
        let output: Rect
        let isRectangle = value.array?.count == 4 || value.table?["x"] != nil || value.table?["y"] != nil
        if isRectangle {
            guard let rect = try rect(key) else { return nil }
            output = rect
        } else {
            guard let size = try size(key) else { return nil }
            output = Rect(origin: Point(x: 0, y: 0), size: size)
        }
        let formatted = [output.origin.x, output.origin.y, output.size.width, output.size.height].map(compactNumber).joined(separator: ", ")
        // At least a pixel each way: a smaller output (1e-300 passes "positive") would put
        // every touch of the device on one point.
        guard output.size.width >= 1 && output.size.height >= 1 else {
            throw error(key, "\(key) needs a width and height of at least 1 pixel, not [\(formatted)]")
        }
        guard output.origin.x >= 0, output.origin.y >= 0,
              output.origin.x + output.size.width <= screen.width, output.origin.y + output.size.height <= screen.height else {
            throw error(key, "\(key) [\(formatted)] reaches past the screen (\(compactNumber(screen.width)) × \(compactNumber(screen.height)) in [screen]): the screen is every display together, and each device's output lies within it")
        }
        return output
    }

    /// `[x, y, width, height]` or `{ x, y, width, height }`.
    mutating func rect(_ key: String) throws(ConfigurationError) -> Rect? {
        guard let value = value(key) else { return nil }
        return try rect(value, key: key)
    }

    /// A list of rectangles, each `[x, y, width, height]` or `{ x, y, width, height }`, at
    /// most `limit` of them.
    mutating func rectangles(_ key: String, limit: Int) throws(ConfigurationError) -> [Rect]? {
        guard let value = value(key) else { return nil }
        guard let array = value.array else { throw wrongType(key, "a list of rectangles, [[x, y, width, height], …]", value) }
        guard array.count <= limit else { throw error(key, "\(key) lists \(array.count) rectangles; at most \(limit)") }
        var rectangles: [Rect] = []
        for element in array { rectangles.append(try rect(element, key: key)) }
        return rectangles
    }

    private mutating func rect(_ value: SettingsValue, key: String) throws(ConfigurationError) -> Rect {
        let expected = "a rectangle, [x, y, width, height] or { x = …, y = …, width = …, height = … }"
        var numbers: [Double] = []
        if let array = value.array {
            for element in array { if let n = element.number { numbers.append(n) } }
            guard numbers.count == 4, array.count == 4 else { throw wrongType(key, expected, value) }
        } else if let table = value.table {
            var inner = inner(table, below: key)
            for name in ["x", "y", "width", "height"] {
                guard let n = try inner.number(name) else { throw inner.error(nil, "\(key) needs \(name)") }
                numbers.append(n)
            }
            try inner.finish()
        } else {
            throw wrongType(key, expected, value)
        }
        guard numbers.allSatisfy(\.isFinite) else { throw error(key, "\(key) needs finite numbers") }
        guard numbers[2] >= 0 && numbers[3] >= 0 else { throw error(key, "\(key) needs a width and height of zero or more") }
        return Rect(x: numbers[0], y: numbers[1], width: numbers[2], height: numbers[3])
    }

    /// A table of named points, `{ name = [x, y], … }`.
    mutating func points(_ key: String) throws(ConfigurationError) -> [String: Point]? {
        guard let value = value(key) else { return nil }
        guard let table = value.table else { throw wrongType(key, "a table of named points, { name = [x, y], … }", value) }
        var inner = inner(table, below: key)
        var points: [String: Point] = [:]
        for name in table.keys.sorted() { points[name] = try inner.point(name) }
        return points
    }

    /// A point, or the id of another element whose position to follow.
    mutating func destination(_ key: String) throws(ConfigurationError) -> DestinationSettings? {
        guard let value = value(key) else { return nil }
        if let id = value.string { return .element(id) }
        guard let point = try pair(value, key: key, names: ("x", "y")) else {
            throw wrongType(key, "a point, [x, y], or an element id", value)
        }
        let position = Point(x: point.0, y: point.1)
        if let problem = limits.problem(position: position) { throw error(key, "\(key): \(problem)") }
        return .point(position)
    }

    /// `{ tension, friction [, mass] }`, `{ origami_tension, origami_friction }` or
    /// `{ bounciness, speed }`; the default spring when absent. Checked to come to rest.
    mutating func spring(_ key: String) throws(ConfigurationError) -> SpringConfiguration {
        guard let value = value(key) else { return .standard }
        guard let table = value.table else {
            throw wrongType(key, "a table: { tension = 342, friction = 30 }, { origami_tension = …, origami_friction = … } or { bounciness = …, speed = … }", value)
        }
        var inner = inner(table, below: key)
        var configuration: SpringConfiguration
        if table["origami_tension"] != nil || table["origami_friction"] != nil {
            guard let t = try inner.number("origami_tension"), let f = try inner.number("origami_friction") else {
                throw inner.error(nil, "origami_tension and origami_friction go together")
            }
            configuration = SpringConfiguration(origamiTension: t, origamiFriction: f)
        } else if table["bounciness"] != nil || table["speed"] != nil {
            guard let b = try inner.number("bounciness"), let s = try inner.number("speed") else {
                throw inner.error(nil, "bounciness and speed go together")
            }
            configuration = SpringConfiguration(bounciness: b, speed: s)
        } else {
            configuration = SpringConfiguration(tension: try inner.number("tension") ?? 342, friction: try inner.number("friction") ?? 30)
        }
        configuration.mass = try inner.number("mass") ?? 1
        try inner.finish()
        do { return try configuration.validated() } catch {
            throw self.error(key, "this spring cannot run: \(error)")
        }
    }

    /// Two numbers, `[a, b]` or `{ names.0 = a, names.1 = b }`; nil when `value` is neither.
    private func pair(_ value: SettingsValue, key: String, names: (String, String)) throws(ConfigurationError) -> (Double, Double)? {
        if let array = value.array {
            guard array.count == 2, let a = array[0].number, let b = array[1].number else { return nil }
            return (a, b)
        }
        if let table = value.table {
            var inner = inner(table, below: key)
            guard let a = try inner.number(names.0), let b = try inner.number(names.1) else { return nil }
            try inner.finish()
            return (a, b)
        }
        return nil
    }
}
