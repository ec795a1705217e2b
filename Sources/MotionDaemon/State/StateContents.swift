import MotionCore
import MotionWire

/// What a state file's bytes hold: the scene as of its last complete write, and how the
/// bytes divide between the scene written whole and the changes appended since, which
/// decides when the keeper writes the file whole again.
///
/// A format 2 file is read line by line. Each write ends with its `{"elements":N}` line, so
/// a write a crash or a full disk cut short is recognised: the lines after the last such line
/// are ignored (``cutShortBytes``) and the scene is the one the write before left. Every
/// complete line before it is read strictly: a line that is not what motiond writes, a count
/// that does not add up, is a refusal, as in format 1.
public struct StateContents: Equatable, Sendable {
    /// The scene as of the last complete write.
    public var state: SceneState
    /// The format the file is in: 1 (one JSON object) or 2 (lines).
    public var format: Int
    /// The bytes of the first write, the scene written whole (the whole file in format 1).
    public var wholeBytes: Int
    /// The bytes of the complete writes appended after it.
    public var appendedBytes: Int
    /// The bytes after the last complete write: a write cut short, ignored.
    public var cutShortBytes: Int

    /// How a file's first bytes say what it is. Anything else at the state path (a
    /// configuration given by mistake, a log) is not motiond's to set aside or replace.
    static let headers: [(prefix: [UInt8], format: Int)] = [
        (Array(#"{"motiond_state":"#.utf8), 2),
        (Array(#"{"version":"#.utf8), 1),
    ]

    /// Whether `bytes` begin as a state file of some format does, however damaged the rest.
    public static func looksLikeStateFile(_ bytes: some Collection<UInt8>) -> Bool {
        headers.contains { header in bytes.starts(with: header.prefix) || header.prefix.starts(with: bytes) && !bytes.isEmpty }
    }

    /// The contents of `bytes`, or why they are not a state file this motiond reads.
    public init(reading bytes: [UInt8], limits: ValueLimits) throws(SceneStateError) {
        // What the file is comes first: a large file that is not a state file is left alone,
        // not set aside as a state file too large.
        guard let header = Self.headers.first(where: { bytes.starts(with: $0.prefix) }) else {
            if Self.looksLikeStateFile(bytes) {
                throw SceneStateError(.notJSON, "the file ends within its first line (\(bytes.count) bytes)")
            }
            throw SceneStateError(.notAStateFile, "it does not begin as a state file does ({\"motiond_state\": or {\"version\":)")
        }
        guard bytes.count <= SceneState.maximumBytes else {
            throw SceneStateError(.tooLarge, "the file is over \(SceneState.maximumBytes) bytes, the most a state file may have")
        }
        if header.format == 1 {
            self.init(state: try SceneState(readingVersion1: bytes, limits: limits), format: 1, wholeBytes: bytes.count, appendedBytes: 0, cutShortBytes: 0)
            return
        }
        var reader = StateLineReader(limits: limits)
        var lineNumber = 0
        var start = 0
        var wholeBytes: Int?
        var committedEnd = 0
        while let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) {
            lineNumber += 1
            let line = bytes[start..<newline]
            do throws(SceneStateError) {
                if lineNumber == 1 {
                    try reader.header(line)
                } else if try reader.line(line) {
                    if wholeBytes == nil { wholeBytes = newline + 1 }
                    committedEnd = newline + 1
                }
            } catch {
                throw error.at(line: lineNumber)
            }
            start = newline + 1
        }
        guard let wholeBytes else {
            throw SceneStateError(.notJSON, "the file ends before its first write is complete (no {\"elements\":N} line after line \(lineNumber))")
        }
        self.init(state: reader.committed, format: 2, wholeBytes: wholeBytes, appendedBytes: committedEnd - wholeBytes,
                  cutShortBytes: bytes.count - committedEnd)
    }

    init(state: SceneState, format: Int, wholeBytes: Int, appendedBytes: Int, cutShortBytes: Int) {
        self.state = state
        self.format = format
        self.wholeBytes = wholeBytes
        self.appendedBytes = appendedBytes
        self.cutShortBytes = cutShortBytes
    }

    /// Checks that `bytes`, appended to a file whose scene is `state`, read back as
    /// `expected` under the same rules and limits a start reads them: the keeper never
    /// appends what the next start would refuse.
    static func check(appending bytes: [UInt8], to state: SceneState, gives expected: SceneState, limits: ValueLimits) throws(SceneStateError) {
        var reader = StateLineReader(limits: limits, starting: state)
        var start = 0
        var ended = false
        while let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) {
            ended = try reader.line(bytes[start..<newline])
            start = newline + 1
        }
        guard ended, start == bytes.count else { throw SceneStateError(.inconsistent, "the lines appended do not end with {\"elements\":N}") }
        guard reader.committed == expected else { throw SceneStateError(.inconsistent, "the lines appended do not give the scene they were made from") }
    }
}

/// Reads a format 2 file's lines in order, keeping the scene as of the last complete write
/// and the changes of the write in progress.
struct StateLineReader {
    private let limits: ValueLimits
    /// The elements as of the last complete write, in order; and for each id, where it is and
    /// how many JSON values its line holds (one table, one lookup an element).
    private var elements: [SceneState.Element?] = []
    private var places: [ElementKey: (place: Int, values: Int)] = [:]
    private var totalValues = 0
    private var count = 0
    /// The changes read since the last complete write.
    private var pending: [SceneState.Change] = []
    private var pendingValues: [Int] = []
    /// Whether the first write (the scene whole) is complete.
    private var hasWhole = false
    /// Elements read so far, for the errors' element index.
    private var index = 0

    init(limits: ValueLimits) {
        self.limits = limits
    }

    /// A reader that has read `state` as its first write, for checking lines appended to it.
    init(limits: ValueLimits, starting state: SceneState) {
        self.limits = limits
        for element in state.elements {
            let cost = SceneState.Cost(id: element.id, added: element.added)
            apply(.put(element), values: cost.values)
        }
        hasWhole = true
    }

    /// The scene as of the last complete write.
    var committed: SceneState { SceneState(elements: elements.compactMap { $0 }) }

    mutating func header(_ line: ArraySlice<UInt8>) throws(SceneStateError) {
        let input = try Self.parse(line)
        guard let members = input.object else { throw SceneStateError(.wrongType, "the header is \(input.kind), not an object") }
        try SceneState.refuseUnknownKeys(members, known: ["motiond_state"], element: nil)
        guard members["motiond_state"]?.integer == SceneState.version else {
            throw SceneStateError(.wrongVersion, "format \(members["motiond_state"].map { $0.number.map(compactNumber) ?? $0.kind } ?? "?"); this motiond reads formats 1 and \(SceneState.version)", key: "motiond_state")
        }
    }

    /// Reads one line (without its newline); true when it completed a write.
    mutating func line(_ line: ArraySlice<UInt8>) throws(SceneStateError) -> Bool {
        guard line.count <= SceneState.maximumLineBytes else {
            throw SceneStateError(.tooLarge, "the line is \(line.count) bytes; a line holds at most \(SceneState.maximumLineBytes)")
        }
        let lineValues = SceneState.valueBound(line)
        let input = try Self.parse(line)
        guard let members = input.object else { throw SceneStateError(.wrongType, "the line holds \(input.kind), not an object") }
        if let countInput = members["elements"] {
            try SceneState.refuseUnknownKeys(members, known: ["elements"], element: nil)
            guard let expected = countInput.integer else { throw SceneStateError(.wrongType, "elements is \(countInput.kind), not a count", key: "elements") }
            try commit(expecting: expected)
            return true
        }
        if let removed = members["removed"] {
            try SceneState.refuseUnknownKeys(members, known: ["removed"], element: nil)
            guard hasWhole else { throw SceneStateError(.inconsistent, "an element is removed before the scene was written whole", key: "removed") }
            guard let id = removed.string else { throw SceneStateError(.wrongType, "removed is \(removed.kind), not an id", key: "removed") }
            pending.append(.remove(id))
            pendingValues.append(0)
            return false
        }
        let element = try SceneState.element(input, index: index, limits: limits)
        index += 1
        pending.append(.put(element))
        pendingValues.append(lineValues)
        return false
    }

    /// Applies the write in progress, which says it leaves `expected` elements.
    private mutating func commit(expecting expected: Int) throws(SceneStateError) {
        for (change, lineValues) in zip(pending, pendingValues) {
            if case .remove(let id) = change, places[ElementKey(id)] == nil {
                throw SceneStateError(.inconsistent, "\"\(id)\" is removed but there is no such element", key: "removed")
            }
            let added = apply(change, values: lineValues)
            if case .put(let element) = change, !hasWhole, !added {
                // The scene written whole names each element once.
                throw SceneStateError(.badID, "the id appears twice", id: element.id, key: "id")
            }
            guard count <= SceneState.maximumElements else {
                throw SceneStateError(.tooManyElements, "over \(SceneState.maximumElements) elements; a state file holds at most \(SceneState.maximumElements)")
            }
            guard totalValues <= SceneState.maximumValues else {
                throw SceneStateError(.tooLarge, "the elements hold over \(SceneState.maximumValues) JSON values, the most a state file may have")
            }
        }
        guard count == expected else {
            throw SceneStateError(.inconsistent, "the write says it leaves \(expected) elements, but there are \(count)", key: "elements")
        }
        pending = []
        pendingValues = []
        hasWhole = true
    }

    /// Applies one change; whether it put an element that was not there.
    @discardableResult
    private mutating func apply(_ change: SceneState.Change, values lineValues: Int) -> Bool {
        switch change {
        case .put(let element):
            let key = ElementKey(element.id)
            guard let old = places.updateValue((elements.count, lineValues), forKey: key) else {
                totalValues += lineValues
                elements.append(element)
                count += 1
                return true
            }
            // There already: it keeps its place.
            places[key] = (old.place, lineValues)
            totalValues += lineValues - old.values
            elements[old.place] = element
            return false
        case .remove(let id):
            guard let old = places.removeValue(forKey: ElementKey(id)) else { return false }
            elements[old.place] = nil
            totalValues -= old.values
            count -= 1
            return false
        }
    }

    private static func parse(_ line: ArraySlice<UInt8>) throws(SceneStateError) -> JSONInput {
        do { return try JSONInput(parsing: line) } catch {
            throw SceneStateError(.notJSON, "not JSON at byte \(error.column): \(error.message)")
        }
    }
}

extension SceneStateError {
    /// The error, placed at a line of the file.
    func at(line: Int) -> SceneStateError {
        var placed = self
        placed.line = line
        return placed
    }
}
