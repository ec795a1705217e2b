import FoundationEssentials
import MotionCore
import TOMLKit
import TouchInput

/// Where errors point.
struct ReadContext {
    let file: String
    let locator: TOMLLocator
}

/// Reads one table of settings along a key path, remembering which keys were read so that
/// ``finish()`` can refuse the others: an unknown key is an error, never ignored.
///
/// A table may come in layers, one per file that has it (the main file, then each drop-in):
/// a key is read from the last layer that sets it, and an error about it points at that file
/// and line.
///
/// A restore reads thousands of elements through it, so the common case costs little: one
/// layer (`add_element` and most tables), read marks kept as bits, and the key path made only
/// for an error.
struct TableReader {
    /// One file's part of the table, and which of its members were read.
    private struct Layer {
        let table: SettingsTable
        let context: ReadContext
        var read = ReadMarks()

        /// An error on the line of `keys` in this file.
        func error(_ keys: [String], _ message: String) -> ConfigurationError {
            ConfigurationError(file: context.file, line: context.locator.line(keys), message: message)
        }

        /// Marks `key` read, if this file sets it.
        mutating func markRead(_ key: String) {
            if let position = table.position(of: key) { read.insert(position) }
        }

        /// The first key in order that was not read: the same file always gets the same error.
        var firstUnread: String? {
            guard read.count < table.count else { return nil }
            return table.members.indices.lazy.filter { !read.contains($0) }.map { table.members[$0].key }.min()
        }
    }

    /// The last file that has the table: its values win.
    private var top: Layer
    /// The files before it that have the table, in order; none when only one has it, as
    /// always for `add_element`.
    private var lower: [Layer]
    /// The key path, made by ``path`` only when asked: an inner table's reader would
    /// otherwise copy its parent's path for every element read. Its last key, if any,
    /// follows `parentPath`.
    private let parentPath: [String]
    private let lastKey: String?
    /// The positions and sizes allowed, relative to the screen; tables below inherit them.
    var limits = ValueLimits(screen: Configuration.defaultScreen)

    init(_ table: SettingsTable, path: [String], context: ReadContext) {
        self.init(top: Layer(table: table, context: context), lower: [], parentPath: path, lastKey: nil)
    }

    /// The same table from several files, later ones overriding earlier ones key by key.
    init(merging tables: [(table: SettingsTable, context: ReadContext)], path: [String]) {
        precondition(!tables.isEmpty, "a table comes from at least one file")
        let layers = tables.map { Layer(table: $0.table, context: $0.context) }
        self.init(top: layers[layers.count - 1], lower: Array(layers.dropLast()), parentPath: path, lastKey: nil)
    }

    private init(top: Layer, lower: [Layer], parentPath: [String], lastKey: String?) {
        self.top = top
        self.lower = lower
        self.parentPath = parentPath
        self.lastKey = lastKey
    }

    /// A reader for a table below this one, at `key`, with this one's limits.
    private func child(top: Layer, lower: [Layer] = [], key: String) -> TableReader {
        // The parent's path as it is when it has no last key of its own: no copy.
        var reader = lastKey == nil ? TableReader(top: top, lower: lower, parentPath: parentPath, lastKey: key)
                                    : TableReader(top: top, lower: lower, parentPath: path, lastKey: key)
        reader.limits = limits
        return reader
    }

    /// The key path of this table, from the top level.
    var path: [String] { lastKey.map { parentPath + [$0] } ?? parentPath }

    /// Every layer, in the order of the files.
    private var layers: [Layer] { lower + [top] }

    /// The file that sets `key` (the last one that does), else the first file.
    private func layer(for key: String?) -> Layer {
        if let key {
            if top.table.position(of: key) != nil { return top }
            if let layer = lower.last(where: { $0.table.position(of: key) != nil }) { return layer }
        }
        return lower.first ?? top
    }

    /// An error about `key` (or the table itself), on its line.
    func error(_ key: String?, _ message: String) -> ConfigurationError {
        error(key.map { [$0] } ?? [], message)
    }

    /// An error about a key path below this table.
    func error(_ keys: [String], _ message: String) -> ConfigurationError {
        layer(for: keys.first).error(path + keys, message)
    }

    /// A reader for an inline table set at `key`, in the file that sets it.
    private func inner(_ table: SettingsTable, below key: String) -> TableReader {
        child(top: Layer(table: table, context: layer(for: key).context), key: key)
    }

