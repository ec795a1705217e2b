import MotionConfiguration
import MotionCore
import MotionWire

/// `add_element`'s element, read by the same reader as the configuration file's
/// `[[element]]` tables (through ``SettingsValue``), so that the two cannot disagree on what
/// an element may be.
enum ElementInput {
    /// The element's settings, or why they are not acceptable.
    static func settings(from input: JSONInput, limits: ValueLimits) throws(ProtocolError) -> ElementSettings {
        try settings(from: JSONValue(input), limits: limits)
    }

    /// The same from the element as kept: the `add_element` object a restore reads back,
    /// without making it a ``JSONInput`` again.
    static func settings(from object: JSONValue, limits: ValueLimits) throws(ProtocolError) -> ElementSettings {
        var members: [(String, JSONValue)] = []
        if case .object(let pairs) = object { members = pairs }
        // The interactions may come as a table of their own, {"interactions": {"tossable": {…}}},
        // or beside the other keys, as in the configuration file, but not both.
        var interactions: [(String, JSONValue)] = []
        if let value = members.last(where: { $0.0 == "interactions" })?.1 {
            guard case .object(let table) = value else {
                throw ProtocolError(.badValue, "\"interactions\" is an object, like {\"tossable\": {\"destination\": [300, 200]}}")
            }
            interactions = table
            for (name, _) in table where name != "interactions" && members.contains(where: { $0.0 == name }) {
                throw ProtocolError(.badValue, "\(name) is given twice")
            }
        }
        var table = SettingsTable(minimumCapacity: members.count + interactions.count)
        for (key, value) in members where key != "interactions" {
            try refuseNUL(key, key)
            table.set(try settingsValue(value, key), for: key)
        }
        for (name, value) in interactions {
            try refuseNUL(name, name)
            table.set(try settingsValue(value, name), for: name)
        }
        do { return try ElementSettings.read(table, source: "element", limits: limits) } catch {
            throw ProtocolError(.badValue, error.message)
        }
    }

    /// No string may hold a NUL: an id "car\u0000" would print as "car" in logs and in C
    /// libraries, and could not be told from the element "car".
    /// In UTF-8 only U+0000 has a zero byte: the bytes are scanned in place, not decoded to
    /// scalars nor stepped through one index at a time (every key and string of an element).
    private static func refuseNUL(_ text: String, _ key: String) throws(ProtocolError) {
        let hasNUL = text.utf8.withContiguousStorageIfAvailable { $0.contains(0) } ?? text.utf8.contains(0)
        guard !hasNUL else { throw ProtocolError(.badValue, "\(key) contains a NUL character (\\u0000)") }
    }

    /// JSON as settings: a whole number is an integer, as a TOML integer would be.
    private static func settingsValue(_ value: JSONValue, _ key: String) throws(ProtocolError) -> SettingsValue {
        switch value {
        case .null: throw ProtocolError(.badValue, "\(key) cannot be null")
        case .bool(let b): return .bool(b)
        case .integer(let i): return try settingsValue(.number(Double(i)), key)
        case .number(let n):
            // The integer reading the number gives, if any.
            if let integer = JSONInput.number(n).integer { return .int(integer) }
            return .double(n)
        case .string(let s):
            try refuseNUL(s, key)
            return .string(s)
        case .array(let items):
            var values: [SettingsValue] = []
            values.reserveCapacity(items.count)
            for item in items { values.append(try settingsValue(item, key)) }
            return .array(values)
        case .object(let members):
            var table = SettingsTable(minimumCapacity: members.count)
            for (name, value) in members {
                try refuseNUL(name, name)
                table.set(try settingsValue(value, name), for: name)
            }
            return .table(table)
        }
    }
}
