import MotionConfiguration
import MotionCore
import MotionWire

/// The scene as motiond keeps it across a restart: the elements clients added and where
/// every element was at rest. It is what the state file holds; reading one back refuses
/// anything a damaged or hostile file could hold (see ``SceneStateError``) rather than
/// bringing a half-understood scene back.
///
/// The file (format 2) is JSON Lines, so that a change is written by appending a few lines
/// instead of the whole scene (see ``StateContents``): a header, one line per element, and a
/// line that closes each write with the number of elements it leaves:
///
///     {"motiond_state":2}
///     {"id":"card","added":null,"position":[310.5,190],"rotation":0,"scale":1,"destination":null}
///     {"elements":1}
///     {"id":"card","added":null,"position":[400,190],"rotation":0,"scale":1,"destination":null}
///     {"elements":1}
///
/// Format 1, one JSON object `{"version":1,"elements":[…]}`, is still read.
public struct SceneState: Equatable, Sendable {
    /// The format this code writes; it reads this one and format 1.
    public static let version = 2
    /// The most elements a scene may hold (``SceneLimits/maximumElements``): `add_element`
    /// refuses one more, and a file that holds more is refused.
    public static let maximumElements = SceneLimits.maximumElements
    /// The largest file read, in bytes.
    public static let maximumBytes = 16 << 20
    /// The largest scene, as the file writes it whole: half of ``maximumBytes``, so that as
    /// many bytes again of changes fit after it before it is rewritten. `add_element` refuses
    /// an element that would take the scene past it.
    public static let maximumSceneBytes = maximumBytes / 2
    /// The longest line of a format 2 file: an element whose `add_element` object filled a
    /// request line (64 KiB), even with every character escaped, fits.
    public static let maximumLineBytes = 256 << 10
    /// The longest id, in UTF-8 bytes: an element's (``SceneLimits/maximumIDBytes``).
    public static let maximumIDBytes = SceneLimits.maximumIDBytes
    /// The most JSON values (numbers, strings, arrays, objects…) the scene's elements may
    /// hold together: 10,000 elements of a hundred values each. Counted before parsing, so
    /// that a file of "0,0,0,…" is refused before it takes hundreds of megabytes.
    public static let maximumValues = 1_000_000
    /// The scales a file may give: wider than any gesture reaches, finite and positive.
    public static let scales: ClosedRange<Double> = 1e-6...1e6
    /// The rotations a file may give, in radians: many turns either way, and no more, so
    /// that nothing derived from them loses its precision.
    public static let rotations: ClosedRange<Double> = -1e6...1e6

    /// One element at rest.
    public struct Element: Equatable, Sendable {
        /// The element's id, as in the configuration or the `add_element` request.
        public var id: String
        /// The element object of the `add_element` request that made it, as the client sent
        /// it (object keys sorted once read back); nil for an element from the configuration.
        public var added: JSONValue?
        /// Where it rests, in screen pixels.
        public var position: Point
        /// Its rotation, in radians.
        public var rotation: Double
        /// Its scale, 1 being its configured size.
        public var scale: Double
        /// Where its tossable or attach interaction was taking it, when it has one.
        public var destination: Point?

        /// An element at rest.
        public init(id: String, added: JSONValue? = nil, position: Point, rotation: Double = 0, scale: Double = 1, destination: Point? = nil) {
            self.id = id
            self.added = added
            self.position = position
            self.rotation = rotation
            self.scale = scale
            self.destination = destination
        }

        /// Ids are compared as the bytes they are, not by Unicode's canonical equivalence
        /// (which Swift's `==` on strings uses).
        public static func == (a: Element, b: Element) -> Bool {
            a.id.utf8.elementsEqual(b.id.utf8) && a.added == b.added && a.position == b.position && a.rotation == b.rotation
                && a.scale == b.scale && a.destination == b.destination
        }
    }

    /// The elements, in the scene's order.
    public var elements: [Element]

    /// A state of these elements.
    public init(elements: [Element]) {
        self.elements = elements
    }

    // MARK: Writing

    /// The file's bytes, whole: the header, one line per element, the closing line.
    public var encoded: [UInt8] {
        var bytes = Array("{\"motiond_state\":\(Self.version)}\n".utf8)
        for element in elements {
            Self.json(element).encode(into: &bytes)
            bytes.append(UInt8(ascii: "\n"))
        }
        bytes += "{\"elements\":\(elements.count)}\n".utf8
        return bytes
    }

    /// One change between two states, as a line appended to the file says it.
    public enum Change: Equatable, Sendable {
        /// The element is now this: added, moved or changed (the whole element, its place in
        /// the order kept, a new one last).
        case put(Element)
        /// The element is gone.
        case remove(String)
    }

