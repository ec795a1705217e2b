/// The ops of docs/protocol.md.
enum Operation: String, CaseIterable {
    case subscribe, unsubscribe, list, get, set, elements
    case addElement = "add_element"
    case removeElement = "remove_element"
    case devices, stats, auth

    /// Whether the op changes the scene, and so needs control. Checked before the
    /// arguments: a client without control learns that first, whatever else is wrong.
    var changesScene: Bool { self == .set || self == .addElement || self == .removeElement }

    /// The ops, as the error for an unknown one lists them.
    static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }
}

/// One client request with its arguments checked and typed: what the dispatcher acts on.
/// Every argument error (a missing key, a wrong type, a list too long) is found here, in
/// one place, before anything is looked up.
enum Request: Equatable {
    case subscribe([String])
    case unsubscribe([String])
    case list
    case get(stream: String)
    /// The value is checked against the stream's shape when the stream is known.
    case set(stream: String, value: JSONInput)
    case elements
    /// The element as sent; ``ElementInput`` reads it as the configuration file's tables are.
    case addElement(JSONInput)
    case removeElement(String)
    case devices
    case stats
    case auth(token: String)

    /// What a line holds: the request's `id` when it has a usable one, and the request,
    /// or why it is not one (with the op when that much was readable).
    struct Decoded {
        var id: Int?
        var operation: Operation?
        var request: Result<Request, ProtocolError>
    }

    /// Decodes one line, as the bytes came.
    static func decode(_ line: some Collection<UInt8>) -> Decoded {
        let input: JSONInput
        do { input = try JSONInput(parsing: line) } catch {
            return Decoded(id: nil, request: .failure(ProtocolError("bad_json", error.description)))
        }
        guard case .object = input else {
            return Decoded(id: nil, request: .failure(ProtocolError("bad_json", "a request is a JSON object, not \(input.kind)")))
        }
        guard let idValue = input["id"] else {
            return Decoded(id: nil, request: .failure(ProtocolError("bad_request", "a request needs an \"id\": an integer the reply will carry")))
        }
        guard let id = idValue.integer else {
            return Decoded(id: nil, request: .failure(ProtocolError("bad_request", "\"id\" must be an integer, not \(idValue.kind)")))
        }
        guard let name = input["op"]?.string else {
            return Decoded(id: id, request: .failure(ProtocolError("bad_request", "a request needs an \"op\" string: \(Operation.names)")))
        }
        guard let operation = Operation(rawValue: name) else {
            return Decoded(id: id, request: .failure(ProtocolError("unknown_op", "no op is called '\(name)'; the ops are \(Operation.names)")))
        }
        do {
            return Decoded(id: id, operation: operation, request: .success(try arguments(of: operation, in: input)))
        } catch {
            return Decoded(id: id, operation: operation, request: .failure(error))
        }
    }

    private static func arguments(of operation: Operation, in input: JSONInput) throws(ProtocolError) -> Request {
        switch operation {
        case .subscribe: return .subscribe(try patterns(input))
        case .unsubscribe: return .unsubscribe(try patterns(input))
        case .list: return .list
        case .get: return .get(stream: try string(input, "stream"))
        case .set:
            let stream = try string(input, "stream")
            guard let value = input["value"] else { throw ProtocolError("bad_request", "set needs a \"value\"") }
            return .set(stream: stream, value: value)
        case .elements: return .elements
        case .addElement:
            guard let element = input["element"], case .object = element else {
                throw ProtocolError("bad_request", "add_element needs an \"element\" object: {\"id\", \"center\", \"size\", \"interactions\"?}")
            }
            return .addElement(element)
        case .removeElement: return .removeElement(try string(input, "element"))
        case .devices: return .devices
        case .stats: return .stats
        case .auth: return .auth(token: try string(input, "token"))
        }
    }

    /// The request's `streams`, within ``SubscriptionLimits``, checked before any matching;
    /// a pattern given twice counts once.
    private static func patterns(_ input: JSONInput) throws(ProtocolError) -> [String] {
        guard let list = input["streams"]?.array, !list.isEmpty else {
            throw ProtocolError("bad_request", "\"streams\" must be a non-empty array of stream names or globs, like [\"card.*\"]")
        }
        guard list.count <= SubscriptionLimits.patternsPerRequest else {
            throw ProtocolError("bad_request", "\"streams\" holds \(list.count) patterns; a request may hold at most \(SubscriptionLimits.patternsPerRequest)")
        }
        var patterns: [String] = []
        for item in list {
            guard let pattern = item.string else { throw ProtocolError("bad_request", "\"streams\" holds strings, not \(item.kind)") }
            guard pattern.utf8.count <= SubscriptionLimits.patternLength else {
                throw ProtocolError("bad_request", "a pattern is \(pattern.utf8.count) bytes long; at most \(SubscriptionLimits.patternLength) are allowed")
            }
            if !patterns.contains(pattern) { patterns.append(pattern) }
        }
        return patterns
    }

    private static func string(_ input: JSONInput, _ key: String) throws(ProtocolError) -> String {
        guard let value = input[key] else { throw ProtocolError("bad_request", "this op needs \"\(key)\"") }
        guard let string = value.string else { throw ProtocolError("bad_request", "\"\(key)\" must be a string, not \(value.kind)") }
        return string
    }
}

/// An error reply: a code from docs/protocol.md and a message for people.
public struct ProtocolError: Error, Equatable {
    public var code: String
    public var message: String

    public init(_ code: String, _ message: String) {
        self.code = code
        self.message = message
    }
}
