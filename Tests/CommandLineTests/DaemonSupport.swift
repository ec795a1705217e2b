import Foundation
import Glibc
import Testing

/// A motiond started for a test: its socket in a fresh directory, its readiness awaited on
/// a notify socket (the systemd protocol), stopped with SIGTERM at the end.
final class RunningDaemon {
    let directory: URL
    let socket: String
    let process = Process()
    private let notify: Int32
    private let errorPipe = Pipe()
    private var errorText: ThreadedReader?

    init(_ arguments: [String], socket path: String? = nil, configuration: String? = nil, environment: [String: String] = [:]) throws {
        directory = try EndToEnd.scratch()
        chmod(directory.path, 0o755)
        socket = path ?? directory.appendingPathComponent("motiond.sock").path
        let notifyPath = directory.appendingPathComponent("notify").path
        notify = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in notifyPath.utf8.enumerated() { raw[index] = byte }
        }
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(notify, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(notify, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))

        var all = arguments + ["--socket", socket]
        if let configuration {
            let file = directory.appendingPathComponent("motiond.toml").path
            try configuration.write(toFile: file, atomically: true, encoding: .utf8)
            all += ["--config", file]
        }
        process.executableURL = Run.productsDirectory.appendingPathComponent("motiond")
        process.arguments = all
        process.environment = ProcessInfo.processInfo.environment.merging(environment.merging(["NOTIFY_SOCKET": notifyPath]) { $1 }) { $1 }
        process.standardError = errorPipe
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        errorText = ThreadedReader(errorPipe.fileHandleForReading)
        try waitFor("READY=1")
    }

    /// Waits for a notification containing `text` (READY=1 after start and reload).
    func waitFor(_ text: String) throws {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(notify, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }  // a child's SIGCHLD, not an answer
            guard count > 0 else { throw Failure(description: "motiond did not notify \(text); it said: \(stop().error)") }
            if String(decoding: buffer[..<count], as: UTF8.self).contains(text) { return }
        }
    }

    /// Sends a signal.
    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Stops motiond (SIGTERM) and returns its exit code and what it logged.
    @discardableResult
    func stop() -> (status: Int32, error: String) {
        if process.isRunning { signal(SIGTERM) }
        process.waitUntilExit()
        Glibc.close(notify)
        return (process.terminationStatus, String(decoding: errorText?.wait() ?? Data(), as: UTF8.self))
    }

    deinit {
        if process.isRunning { process.terminate(); process.waitUntilExit() }
        try? FileManager.default.removeItem(at: directory)
    }

    struct Failure: Error, CustomStringConvertible { var description: String }
}

/// A test's client connection: JSON lines over the socket, with a timeout on every read so
/// a missing answer fails the test instead of hanging it.
final class TestClient {
    private let fd: Int32
    private var buffer: [UInt8] = []

    init(_ path: String) throws {
        fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let status = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        guard status == 0 else { throw RunningDaemon.Failure(description: "cannot connect to \(path): \(String(cString: strerror(errno)))") }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { Glibc.close(fd) }

    func send(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written <= 0 { return }
            bytes = bytes.dropFirst(written)
        }
    }

    /// The next line as a JSON object; nil at the end of the connection.
    func next() throws -> [String: Any]? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Data(buffer[..<newline])
                buffer.removeSubrange(...newline)
                return try #require(try JSONSerialization.jsonObject(with: line) as? [String: Any])
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = read(fd, &chunk, chunk.count)
            if count == 0 { return nil }
            if count < 0 && errno == EINTR { continue }  // a child's SIGCHLD, not an answer
            guard count > 0 else { throw RunningDaemon.Failure(description: "no answer within 30 s (\(String(cString: strerror(errno))))") }
            buffer += chunk[..<count]
        }
    }

    /// Sends a request and returns its reply, keeping the events that came first.
    func request(_ line: String, events: inout [[String: Any]]) throws -> [String: Any] {
        send(line + "\n")
        while let message = try next() {
            if message["id"] != nil { return message }
            events.append(message)
        }
        throw RunningDaemon.Failure(description: "the daemon closed the connection")
    }

    func request(_ line: String) throws -> [String: Any] {
        var events: [[String: Any]] = []
        return try request(line, events: &events)
    }
}

extension TestClient {
    /// Sends bytes as they are, for lines that are not UTF-8.
    func send(bytes: [UInt8]) {
        var rest = bytes[...]
        while !rest.isEmpty {
            let written = rest.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written <= 0 { return }
            rest = rest.dropFirst(written)
        }
    }
}