    /// What turns `old` into `new`, line by line; nil when the elements' order changed in a
    /// way appending cannot say (a reload, an element removed and added again), which a
    /// whole write does.
    public static func changes(from old: SceneState, to new: SceneState) -> [Change]? {
        var oldByID: [ElementKey: Element] = [:]
        oldByID.reserveCapacity(old.elements.count)
        for element in old.elements { oldByID[ElementKey(element.id)] = element }
        var newIDs = Set<ElementKey>()
        newIDs.reserveCapacity(new.elements.count)
        for element in new.elements { newIDs.insert(ElementKey(element.id)) }
        let kept = old.elements.filter { newIDs.contains(ElementKey($0.id)) }
        // The elements kept must lead the new order, in their old order; the new ones follow.
        guard kept.count <= new.elements.count,
              zip(kept, new.elements).allSatisfy({ $0.id.utf8.elementsEqual($1.id.utf8) }) else { return nil }
        var changes: [Change] = old.elements.filter { !newIDs.contains(ElementKey($0.id)) }.map { .remove($0.id) }
        for element in new.elements where oldByID[ElementKey(element.id)] != element {
            changes.append(.put(element))
        }
        return changes
    }

    /// The lines that append `changes` to a file, closed by the number of elements they leave.
    public static func encode(_ changes: [Change], leaving count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        for change in changes {
            switch change {
            case .put(let element): json(element).encode(into: &bytes)
            case .remove(let id): JSONValue.object([("removed", .string(id))]).encode(into: &bytes)
            }
            bytes.append(UInt8(ascii: "\n"))
        }
        bytes += "{\"elements\":\(count)}\n".utf8
        return bytes
    }

    /// An element as the file and `saved_scene` give it.
    public static func json(_ element: Element) -> JSONValue {
        .object([
            ("id", .string(element.id)),
            ("added", element.added ?? .null),
            ("position", json(element.position)),
            ("rotation", .number(element.rotation)),
            ("scale", .number(element.scale)),
            ("destination", element.destination.map(json) ?? .null),
        ])
    }

    private static func json(_ point: Point) -> JSONValue { .array([.number(point.x), .number(point.y)]) }

    // MARK: What a scene may hold

    /// What one element takes of the file's limits, at most: its line's bytes however its
    /// numbers are written, and its JSON values.
    public struct Cost: Equatable, Sendable {
        public var bytes: Int
        public var values: Int

        public init(bytes: Int = 0, values: Int = 0) {
            self.bytes = bytes
            self.values = values
        }

        /// The most an element of this id, added with this object (nil: from the
        /// configuration), can take: its line with every number at its longest.
        public init(id: String, added: JSONValue?) {
            // Counted as the encoding would be, without making it (``JSONValue/encodedSize``):
            // the value bound of `added`'s text is one more than its separators.
            let addedSize = added?.encodedSize ?? (bytes: 4, separators: 0)
            // The keys and punctuation, and six numbers of at most 24 characters each.
            bytes = JSONValue.encodedCount(string: id) + addedSize.bytes + 80 + 6 * 24 + 1
            values = 12 + 1 + addedSize.separators
        }

        public static func + (a: Cost, b: Cost) -> Cost { Cost(bytes: a.bytes + b.bytes, values: a.values + b.values) }
        public static func - (a: Cost, b: Cost) -> Cost { Cost(bytes: a.bytes - b.bytes, values: a.values - b.values) }
        public static func += (a: inout Cost, b: Cost) { a = a + b }
        public static func -= (a: inout Cost, b: Cost) { a = a - b }
    }

    /// Why a scene of `count` elements costing `cost` in all could not be kept in a file, or
    /// nil when it can: what `add_element` checks before it adds, so that every scene a
    /// client can make can also be saved and read back.
    public static func problem(elements count: Int, cost: Cost, largestLine: Int = 0) -> String? {
        if count > maximumElements { return "the scene would hold \(count) elements; it may hold at most \(maximumElements)" }
        if largestLine > maximumLineBytes {
            return "the element would take \(largestLine) bytes in the state file; an element may take at most \(maximumLineBytes)"
        }
        if cost.bytes > maximumSceneBytes {
            return "the scene would take up to \(cost.bytes) bytes in the state file; it may take at most \(maximumSceneBytes): remove some elements first"
        }
        if cost.values > maximumValues {
            return "the scene would hold \(cost.values) JSON values in the state file; it may hold at most \(maximumValues): remove some elements first"
        }
        return nil
    }

    // MARK: Reading

