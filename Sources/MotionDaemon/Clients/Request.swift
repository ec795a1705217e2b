import MotionCore
import MotionWire

/// The ops of docs/protocol.md.
enum Operation: String, CaseIterable {
    case subscribe, unsubscribe, list, get, set, elements
    case addElement = "add_element"
    case removeElement = "remove_element"
    case devices, stats, health, metrics, auth
    case calibrate, calibration, reload
    case resetScene = "reset_scene"
    case savedScene = "saved_scene"
    case lock, unlock

    /// Whether the op changes the scene or the daemon, and so needs control. Checked before
    /// the arguments: a client without control learns that first, whatever else is wrong.
    var needsControl: Bool { [.set, .addElement, .removeElement, .calibrate, .reload, .resetScene, .lock, .unlock].contains(self) }

    /// Whether the op, done, changes what the state file keeps: the scene's elements and
    /// values (a lock is not kept, a calibration goes to its own drop-in).
    var changesScene: Bool { [.set, .addElement, .removeElement, .reload, .resetScene].contains(self) }

    /// The ops, as the error for an unknown one lists them.
    static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }
}

/// One client request with its arguments checked and typed: what the dispatcher acts on.
/// Every argument error (a missing key, a wrong type, a list too long) is found here, in
/// one place, before anything is looked up.
enum Request: Equatable {
    /// `optional`: patterns that match no stream yet are held rather than refused, for a
    /// client that follows an element before it exists.
    case subscribe([String], optional: Bool)
    case unsubscribe([String])
    /// Every stream, or those matching the patterns given.
    case list([String]?)
    case get(stream: String)
    /// The value is checked against the stream's shape when the stream is known.
    case set(stream: String, value: JSONInput)
    case elements
    /// The element as sent; ``ElementInput`` reads it as the configuration file's tables are.
    case addElement(JSONInput)
    case removeElement(String)
    case devices
    case stats
    /// Whether the daemon is doing its job (``HealthReport``).
    case health
    /// The Prometheus metrics, as text.
    case metrics
    case auth(token: String)
    /// Starts, moves or ends the calibration of a touchscreen.
    case calibrate(CalibrationRequest)
    case calibration
    case reload
    /// Makes the scene anew from the configuration, forgetting what clients added and moved.
    case resetScene
    /// The state file and what it holds.
    case savedScene
    /// Locks touches out for `seconds`, for cleaning the screen.
    case lock(seconds: Double)
    case unlock

    /// Whether the daemon itself carries it out and answers (``Daemon/carryOut(_:)``), since
    /// what it needs (the configuration file, the metrics, the state file) is the daemon's,
    /// not the ops' (``RequestDispatcher``).
    var isTheDaemons: Bool {
        switch self {
        case .reload, .resetScene, .health, .metrics, .savedScene, .lock, .unlock: true
        default: false
        }
    }

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
            return Decoded(id: nil, request: .failure(ProtocolError(.badJSON, error.description)))
        }
        guard case .object = input else {
            return Decoded(id: nil, request: .failure(ProtocolError(.badJSON, "a request is a JSON object, not \(input.kind)")))
        }
        guard let idValue = input["id"] else {
            return Decoded(id: nil, request: .failure(ProtocolError(.badRequest, "a request needs an \"id\": an integer the reply will carry")))
        }
        guard let id = idValue.integer else {
            return Decoded(id: nil, request: .failure(ProtocolError(.badRequest, "\"id\" must be an integer, not \(idValue.kind)")))
        }
        guard let name = input["op"]?.string else {
            return Decoded(id: id, request: .failure(ProtocolError(.badRequest, "a request needs an \"op\" string: \(Operation.names)")))
        }
        guard let operation = Operation(rawValue: name) else {
            return Decoded(id: id, request: .failure(ProtocolError(.unknownOp, "no op is called '\(name)'; the ops are \(Operation.names)")))
        }
        do {
            return Decoded(id: id, operation: operation, request: .success(try arguments(of: operation, in: input)))
        } catch {
            return Decoded(id: id, operation: operation, request: .failure(error))
        }
    }

    private static func arguments(of operation: Operation, in input: JSONInput) throws(ProtocolError) -> Request {
        switch operation {
        case .subscribe: return .subscribe(try patterns(input), optional: try flag(input, "optional"))
        case .unsubscribe: return .unsubscribe(try patterns(input))
        case .list: return .list(input["streams"] == nil ? nil : try patterns(input))
        case .get: return .get(stream: try string(input, "stream"))
        case .set:
            let stream = try string(input, "stream")
            guard let value = input["value"] else { throw ProtocolError(.badRequest, "set needs a \"value\"") }
            return .set(stream: stream, value: value)
        case .elements: return .elements
        case .addElement:
            guard let element = input["element"], case .object = element else {
                throw ProtocolError(.badRequest, "add_element needs an \"element\" object: {\"id\", \"center\", \"size\", \"interactions\"?}")
            }
            return .addElement(element)
        case .removeElement: return .removeElement(try string(input, "element"))
        case .devices: return .devices
        case .stats: return .stats
        case .health: return .health
        case .metrics: return .metrics
        case .auth: return .auth(token: try string(input, "token"))
        case .calibrate: return .calibrate(try CalibrationRequest(input))
        case .calibration: return .calibration
        case .reload: return .reload
        case .resetScene: return .resetScene
        case .savedScene: return .savedScene
        case .lock: return .lock(seconds: try lockSeconds(input))
        case .unlock: return .unlock
        }
    }

    /// How long `lock` lasts: `for`, in seconds, or ``LockLimits/defaultSeconds``; never for
    /// good, so that a lock nobody ends does not leave a kiosk dead.
    private static func lockSeconds(_ input: JSONInput) throws(ProtocolError) -> Double {
        guard let value = input["for"] else { return LockLimits.defaultSeconds }
        guard let seconds = value.number, LockLimits.seconds.contains(seconds) else {
            throw ProtocolError(.badRequest, "\"for\" is a number of seconds from \(Int(LockLimits.seconds.lowerBound)) to \(Int(LockLimits.seconds.upperBound)), not \(value.number.map(compactNumber) ?? value.kind)")
        }
        return seconds
    }

    /// The request's `streams`, within ``SubscriptionLimits``, checked before any matching;
    /// a pattern given twice counts once.
    private static func patterns(_ input: JSONInput) throws(ProtocolError) -> [String] {
        guard let list = input["streams"]?.array, !list.isEmpty else {
            throw ProtocolError(.badRequest, "\"streams\" must be a non-empty array of stream names or globs, like [\"card.*\"]")
        }
        guard list.count <= SubscriptionLimits.patternsPerRequest else {
            throw ProtocolError(.badRequest, "\"streams\" holds \(list.count) patterns; a request may hold at most \(SubscriptionLimits.patternsPerRequest)")
        }
        var patterns: [String] = []
        for item in list {
            guard let pattern = item.string else { throw ProtocolError(.badRequest, "\"streams\" holds strings, not \(item.kind)") }
            guard pattern.utf8.count <= SubscriptionLimits.patternLength else {
                throw ProtocolError(.badRequest, "a pattern is \(pattern.utf8.count) bytes long; at most \(SubscriptionLimits.patternLength) are allowed")
            }
            if !patterns.contains(pattern) { patterns.append(pattern) }
        }
        return patterns
    }

    /// An optional boolean argument, false when absent.
    private static func flag(_ input: JSONInput, _ key: String) throws(ProtocolError) -> Bool {
        guard let value = input[key] else { return false }
        guard let flag = value.bool else { throw ProtocolError(.badRequest, "\"\(key)\" must be true or false, not \(value.kind)") }
        return flag
    }

    private static func string(_ input: JSONInput, _ key: String) throws(ProtocolError) -> String {
        guard let value = input[key] else { throw ProtocolError(.badRequest, "this op needs \"\(key)\"") }
        guard let string = value.string else { throw ProtocolError(.badRequest, "\"\(key)\" must be a string, not \(value.kind)") }
        return string
    }
}

