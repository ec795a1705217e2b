/// A stream's number inside one engine: small and dense, so that per-stream state (the last
/// value, a dirty flag, a `seq` count, the subscribers) lives in arrays indexed by it rather
/// than in dictionaries keyed by names. Names are for the edges: the protocol and the
/// configuration.
///
/// The number of a removed stream is given to the next stream registered, so the tables
/// stay as small as the scene; whoever keeps per-stream state clears a stream's entries when
/// it goes (the engine says which in ``MotionEngine/onStreamsRemoved``).
public struct StreamID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The index into per-stream tables.
    public let index: Int

    /// A stream's number; catalogs make them, tests may too.
    public init(index: Int) { self.index = index }

    public static func < (lhs: StreamID, rhs: StreamID) -> Bool { lhs.index < rhs.index }
    public var description: String { "#\(index)" }
}

/// What a stream carries.
public enum StreamKind: Hashable, Sendable {
    /// A property's values (`card.position`).
    case value
    /// An element's recognizer's states (`card.drag`).
    case gesture
    /// The fingers on the screen (`screen.contacts`, ``MotionEngine/reportContacts(on:)``).
    case contacts
}

/// The names of an engine's streams and their numbers, both ways.
public struct StreamCatalog: Sendable {
    private var names: [String?] = []
    private var kinds: [StreamKind] = []
    private var numbers: [String: StreamID] = [:]
    private var free: [Int] = []

    /// An empty catalog.
    public init() {}

    /// How large a table indexed by ``StreamID/index`` must be.
    public var capacity: Int { names.count }

    /// How many streams there are.
    public var count: Int { numbers.count }

    /// Names a new stream; `name` must not be taken (a programming error).
    public mutating func register(_ name: String, kind: StreamKind) -> StreamID {
        let id = StreamID(index: free.last ?? names.count)
        // One lookup that both checks and inserts: a large scene names a hundred thousand
        // streams, and each name hashed twice showed in its restore.
        let taken = numbers.updateValue(id, forKey: name)
        precondition(taken == nil, "a stream is already called \(name)")
        if free.popLast() != nil {
            names[id.index] = name
            kinds[id.index] = kind
        } else {
            names.append(name)
            kinds.append(kind)
        }
        return id
    }

    /// Makes room for `count` more streams, so that registering them does not grow the
    /// tables step by step, rehashing every name at each step.
    public mutating func reserveCapacity(_ count: Int) {
        numbers.reserveCapacity(numbers.count + count)
        names.reserveCapacity(names.count + count)
        kinds.reserveCapacity(kinds.count + count)
    }

    /// Forgets a stream; its number goes to the next one registered.
    public mutating func remove(_ id: StreamID) {
        guard let name = names[id.index] else { return }
        numbers[name] = nil
        names[id.index] = nil
        free.append(id.index)
    }

    /// The stream called `name`, if there is one.
    public func id(named name: String) -> StreamID? { numbers[name] }

    /// The name of a stream that exists.
    public func name(of id: StreamID) -> String { names[id.index] ?? "" }

    /// What `id` carries; nil once it was removed.
    public func kind(of id: StreamID) -> StreamKind? { names[id.index] == nil ? nil : kinds[id.index] }

    /// Whether `id` names a stream now.
    public func contains(_ id: StreamID) -> Bool { id.index < names.count && names[id.index] != nil }
}