    /// Where `key` is set: FILE:LINE, for messages that name two places.
    func place(_ key: String?) -> String {
        let context = layer(for: key).context
        return "\(context.file):\(context.locator.line(path + (key.map { [$0] } ?? [])))"
    }

    private var name: String { path.isEmpty ? "the top level" : "[\(path.joined(separator: "."))]" }

    /// Refuses any key that was not read.
    func finish() throws(ConfigurationError) {
        for layer in lower {
            if let key = layer.firstUnread { throw layer.error(path + [key], "unknown key '\(key)' in \(name)") }
        }
        if let key = top.firstUnread { throw top.error(path + [key], "unknown key '\(key)' in \(name)") }
    }

    /// A key's value, from the last file that sets it, without marking it read.
    private func peek(_ key: String) -> SettingsValue? {
        top.table[key] ?? peekBelowTop(key)
    }

    /// A key's value from the files before the last, the last one that sets it.
    private func peekBelowTop(_ key: String) -> SettingsValue? {
        for layer in lower.reversed() {
            if let value = layer.table[key] { return value }
        }
        return nil
    }

    /// Whether the table sets `key`.
    func has(_ key: String) -> Bool { peek(key) != nil }

    /// A key's value, marked read; looked up once when one file has the table.
    private mutating func value(_ key: String) -> SettingsValue? {
        guard let position = top.table.position(of: key) else {
            guard let value = peekBelowTop(key) else { return nil }
            markRead(key)
            return value
        }
        top.read.insert(position)
        if !lower.isEmpty { markRead(key) }
        return top.table.members[position].value
    }

    /// Marks `key` read in every file that sets it.
    private mutating func markRead(_ key: String) {
        top.markRead(key)
        for index in lower.indices { lower[index].markRead(key) }
    }

    private func wrongType(_ key: String, _ expected: String, _ value: SettingsValue) -> ConfigurationError {
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

    /// A table below this one, if present: merged key by key across the files that have it.
    mutating func table(_ key: String) throws(ConfigurationError) -> TableReader? {
        if lower.isEmpty {
            // One file: one lookup, and no list of layers.
            guard let position = top.table.position(of: key) else { return nil }
            let value = top.table.members[position].value
            guard let table = value.table else { throw notATable(key, value, in: top) }
            top.read.insert(position)
            return child(top: Layer(table: table, context: top.context), key: key)
        }
        var found: [Layer] = []
        for layer in layers {
            guard let value = layer.table[key] else { continue }
            guard let table = value.table else { throw notATable(key, value, in: layer) }
            found.append(Layer(table: table, context: layer.context))
        }
        guard let last = found.popLast() else { return nil }
        markRead(key)
        return child(top: last, lower: found, key: key)
    }

    /// The error for `key`, set in `layer` to `value`, which is not a table.
    private func notATable(_ key: String, _ value: SettingsValue, in layer: Layer) -> ConfigurationError {
        layer.error(path + [key], "\(key) must be a table ([\((path + [key]).joined(separator: "."))]), not \(value.description)")
    }

    /// An array of tables (`[[key]]`), each with its index in the path: every file's, in
    /// the order the files were read.
    mutating func tables(_ key: String) throws(ConfigurationError) -> [TableReader] {
        markRead(key)
        var tables: [TableReader] = []
        for layer in layers {
            guard let value = layer.table[key] else { continue }
            guard let array = value.array, array.allSatisfy({ $0.table != nil }) else {
                throw layer.error(path + [key], "\(key) must be an array of tables ([[\(key)]]), not \(value.description)")
            }
            for (index, element) in array.enumerated() {
                tables.append(child(top: Layer(table: element.table ?? SettingsTable(), context: layer.context), key: "\(key)[\(index)]"))
            }
        }
        return tables
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

/// Which members of a table were read, by position: a bit each for the first 64 (more than
/// any table of settings has), a set for the rest (a client's table of thousands of snap
/// points). Counted, so that ``TableReader/finish()`` knows at once that every one was.
private struct ReadMarks {
    private var first: UInt64 = 0
    private var rest: Set<Int> = []
    private(set) var count = 0

    mutating func insert(_ position: Int) {
        if position < 64 {
            let bit = UInt64(1) << position
            guard first & bit == 0 else { return }
            first |= bit
        } else {
            guard rest.insert(position).inserted else { return }
        }
        count += 1
    }

    func contains(_ position: Int) -> Bool {
        position < 64 ? first & (UInt64(1) << position) != 0 : rest.contains(position)
    }
}