    /// The state in `bytes` (the last complete write of a format 2 file, or a format 1
    /// file), or why they are not one. Positions are checked against `limits`, as a client's
    /// `set` is: a file cannot place an element where a client could not.
    public init(reading bytes: some Collection<UInt8>, limits: ValueLimits) throws(SceneStateError) {
        self = try StateContents(reading: Array(bytes), limits: limits).state
    }

    /// Format 1: one JSON object, `{"version":1,"elements":[…]}`.
    init(readingVersion1 bytes: [UInt8], limits: ValueLimits) throws(SceneStateError) {
        // Counted before parsing: the parsed tree takes some forty bytes a value, so 16 MiB of
        // "0,0,0,…" would take hundreds of megabytes and seconds before the element count
        // could refuse it.
        guard Self.valueBound(bytes) <= Self.maximumValues else {
            throw SceneStateError(.tooLarge, "the file holds over \(Self.maximumValues) JSON values, the most a state file may have")
        }
        let input: JSONInput
        do { input = try JSONInput(parsing: bytes) } catch {
            throw SceneStateError(.notJSON, "not JSON at byte \(error.column): \(error.message)")
        }
        guard let top = input.object else { throw SceneStateError(.wrongType, "the file holds \(input.kind), not an object") }
        try Self.refuseUnknownKeys(top, known: ["version", "elements"], element: nil)
        guard let versionInput = top["version"] else { throw SceneStateError(.missingKey, "no version", key: "version") }
        guard versionInput.integer == 1 else {
            throw SceneStateError(.wrongVersion, "version \(versionInput.number.map(compactNumber) ?? versionInput.kind); this motiond reads versions 1 and \(Self.version)", key: "version")
        }
        guard let elementsInput = top["elements"] else { throw SceneStateError(.missingKey, "no elements", key: "elements") }
        guard let list = elementsInput.array else { throw SceneStateError(.wrongType, "elements is \(elementsInput.kind), not an array", key: "elements") }
        guard list.count <= Self.maximumElements else {
            throw SceneStateError(.tooManyElements, "\(list.count) elements; a state file holds at most \(Self.maximumElements)", key: "elements")
        }
        var seen: Set<ElementKey> = []
        var elements: [Element] = []
        elements.reserveCapacity(list.count)
        for (index, item) in list.enumerated() {
            let element = try Self.element(item, index: index, limits: limits)
            guard seen.insert(ElementKey(element.id)).inserted else {
                throw SceneStateError(.badID, "the id appears twice", element: index, id: element.id, key: "id")
            }
            elements.append(element)
        }
        self.elements = elements
    }

    /// At least the number of values in `bytes`, if they are JSON, counted without parsing:
    /// one for the whole, one more for each comma and each opening bracket outside strings.
    static func valueBound(_ bytes: some Collection<UInt8>) -> Int {
        var count = 1
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: ","), UInt8(ascii: "["), UInt8(ascii: "{"): count += 1
            default: break
            }
        }
        return count
    }

    private static let elementKeys: Set<String> = ["id", "added", "position", "rotation", "scale", "destination"]

    static func element(_ input: JSONInput, index: Int, limits: ValueLimits) throws(SceneStateError) -> Element {
        guard let members = input.object else { throw SceneStateError(.wrongType, "the element is \(input.kind), not an object", element: index) }
        guard let idInput = members["id"] else { throw SceneStateError(.missingKey, "no id", element: index, key: "id") }
        guard let id = idInput.string else { throw SceneStateError(.wrongType, "id is \(idInput.kind), not a string", element: index, key: "id") }
        if let problem = idProblem(id) { throw SceneStateError(.badID, problem, element: index, key: "id") }

        func error(_ kind: SceneStateError.Kind, _ message: String, _ key: String) -> SceneStateError {
            SceneStateError(kind, message, element: index, id: id, key: key)
        }
        func required(_ key: String) throws(SceneStateError) -> JSONInput {
            guard let value = members[key] else { throw error(.missingKey, "no \(key)", key) }
            return value
        }
        func number(_ key: String, within range: ClosedRange<Double>) throws(SceneStateError) -> Double {
            let value = try required(key)
            guard let number = value.number else { throw error(.wrongType, "\(key) is \(value.kind), not a number", key) }
            guard range.contains(number) else { throw error(.outOfRange, "\(key) must be within \(compactNumber(range.lowerBound))…\(compactNumber(range.upperBound)), not \(compactNumber(number))", key) }
            return number
        }
        func point(_ key: String, _ value: JSONInput) throws(SceneStateError) -> Point {
            guard let pair = value.array, pair.count == 2, let x = pair[0].number, let y = pair[1].number else {
                throw error(.wrongType, "\(key) is \(value.kind), not a point [x, y]", key)
            }
            let point = Point(x: x, y: y)
            if let problem = limits.problem(position: point) { throw error(.outOfRange, "\(key): \(problem)", key) }
            return point
        }

        guard let unknown = members.keys.filter({ !elementKeys.contains($0) }).min() else {
            let added = try required("added")
            guard added == .null || added.object != nil else { throw error(.wrongType, "added is \(added.kind), not an object or null", "added") }
            // An element is added again under its added object's id: one that says another
            // id than the element's would bring back something else than what was saved.
            if added != .null {
                guard let addedID = added["id"] else { throw error(.badID, "added has no id; it must be the element's", "added") }
                guard let text = addedID.string, text.utf8.elementsEqual(id.utf8) else {
                    throw error(.badID, "added.id is \(addedID.string.map { "\"\($0)\"" } ?? addedID.kind), not the element's id", "added")
                }
            }
            let destination = try required("destination")
            return Element(
                id: id,
                // .none, not nil: JSONValue is ExpressibleByNilLiteral, and nil here would
                // be JSONValue.null, an `added` that is there.
                added: added == .null ? .none : .some(JSONValue(added)),
                position: try point("position", try required("position")),
                rotation: try number("rotation", within: rotations),
                scale: try number("scale", within: scales),
                destination: destination == .null ? nil : try point("destination", destination))
        }
        throw error(.unknownKey, "an unknown key \"\(unknown)\"", unknown)
    }

    /// Why `id` cannot be an element's id, or nil: the rule of the configuration file and
    /// `add_element` (``ElementSettings/idProblem(_:)``), so that a file cannot bring back an id
    /// they would refuse.
    private static func idProblem(_ id: String) -> String? {
        ElementSettings.idProblem(id)
    }

    static func refuseUnknownKeys(_ members: [String: JSONInput], known: Set<String>, element: Int?) throws(SceneStateError) {
        if let unknown = members.keys.filter({ !known.contains($0) }).min() {
            throw SceneStateError(.unknownKey, "an unknown key \"\(unknown)\"", element: element, key: unknown)
        }
    }
}

