import MotionCore
import TOMLKit

/// `add_element`'s element, read as the configuration file's `[[element]]` tables are, so
/// that the two cannot disagree on what an element may be.
enum ElementInput {
    /// The element's settings, or why they are not acceptable.
    static func settings(from input: JSONInput) throws(ProtocolError) -> ElementSettings {
        // The interactions may come as a table of their own, {"interactions": {"tossable": {…}}},
        // or beside the other keys, as in the configuration file.
        var members = input.object ?? [:]
        if let interactions = members.removeValue(forKey: "interactions") {
            guard let table = interactions.object else { throw ProtocolError("bad_value", "\"interactions\" is an object, like {\"tossable\": {\"destination\": [300, 200]}}") }
            for (name, settings) in table {
                guard members[name] == nil else { throw ProtocolError("bad_value", "\(name) is given twice") }
                members[name] = settings
            }
        }
        let table = try toml(.object(members))
        do { return try ElementSettings.read(table, source: "element") } catch {
            throw ProtocolError("bad_value", error.message)
        }
    }

    /// A client's JSON element as the TOML table the configuration loader reads.
    static func toml(_ input: JSONInput) throws(ProtocolError) -> TOMLTable {
        let table = TOMLTable()
        for (key, value) in input.object ?? [:] {
            try refuseNUL(key, key)
            table[key] = try tomlValue(value, key)
        }
        return table
    }

    /// TOMLKit passes strings to toml++ as C strings, which end at a NUL: "car\u0000" would
    /// become an element "car" that no request naming "car\u0000" could remove.
    private static func refuseNUL(_ text: String, _ key: String) throws(ProtocolError) {
        guard !text.unicodeScalars.contains("\u{0}") else { throw ProtocolError("bad_value", "\(key) contains a NUL character (\\u0000)") }
    }

    private static func tomlValue(_ input: JSONInput, _ key: String) throws(ProtocolError) -> TOMLValueConvertible {
        switch input {
        case .null: throw ProtocolError("bad_value", "\(key) cannot be null")
        case .bool(let b): return b
        case .number(let n):
            if let integer = input.integer { return integer }
            return n
        case .string(let s):
            try refuseNUL(s, key)
            return s
        case .array(let items):
            let array = TOMLArray()
            for item in items { array.append(try tomlValue(item, key)) }
            return array
        case .object: return try toml(input)
        }
    }
}
