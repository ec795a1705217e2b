import ArgumentParser
import Foundation
import Glibc
import MotionServer

/// Where the daemon is: `--socket`, else `MOTIOND_SOCKET`, else the default.
struct SocketOption: ParsableArguments {
    @Option(help: "The daemon's socket (default: $MOTIOND_SOCKET, else /run/motiond/motiond.sock).") var socket: String?

    var path: String {
        socket ?? ProcessInfo.processInfo.environment["MOTIOND_SOCKET"].flatMap { $0.isEmpty ? nil : $0 } ?? DaemonSettings().socket
    }

    /// Connects, or exits with 3 saying how to start the daemon.
    func connect() -> DaemonConnection {
        do { return try DaemonConnection(path: path) } catch {
            FileHandle.standardError.write(Data("""
                motionctl: cannot connect to motiond at \(path): \(error)
                motionctl: start it with `systemctl start motiond`, or without a touchscreen `motiond --replay FILE.evemu`; \
                --socket or MOTIOND_SOCKET choose another socket

                """.utf8))
            Foundation.exit(ExitStatus.cannotConnect)
        }
    }
}

/// A blocking connection to the daemon: requests and replies, and the events between them.
final class DaemonConnection {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let fd: Int32
    private var buffer: [UInt8] = []
    private var nextID = 1
    /// Events that came while waiting for a reply.
    private var events: [JSONInput] = []
    /// The daemon's hello.
    private(set) var hello: JSONInput = .null

    init(path: String) throws {
        // A path too long for sun_path is refused: cut short, it would name another socket.
        var (address, length): (sockaddr_un, socklen_t)
        do { (address, length) = try unixSocketAddress(path) } catch { throw Failure(description: error.description) }
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: String(cString: strerror(errno))) }
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, length) }
        }
        guard status == 0 else {
            let reason = errno == ENOENT ? "no such socket" : errno == EACCES ? "permission denied (the socket's group may connect; see [daemon] socket_group)" : String(cString: strerror(errno))
            Glibc.close(fd)
            throw Failure(description: reason)
        }
        guard let first = try readMessage(), first["event"]?.string == "hello" else { throw Failure(description: "the daemon did not say hello") }
        hello = first
    }

    deinit { Glibc.close(fd) }

    /// Sends a request; its result, or the daemon's error as a failure (exit code 1).
    func request(_ op: String, _ arguments: [(String, JSONValue)] = []) throws -> JSONInput {
        let id = nextID
        nextID += 1
        let line = JSONValue.object([("id", .integer(Int64(id))), ("op", .string(op))] + arguments).encoded + "\n"
        try write(line)
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

    private func write(_ text: String) throws {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            guard written > 0 else { throw Failure(description: "cannot write to the daemon: \(String(cString: strerror(errno)))") }
            bytes = bytes.dropFirst(written)
        }
    }

    private func readMessage() throws -> JSONInput? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                do { return try JSONInput(parsing: Substring(line)) } catch {
                    throw Failure(description: "the daemon sent a line that is not JSON: \(error)")
                }
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = Glibc.read(fd, &chunk, chunk.count)
            if count <= 0 { return nil }
            buffer += chunk[..<count]
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
