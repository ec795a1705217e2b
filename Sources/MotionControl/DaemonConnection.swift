import ArgumentParser
import FoundationEssentials
import Glibc
import MotionConfiguration
import MotionWire

/// Where the daemon is: `--websocket`, else `--socket`, else `MOTIOND_SOCKET`, else the
/// default; a `ws://` URL in either of the last two means the WebSocket too.
struct SocketOption: ParsableArguments {
    @Option(help: "The daemon's socket, or a ws:// URL (default: $MOTIOND_SOCKET, else /run/motiond/motiond.sock).") var socket: String?
    @Option(help: ArgumentHelp("The daemon's WebSocket endpoint instead of its socket.", valueName: "ws://host:port/ws")) var websocket: String?
    @Option(help: ArgumentHelp("Send the control token in this file first (default: $MOTIOND_TOKEN_FILE), for set and the other control ops over the WebSocket.",
                               valueName: "file")) var tokenFile: String?

    var path: String {
        websocket ?? socket ?? ProcessInfo.processInfo.environment["MOTIOND_SOCKET"].flatMap { $0.isEmpty ? nil : $0 } ?? DaemonSettings().socket
    }

    private var token: String? {
        tokenFile ?? ProcessInfo.processInfo.environment["MOTIOND_TOKEN_FILE"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whether the daemon is reached over a Unix socket on this machine (not a WebSocket URL).
    /// Not `contains("://")`: with a String argument that call resolves to full Foundation's
    /// overload, visible through a dependency's import, and links it (and ICU) back in.
    var isLocal: Bool { path.firstRange(of: "://") == nil }

    /// Connects without authenticating; the error when the daemon does not answer.
    func connectIfAnswering() -> Result<DaemonConnection, Error> {
        Result {
            let transport: DaemonTransport = isLocal ? try UnixSocketTransport(path: path) : try WebSocketTransport(url: path)
            return try DaemonConnection(transport)
        }
    }

    /// Connects (and with a token, authenticates), or exits with 3 saying how to start the daemon.
    func connect() -> DaemonConnection {
        let connection: DaemonConnection
        switch connectIfAnswering() {
        case .success(let connected): connection = connected
        case .failure(let error):
            writeStandardError("""
                motionctl: cannot connect to motiond at \(path): \(error)
                motionctl: start it with `systemctl start motiond`, or without a touchscreen `motiond --replay FILE.evemu`; \
                --socket, --websocket or MOTIOND_SOCKET choose another

                """)
            Glibc.exit(ExitStatus.cannotConnect)
        }
        if let token {
            do {
                guard let text = FileManager.default.contents(atPath: token) else { throw DaemonConnection.Failure(description: "cannot read the token file \(token)") }
                var value = String(decoding: text, as: UTF8.self)
                if value.hasSuffix("\n") { value.removeLast() }
                _ = try connection.request("auth", [("token", .string(value))])
            } catch {
                fail("motionctl: \(error)")
            }
        }
        return connection
    }
}

/// A blocking connection to the daemon: requests and replies, and the events between them,
/// over either transport.
final class DaemonConnection {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let transport: DaemonTransport
    private var nextID = 1
    /// Events that came while waiting for a reply.
    private var events: [JSONInput] = []
    /// The daemon's hello.
    private(set) var hello: JSONInput = .null

    init(_ transport: DaemonTransport) throws {
        self.transport = transport
        guard let first = try readMessage(), first["event"]?.string == "hello" else { throw Failure(description: "the daemon did not say hello") }
        hello = first
    }

    /// Sends a request; its result, or the daemon's error as a failure (exit code 1).
    func request(_ op: String, _ arguments: [(String, JSONValue)] = []) throws -> JSONInput {
        let id = nextID
        nextID += 1
        let line = JSONValue.object([("id", .integer(Int64(id))), ("op", .string(op))] + arguments).encoded
        do { try transport.send(line) } catch { throw Failure(description: "\(error)") }
        while let message = try readMessage() {
            if message["event"] != nil {
                events.append(message)
                continue
            }
            guard message["id"]?.integer == id else { continue }
            if message["ok"]?.bool == true { return message["result"] ?? .null }
            throw Refused(code: message["error"]?["code"]?.string ?? "error", message: message["error"]?["message"]?.string ?? "")
        }
        throw Failure(description: "the daemon closed the connection")
    }

    /// The next event, waiting for it.
    func nextEvent() throws -> JSONInput? {
        if !events.isEmpty { return events.removeFirst() }
        while let message = try readMessage() {
            if message["event"] != nil { return message }
        }
        return nil
    }

    /// The next event, waiting for it until `deadline` (``monotonicNow()``); nil then, or
    /// when the connection ended.
    func nextEvent(until deadline: Double) throws -> JSONInput? {
        if !events.isEmpty { return events.removeFirst() }
        do {
            while let message = try readMessage(until: deadline) {
                if message["event"] != nil { return message }
            }
        } catch is TimedOut {
            return nil
        }
        return nil
    }

    private func readMessage(until deadline: Double = .infinity) throws -> JSONInput? {
        let line: String?
        do { line = try transport.receive(until: deadline) } catch let timedOut as TimedOut { throw timedOut } catch { throw Failure(description: "\(error)") }
        guard let line else { return nil }
        do { return try JSONInput(parsing: Substring(line)) } catch {
            throw Failure(description: "the daemon sent a line that is not JSON: \(error)")
        }
    }
}

/// The daemon said no: its error code and message. motionctl exits with 1.
struct Refused: Error, CustomStringConvertible {
    var code: String
    var message: String
    var description: String { "motiond refused (\(code)): \(message)" }
}

/// Runs a client command, mapping a refusal to exit code 1.
func talking(_ body: () throws -> Void) throws {
    do { try body() } catch let refused as Refused {
        fail("motionctl: \(refused)")
    } catch let failure as DaemonConnection.Failure {
        fail("motionctl: \(failure)")
    }
}

extension JSONInput {
    /// Back to JSON text, for printing what the daemon said.
    var json: JSONValue {
        switch self {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .number(let n): return .number(n)
        case .string(let s): return .string(s)
        case .array(let a): return .array(a.map(\.json))
        case .object(let o): return .object(o.keys.sorted().map { ($0, o[$0]!.json) })
        }
    }
}