/// `calibrate`'s arguments: `{"device", "target"?, "step"?, "steps"?, "message"?}` to show
/// a target (or none, between targets), or `{"device", "end": true}`.
struct CalibrationRequest: Equatable {
    var device: String
    var end: Bool
    /// In screen pixels; checked against the screen by the dispatcher.
    var target: Point?
    var step: Int
    var steps: Int
    var message: String

    /// The longest message, in bytes: a line of text on the page, not a document.
    static let messageLimit = 200

    init(_ input: JSONInput) throws(ProtocolError) {
        guard let device = input["device"]?.string else {
            throw ProtocolError(.badRequest, "calibrate needs \"device\": the node of a touchscreen `devices` lists")
        }
        self.device = device
        switch input["end"] {
        case nil, .bool(false): end = false
        case .bool(true): end = true
        case let other?: throw ProtocolError(.badRequest, "\"end\" must be true or false, not \(other.kind)")
        }
        switch input["target"] {
        case nil, .null: target = nil
        case let value?:
            guard let x = value["x"]?.number, let y = value["y"]?.number else {
                throw ProtocolError(.badRequest, "\"target\" must be {\"x\", \"y\"} in screen pixels, or null")
            }
            target = Point(x: x, y: y)
        }
        func count(_ key: String) throws(ProtocolError) -> Int {
            guard let value = input[key] else { return 0 }
            guard let number = value.integer, (0...1000).contains(number) else {
                throw ProtocolError(.badRequest, "\"\(key)\" must be an integer from 0 to 1000")
            }
            return number
        }
        step = try count("step")
        steps = try count("steps")
        switch input["message"] {
        case nil: message = ""
        case .string(let text)?:
            guard text.utf8.count <= Self.messageLimit else {
                throw ProtocolError(.badRequest, "\"message\" is \(text.utf8.count) bytes long; at most \(Self.messageLimit) are shown")
            }
            message = text
        case let other?: throw ProtocolError(.badRequest, "\"message\" must be a string, not \(other.kind)")
        }
    }
}

/// An error reply: a code from docs/protocol.md and a message for people.
public struct ProtocolError: Error, Equatable {
    /// What went wrong, as docs/protocol.md's table of errors names it: clients branch on
    /// these, so each raw value is part of the protocol.
    public enum Code: String, CaseIterable, Sendable {
        /// The line is not JSON, or not an object.
        case badJSON = "bad_json"
        /// `id` or `op` missing or mistyped, an argument missing or mistyped, a limit exceeded.
        case badRequest = "bad_request"
        /// No such op.
        case unknownOp = "unknown_op"
        /// No stream by that name, or a pattern matching none.
        case unknownStream = "unknown_stream"
        /// No element by that id.
        case unknownElement = "unknown_element"
        /// `set` on a stream that cannot be set.
        case notWritable = "not_writable"
        /// A value of the wrong shape or out of range, a bad element.
        case badValue = "bad_value"
        /// `add_element` with an id in use.
        case exists
        /// A control op from a client without the right.
        case forbidden
        /// `calibrate` names a touchscreen motiond does not read.
        case unknownDevice = "unknown_device"
        /// `calibrate` while another client calibrates.
        case busy
        /// `reload` and the configuration was refused, or there is no file.
        case reloadFailed = "reload_failed"
        /// A line over the limit; the connection is then closed.
        case lineTooLong = "line_too_long"
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}
