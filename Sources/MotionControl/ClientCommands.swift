import ArgumentParser
import FoundationEssentials
import Glibc
import MotionConfiguration
import TouchInput
import TouchModel
import MotionWire

/// How a subcommand speaks: words for a person at a terminal, JSON for a program reading a
/// pipe, or when asked with --json. Every subcommand that prints data asks this.
enum Voice {
    static func json(asked: Bool) -> Bool { asked || isatty(STDOUT_FILENO) != 1 }
}

/// `motionctl status`: is the daemon there, and how is it doing.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Say whether motiond runs, and how it is doing.",
        discussion: """
            The first line after the version says whether motiond is healthy, as GET /healthz \
            does: it reads at least one touchscreen (a replayed recording counts) and its event \
            loop keeps up; otherwise it says why. Exits with 0 when healthy, 4 when motiond runs \
            but is not, and 3 when it cannot be reached: a fleet's check can act on the code alone.
            """)
    @OptionGroup var socket: SocketOption
    @Flag(help: "The stats as JSON, with the health verdict under \"health\".") var json = false

    func run() throws {
        var healthy = true
        try talking {
            let connection = socket.connect()
            let stats = try connection.request("stats")
            let health = try connection.request("health")
            healthy = health["status"]?.string == "ok"
            if json {
                guard case .object(var members) = stats else { return emit(stats.json.encoded) }
                members["health"] = health
                return emit(JSONInput.object(members).json.encoded)
            }
            let version = connection.hello["version"]?.string ?? "?"
            emit("motiond \(version) at \(socket.path): up \(formatted("%.0f", stats["uptime"]?.number ?? 0)) s, \(stats["state"]?.string ?? "?")")
            let problems = (health["problems"]?.array ?? []).compactMap(\.string)
            emit(healthy ? "  healthy" : "  unhealthy: " + problems.joined(separator: "; "))
            emit("  \(stats["devices"]?.integer ?? 0) touchscreen(s), \(stats["frames"]?.integer ?? 0) frames, \(stats["clients"]?.array?.count ?? 0) client(s)")
            func ago(_ key: String, _ what: String) -> String {
                health[key]?.number.map { "\(what) \(formatted("%.1f", $0)) s ago" } ?? "no \(what) yet"
            }
            emit("  \(ago("since_input", "last input")), \(ago("since_touch", "last touch")), loop lag "
                 + (health["loop_lag"]?.number.map { formatted("%.1f ms", $0 * 1000) } ?? "not measured"))
            if let left = health["locked_for"]?.number {
                emit("  touches locked out (motionctl lock) for \(formatted("%.0f", left.rounded(.up))) s more: motionctl unlock or a restart ends it")
            }
            if let file = stats["config"]?["file"]?.string { emit("  configuration \(file)") } else { emit("  built-in configuration") }
            if let error = stats["config"]?["last_error"]?.string { emit("  last reload refused: \(error)") }
            for target in stats["tuio"]?.array ?? [] {
                let failures = target["failures"]?.integer ?? 0
                emit("  TUIO \(target["version"]?.string ?? "?") to \(target["target"]?.string ?? "?"): \(target["frames"]?.integer ?? 0) frames, \(target["datagrams"]?.integer ?? 0) datagrams"
                    + (failures > 0 ? ", \(failures) not sent (\(target["last_error"]?.string ?? "?"))" : ""))
            }
            emit("  this connection may \(connection.hello["control"]?.bool == true ? "read and change" : "read") the scene")
        }
        if !healthy { throw ExitCode(ExitStatus.unhealthy) }
    }
}

/// `motionctl metrics`: what `GET /metrics` serves, for a kiosk without the web listener.
struct MetricsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "metrics", abstract: "Print motiond's metrics in Prometheus's text format.",
        discussion: "The same text GET /metrics serves on the web listener (docs/operations.md), read over the socket.")
    @OptionGroup var socket: SocketOption

    func run() throws {
        try talking {
            let text = try socket.connect().request("metrics")["text"]?.string ?? ""
            writeStandardOutput(text)
        }
    }
}

/// `motionctl elements`.
struct ElementsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "elements",
        abstract: "List the elements of the scene: a line each on a terminal, a JSON object each when piped.")
    @OptionGroup var socket: SocketOption
    @Flag(help: "JSON even on a terminal.") var json = false

    func run() throws {
        try talking {
            let elements = try socket.connect().request("elements")["elements"]?.array ?? []
            let json = Voice.json(asked: json)
            for element in elements {
                if json { emit(element.json.encoded); continue }
                let position = element["position"], size = element["size"]
                emit((element["id"]?.string ?? "?")
                     + formatted("  centre (%.1f, %.1f)  size %.0f × %.0f  rotation %.3f  scale %.3f",
                                 position?["x"]?.number ?? 0, position?["y"]?.number ?? 0, size?["width"]?.number ?? 0,
                                 size?["height"]?.number ?? 0, element["rotation"]?.number ?? 0, element["scale"]?.number ?? 1)
                     + "  z \(element["z"]?.integer ?? 0)  \(element["state"]?.string ?? "")  "
                     + (element["interactions"]?.array ?? []).compactMap(\.string).joined(separator: ", "))
            }
        }
    }
}

