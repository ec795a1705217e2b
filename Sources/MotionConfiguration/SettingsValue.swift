import TOMLKit

/// A configuration value, whatever it was written in: the configuration file's TOML, or a
/// client's JSON (`add_element`). The readers (``TableReader``) read only this, so an element
/// means the same from either, with the same checks and the same errors.
///
/// Not `indirect`, as ``JSONInput`` is not: arrays and tables hold their values already.
package enum SettingsValue: Equatable, Sendable {
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([SettingsValue])
    case table([String: SettingsValue])
    /// A TOML date or time, which no setting takes: kept only to be named in an error.
    case dateTime(String)

    var string: String? { if case .string(let s) = self { return s }; return nil }
    var int: Int? { if case .int(let i) = self { return i }; return nil }
    var bool: Bool? { if case .bool(let b) = self { return b }; return nil }
    var array: [SettingsValue]? { if case .array(let a) = self { return a }; return nil }
    var table: [String: SettingsValue]? { if case .table(let t) = self { return t }; return nil }

    /// A number, integer or not; nil for anything else and for what is not finite.
    var number: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d.isFinite ? d : nil
        default: return nil
        }
    }

    /// The first nan or infinity in the value, its arrays or tables, if any.
    var firstNonFinite: Double? {
        switch self {
        case .double(let d): return d.isFinite ? nil : d
        case .array(let array): return array.lazy.compactMap(\.firstNonFinite).first
        case .table(let table): return table.keys.sorted().lazy.compactMap { table[$0]?.firstNonFinite }.first
        default: return nil
        }
    }

    /// For errors: "the string \"x\"", "the integer 3", "a table".
    var description: String {
        switch self {
        case .string(let s): return "the string \"\(s)\""
        case .int(let i): return "the integer \(i)"
        case .double(let d): return "the number \(d)"
        case .bool(let b): return "\(b)"
        case .table: return "a table"
        case .array: return "an array"
        case .dateTime: return "a date or time"
        }
    }
}

extension SettingsValue {
    /// A TOML value as read by TOMLKit.
    init(toml value: TOMLValueConvertible) {
        switch value.type {
        case .string: self = .string(value.string ?? "")
        case .int: self = .int(value.int ?? 0)
        case .double: self = .double(value.double ?? .nan)
        case .bool: self = .bool(value.bool ?? false)
        case .table: self = .table(Self.table(value.table ?? TOMLTable()))
        case .array: self = .array((value.array.map { Array($0) } ?? []).map { SettingsValue(toml: $0) })
        default: self = .dateTime("\(value)")
        }
    }

    /// A TOML table's members.
    static func table(_ table: TOMLTable) -> [String: SettingsValue] {
        var members: [String: SettingsValue] = [:]
        for key in table.keys {
            if let value = table[key] { members[key] = SettingsValue(toml: value) }
        }
        return members
    }
}