/// An element's id as a key of a table: two are one only when their bytes are, as
/// ``SceneState/Element`` compares ids, and neither hashing nor comparing copies the bytes
/// (a restore looks up thousands of ids).
struct ElementKey: Hashable {
    let id: String

    init(_ id: String) {
        self.id = id
    }

    static func == (a: ElementKey, b: ElementKey) -> Bool { a.id.utf8.elementsEqual(b.id.utf8) }

    func hash(into hasher: inout Hasher) {
        var id = id
        id.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}

/// Why bytes are not a state file this motiond reads, and where: the element (its index,
/// and its id once known) and the key.
public struct SceneStateError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The kinds of refusal, for code that treats them apart (and for tests).
    public enum Kind: String, Sendable {
        case tooLarge, notJSON, wrongType, wrongVersion, missingKey, unknownKey, outOfRange, badID, tooManyElements
        /// Not a state file at all (a configuration given as the state path, say): motiond
        /// leaves such a file alone instead of setting it aside and replacing it.
        case notAStateFile
        /// The lines contradict each other: a count that is not the number of elements, an
        /// element removed that is not there.
        case inconsistent
    }

    /// What kind of refusal it is.
    public var kind: Kind
    /// What is wrong, in words.
    public var message: String
    /// The index of the element, from 0, when the problem is inside one.
    public var element: Int?
    /// The element's id, when it was read before the problem.
    public var id: String?
    /// The key the problem is at.
    public var key: String?
    /// The line of a format 2 file the problem is on, from 1.
    public var line: Int?

    /// A refusal of `kind`, said in `message`, at the element and key given.
    public init(_ kind: Kind, _ message: String, element: Int? = nil, id: String? = nil, key: String? = nil) {
        self.kind = kind
        self.message = message
        self.element = element
        self.id = id
        self.key = key
    }

    /// The place, then the reason, as a log line says it.
    public var description: String {
        var place: [String] = []
        if let line { place.append("line \(line)") }
        if let element { place.append("element \(element)" + (id.map { " (\"\($0)\")" } ?? "")) }
        if let key { place.append("key \"\(key)\"") }
        return place.isEmpty ? message : "\(place.joined(separator: ", ")): \(message)"
    }
}

extension JSONValue {
    /// A value as read, its object members sorted by key, so the same input always gives
    /// the same value and the same bytes written back.
    init(_ input: JSONInput) {
        switch input {
        case .null: self = .null
        case .bool(let value): self = .bool(value)
        case .number(let value): self = .number(value)
        case .string(let value): self = .string(value)
        case .array(let values): self = .array(values.map(JSONValue.init))
        case .object(let members): self = .object(members.sorted { $0.key < $1.key }.map { ($0.key, JSONValue($0.value)) })
        }
    }
}