/// `motionctl streams`.
struct StreamsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "streams",
        abstract: "List the streams that can be watched, and which can be set: words on a terminal, JSON when piped.")
    @OptionGroup var socket: SocketOption
    @Argument(help: "Only the streams matching these names or globs (default: every stream).") var patterns: [String] = []
    @Flag(help: "JSON even on a terminal.") var json = false

    func run() throws {
        try talking {
            let json = Voice.json(asked: json)
            let arguments: [(String, JSONValue)] = patterns.isEmpty ? [] : [("streams", .array(patterns.map { .string($0) }))]
            for stream in try socket.connect().request("list", arguments)["streams"]?.array ?? [] {
                if json { emit(stream.json.encoded); continue }
                let name = stream["stream"]?.string ?? "?"
                let notes = [stream["kind"]?.string == "gesture" ? "gesture events" : nil, stream["writable"]?.bool == true ? "writable" : nil].compactMap { $0 }
                emit(name + (notes.isEmpty ? "" : "  (\(notes.joined(separator: ", ")))"))
            }
        }
    }
}

/// `motionctl get STREAM`.
struct GetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "get",
        abstract: "Print a stream's current value: in words on a terminal, as JSON when piped.")
    @OptionGroup var socket: SocketOption
    @Argument(help: "The stream, like card.position.") var stream: String
    @Flag(help: "JSON even on a terminal.") var json = false

    func run() throws {
        try talking {
            let value = try socket.connect().request("get", [("stream", .string(stream))])["value"]
            guard !Voice.json(asked: json) else { return emit(value?.json.encoded ?? "null") }
            emit(value.map { WatchCommand.describe(value: $0).trimmingBlanks() } ?? "null")
        }
    }
}

/// `motionctl set STREAM VALUE`.
struct SetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "set", 
        abstract: "Set a writable stream: a destination, a spring, a position, an enabled flag.",
        discussion: "VALUE is JSON: '{\"x\": 100, \"y\": 200}', 0.5, true, '{\"tension\": 200, \"friction\": 20}'.")
    @OptionGroup var socket: SocketOption
    @Argument(help: "The stream, like card.destination.") var stream: String
    @Argument(help: "The value, as JSON.") var value: String

    func run() throws {
        let parsed: JSONInput
        do { parsed = try JSONInput(parsing: Substring(value)) } catch {
            throw ValidationError("the value is \(error); for example '{\"x\": 100, \"y\": 200}' or 0.5")
        }
        try talking {
            let result = try socket.connect().request("set", [("stream", .string(stream)), ("value", parsed.json)])
            emit(result["value"]?.json.encoded ?? "null")
        }
    }
}

