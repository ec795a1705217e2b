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
    case table(SettingsTable)
    /// A TOML date or time, which no setting takes: kept only to be named in an error.
    case dateTime(String)

    var string: String? { if case .string(let s) = self { return s }; return nil }
    var int: Int? { if case .int(let i) = self { return i }; return nil }
    var bool: Bool? { if case .bool(let b) = self { return b }; return nil }
    var array: [SettingsValue]? { if case .array(let a) = self { return a }; return nil }
    var table: SettingsTable? { if case .table(let t) = self { return t }; return nil }

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
    static func table(_ table: TOMLTable) -> SettingsTable {
        var members = SettingsTable()
        for key in table.keys {
            if let value = table[key] { members.set(SettingsValue(toml: value), for: key) }
        }
        return members
    }
}

/// A table's members: each key once, with its value, in the order first set. What a
/// dictionary would be, looked up by comparing keys instead of hashing them.
///
/// The readers (``TableReader``) ask a table for every key it could have, twenty and more
/// for an element, most of them absent; the tables themselves hold a handful. Comparing
/// an asked key with a few short ones costs a fraction of hashing it, and a restore reads
/// thousands of elements. A table of more than ``indexedFrom`` members (a `snap_points` of
/// thousands of names, from a hostile client) is also indexed, so that reading it stays
/// linear. Keys compare as `String`'s `==` does, as a dictionary's do.
package struct SettingsTable: Equatable, Sendable {
    package struct Member: Sendable {
        package let key: String
        package var value: SettingsValue
    }

    /// The members in the order their keys were first set.
    package private(set) var members: [Member] = []
    /// Each key's position in ``members``, once there are more than ``indexedFrom``.
    private var index: [String: Int]?
    /// Past this many members, lookups go through an index instead of comparing keys.
    static let indexedFrom = 16

    package init() {}

    package init(minimumCapacity: Int) {
        members.reserveCapacity(minimumCapacity)
    }

    package var count: Int { members.count }
    package var isEmpty: Bool { members.isEmpty }
    package var keys: LazyMapSequence<[Member], String> { members.lazy.map(\.key) }

    /// Where `key`'s member is in ``members``.
    func position(of key: String) -> Int? {
        if let index { return index[key] }
        for position in members.indices where members[position].key == key { return position }
        return nil
    }

    package subscript(key: String) -> SettingsValue? {
        position(of: key).map { members[$0].value }
    }

    /// Sets `key` to `value`: a key already there keeps its place, as a dictionary's would.
    package mutating func set(_ value: SettingsValue, for key: String) {
        if let position = position(of: key) {
            members[position].value = value
            return
        }
        members.append(Member(key: key, value: value))
        if index != nil {
            index?[key] = members.count - 1
        } else if members.count > Self.indexedFrom {
            index = Dictionary(uniqueKeysWithValues: members.indices.map { (members[$0].key, $0) })
        }
    }

    /// The same keys with equal values, in whatever order, as dictionaries compare.
    package static func == (a: SettingsTable, b: SettingsTable) -> Bool {
        a.count == b.count && a.members.allSatisfy { b[$0.key] == $0.value }
    }
}
