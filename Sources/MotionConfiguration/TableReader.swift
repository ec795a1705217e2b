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
    func inner(_ table: SettingsTable, below key: String) -> TableReader {
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
    func peek(_ key: String) -> SettingsValue? {
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

    /// A key's value, marked read; looked up once when one file has the table (the value
    /// readers, TableReader+Values.swift, read through it).
    mutating func value(_ key: String) -> SettingsValue? {
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