/// `motionctl stats`.
struct StatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "stats",
        abstract: "Print the daemon's statistics: a table on a terminal, JSON when piped.")
    @OptionGroup var socket: SocketOption
    @Flag(help: "JSON even on a terminal.") var json = false

    func run() throws {
        try talking {
            let stats = try socket.connect().request("stats")
            guard !Voice.json(asked: json) else { return emit(stats.json.encoded) }
            for line in Self.table(stats) { emit(line) }
        }
    }

    /// The stats as aligned lines, every field of docs/protocol.md's `stats` named in words.
    static func table(_ stats: JSONInput) -> [String] {
        func int(_ value: JSONInput?) -> Int { Int(value?.integer ?? 0) }
        let config = stats["config"]
        var rows: [(String, String)] = [
            ("uptime", formatted("%.1f s", stats["uptime"]?.number ?? 0)),
            ("state", stats["state"]?.string ?? "?"),
            ("frames", "\(int(stats["frames"])) touch frames, \(int(stats["frames_coalesced"])) left out when behind"),
            ("frame rate", "\(compactNumber(stats["frame_rate"]?.number ?? 0)) frames/s while something moves"),
            ("configuration", (config?["file"]?.string ?? "built-in") + formatted(", loaded %.1f s after start", config?["loaded"]?.number ?? 0)),
        ]
        if let error = config?["last_error"]?.string { rows.append(("last reload", "refused: \(error)")) }
        rows.append(("devices", "\(int(stats["devices"])) touchscreen(s), \(int(stats["dropped_events"])) event drop(s)"))
        if case .object(let byDevice)? = stats["filtered"] {
            for (node, filtered) in byDevice.sorted(by: { $0.key < $1.key }) {
                let counts = ContactFilters.Counts(filtered: filtered)
                rows.append(("filtered", "\(node): \(counts.stuck) stuck, \(counts.palms) palms, \(counts.jumps) jumps cancelled; \(counts.repaired) re-paired; \(counts.held) positions held"))
            }
        }
        for target in stats["tuio"]?.array ?? [] {
            rows.append(("tuio", "\(target["version"]?.string ?? "?") to \(target["target"]?.string ?? "?"): \(int(target["frames"])) frames, "
                + "\(int(target["datagrams"])) datagrams, \(int(target["failures"])) not sent" + (target["last_error"]?.string.map { " (\($0))" } ?? "")))
        }
        let clients = stats["clients"]?.array ?? []
        rows.append(("clients", "\(clients.count)"))
        let width = rows.map(\.0.count).max()! + 2
        var lines = rows.map { $0.0.padded(toLength: width) + $0.1 }
        guard !clients.isEmpty else { return lines }
        let header = ["client", "uid", "control", "subscriptions", "sent", "coalesced"]
        let cells = clients.map { client in
            [String(int(client["client"])), client["uid"]?.integer.map { String($0) } ?? "-", client["control"]?.bool == true ? "yes" : "no",
             String(int(client["subscriptions"])), String(int(client["sent"])), String(int(client["coalesced"]))]
        }
        let widths = header.indices.map { column in ([header[column]] + cells.map { $0[column] }).map(\.count).max()! + 2 }
        for row in [header] + cells {
            lines.append("  " + row.enumerated().map { $1.padded(toLength: widths[$0]) }.joined())
        }
        return lines.map { String($0.reversed().drop { $0 == " " }.reversed()) }
    }
}

/// `motionctl watch [PATTERN…]`: live values.
struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "watch", 
        abstract: "Watch streams live: a table that updates in place on a terminal, JSON lines when piped.")
    @OptionGroup var socket: SocketOption
    @Argument(help: "Streams or globs (default: everything).") var patterns: [String] = []
    @Flag(help: "JSON lines even on a terminal.") var json = false
    @Option(help: "Stop after this many value events.") var count: Int?

    func run() throws {
        try talking {
            let connection = socket.connect()
            _ = try connection.request("subscribe", [("streams", .array((patterns.isEmpty ? ["*"] : patterns).map { .string($0) }))])
            let table = !Voice.json(asked: json)
            var latest: [String: String] = [:]
            var values = 0
            while let event = try connection.nextEvent() {
                if !table {
                    emit(event.json.encoded)
                } else if let stream = event["stream"]?.string {
                    latest[stream] = Self.describe(event)
                    var screen = "\u{1B}[H\u{1B}[2J" + "motiond at \(socket.path) — Ctrl-C to stop\n\n"
                    let width = (latest.keys.map(\.count).max() ?? 0) + 2
                    for name in latest.keys.sorted() { screen += name.padded(toLength: width) + latest[name]! + "\n" }
                    writeStandardOutput(screen)
                } else {
                    emit(event.json.encoded)
                }
                if event["event"]?.string == "value" { values += 1 }
                if let count, values >= count { return }
            }
            fail("motionctl: the daemon closed the connection")
        }
    }

    /// One event as the table's cell: every kind of value in words, none as raw JSON.
    static func describe(_ event: JSONInput) -> String {
        if let state = event["state"]?.string {
            guard let velocity = event["velocity"] else { return state }
            return "\(state)  velocity " + describe(value: velocity)
        }
        return event["value"].map { describe(value: $0) } ?? ""
    }

    /// A stream's value: a point, a size, a spring, the contacts, a number, a state or a flag.
    static func describe(value: JSONInput) -> String {
        if let x = value["x"]?.number, let y = value["y"]?.number { return formatted("(%9.2f, %9.2f)", x, y) }
        if let width = value["width"]?.number, let height = value["height"]?.number {
            return "\(compactNumber(width)) × \(compactNumber(height))"
        }
        if let tension = value["tension"]?.number, let friction = value["friction"]?.number {
            return formatted("tension %.1f, friction %.1f, mass ", tension, friction) + compactNumber(value["mass"]?.number ?? 1)
        }
        if let fingers = value.array {
            guard !fingers.isEmpty else { return "no finger" }
            return fingers.map { finger in
                "#\(finger["id"]?.integer ?? 0) " + formatted("(%.1f, %.1f)", finger["x"]?.number ?? 0, finger["y"]?.number ?? 0)
            }.joined(separator: "  ")
        }
        if let number = value.number { return formatted("%12.5f", number) }
        if let text = value.string { return text }
        if let flag = value.bool { return flag ? "true" : "false" }
        return value.json.encoded
    }
}
