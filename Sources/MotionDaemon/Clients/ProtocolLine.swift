import MotionCore
import MotionWire

/// Every kind of line the daemon writes that is not a stream's value (``ValueLines`` writes
/// those, and the publisher fans them out): built here and nowhere else, so each has one
/// shape, the one docs/protocol.md gives.
package enum ProtocolLine {
    /// The most streams a hello names. A scene of thousands of elements has tens of thousands
    /// of streams, megabytes of names that no client could read as its first line; clients
    /// learn the rest with `list`, by pattern. Smaller scenes are named whole, as always.
    static let helloStreams = 128

    /// The first line of every connection: the first ``helloStreams`` of the scene's
    /// streams, and how many there are.
    static func hello(streams: [String], count: Int, control: Bool) -> JSONValue {
        .object([
            ("event", "hello"), ("protocol", 1), ("version", .string(MotiondVersion.string)),
            ("streams", .array(streams.map { .string($0) })), ("stream_count", .integer(Int64(count))), ("control", .bool(control)),
        ])
    }

    /// The last line of a connection motiond closes, saying why, newline included: every
    /// goodbye (a stop, a client too slow, a line too long, no descriptor left for one more)
    /// is this line.
    package static func bye(_ reason: String) -> String {
        text(.object([("event", "bye"), ("reason", .string(reason))]))
    }

    /// The reply to a request: its result, or its error; `id` is null when it could not be read.
    package static func reply(id: Int?, _ result: Result<JSONValue, ProtocolError>) -> JSONValue {
        let id: JSONValue = id.map { .integer(Int64($0)) } ?? .null
        switch result {
        case .success(let result):
            return .object([("id", id), ("ok", true), ("result", result)])
        case .failure(let error):
            return .object([("id", id), ("ok", false), ("error", .object([("code", .string(error.code.rawValue)), ("message", .string(error.message))]))])
        }
    }

    /// A touchscreen came (`name` given) or went.
    static func device(added: Bool, node: String, name: String? = nil) -> JSONValue {
        var members: [(String, JSONValue)] = [("event", "device"), ("action", added ? "added" : "removed"), ("node", .string(node))]
        if let name { members.append(("name", .string(name))) }
        return .object(members)
    }

    /// What the calibration page should show (null: nothing).
    static func calibration(_ display: JSONValue) -> JSONValue {
        .object([("event", "calibration"), ("calibration", display)])
    }

    /// A line as text: the value's encoding and its newline.
    package static func text(_ value: JSONValue) -> String {
        value.encoded + "\n"
    }
}
