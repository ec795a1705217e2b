import Foundation
import Glibc
import Testing

/// Every suite that starts motiond lives in here, so they run one test at a time: a daemon
/// started by one test must not take the CPU another test's daemon needs (outcomes may not
/// depend on that), and each test has a time limit besides its own deadlines.
@Suite("Daemons", .serialized, .timeLimit(.minutes(5)))
enum Daemons {}

/// A motiond started for a test: its socket in a fresh directory, its readiness awaited on
/// a notify socket (the systemd protocol), stopped with SIGTERM at the end.
final class RunningDaemon {
    let directory: URL
    let socket: String
    let process = Process()
    private var notify: Int32
    private let errorPipe = Pipe()
    private var errorText: ThreadedReader?
    /// The reader of motiond's log, for waiting on a line while it runs.
    var logReader: ThreadedReader? { errorText }
    private let exit = ExitWatch()

    /// Starts motiond with `arguments`. With a `launcher`, that command runs instead, with
    /// motiond's path and its arguments after its own: a wrapper that ends by exec'ing them,
    /// such as `sh -c 'ulimit -f 8; exec "$0" "$@"'`, so that the process is still motiond.
    init(_ arguments: [String], socket path: String? = nil, configuration: String? = nil, environment: [String: String] = [:],
         launcher: [String] = []) throws {
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
        // A motiond started as another user (a launcher that drops root) notifies too.
        chmod(notifyPath, 0o666)
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(notify, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))

        var all = arguments + ["--socket", socket]
        if let configuration {
            let file = directory.appendingPathComponent("motiond.toml").path
            try configuration.write(toFile: file, atomically: true, encoding: .utf8)
            all += ["--config", file]
        }
        let motiond = Run.productsDirectory.appendingPathComponent("motiond")
        if let command = launcher.first {
            process.executableURL = URL(fileURLWithPath: command)
            process.arguments = launcher.dropFirst() + [motiond.path] + all
        } else {
            process.executableURL = motiond
            process.arguments = all
        }
        process.environment = ProcessInfo.processInfo.environment.merging(environment.merging(["NOTIFY_SOCKET": notifyPath]) { $1 }) { $1 }
        process.standardError = errorPipe
        process.standardOutput = FileHandle.nullDevice
        exit.watch(process)
        try process.run()
        errorText = ThreadedReader(errorPipe.fileHandleForReading)
        try waitFor("READY=1")
    }

    /// Waits up to `seconds` for a notification containing `text` (READY=1 after start and reload).
    func waitFor(_ text: String, seconds: Double = 60) throws {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let count = recv(notify, &buffer, buffer.count, 0)  // SO_RCVTIMEO bounds each wait
            if count < 0 && errno == EINTR { continue }  // a child's SIGCHLD, not an answer
            guard count > 0 else { break }
            if String(decoding: buffer[..<count], as: UTF8.self).contains(text) { return }
        }
        throw Failure(description: "motiond did not notify \(text) within \(Int(seconds)) s; it said: \(stop().error)")
    }

    /// The notifications that come within `seconds`, until `enough` says they are enough:
    /// what motiond told systemd, in order.
    func notifications(seconds: Double = 60, until enough: ([String]) -> Bool) -> [String] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var received: [String] = []
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline, !enough(received) {
            let count = recv(notify, &buffer, buffer.count, 0)  // SO_RCVTIMEO bounds each wait
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            received.append(String(decoding: buffer[..<count], as: UTF8.self))
        }
        return received
    }

    /// Sends a signal.
    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Stops motiond (SIGTERM) and returns its exit code and what it logged. One that has not
    /// exited `seconds` after the signal is killed: its status is then -SIGKILL and its log
    /// says so, so the test fails with the log instead of hanging the run.
    @discardableResult
    func stop(seconds: Double = 10) -> (status: Int32, error: String) {
        if !exit.hasExited { signal(SIGTERM) }
        let inTime = exit.wait(seconds: seconds)
        if !inTime {
            signal(SIGKILL)
            _ = exit.wait(seconds: 10)
        }
        if notify >= 0 { Glibc.close(notify); notify = -1 }
        let log = String(decoding: errorText?.wait(seconds: 10) ?? Data(), as: UTF8.self)
        guard inTime else { return (-SIGKILL, "motiond did not exit within \(Int(seconds)) s of SIGTERM and was killed; it said:\n" + log) }
        return (process.terminationStatus, log)
    }

    /// Waits up to `seconds` for motiond to exit by itself (after a SIGKILL, say).
    func waitForExit(seconds: Double = 10) -> Bool { exit.wait(seconds: seconds) }

    deinit {
        if !exit.hasExited {
            signal(SIGKILL)
            _ = exit.wait(seconds: 10)
        }
        if notify >= 0 { Glibc.close(notify) }
        try? FileManager.default.removeItem(at: directory)
    }

    struct Failure: Error, CustomStringConvertible { var description: String }
}

/// Knows when a child process has exited, and waits for it with a deadline (Foundation's
/// `waitUntilExit` has none).
final class ExitWatch: @unchecked Sendable {
    private let exited = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var done = false

    /// Watches `process`; call before `run()`.
    func watch(_ process: Process) {
        process.terminationHandler = { [self] _ in
            lock.withLock { done = true }
            exited.signal()
        }
    }

    var hasExited: Bool { lock.withLock { done } }

    /// Whether the process exited within `seconds`.
    func wait(seconds: Double) -> Bool {
        if hasExited { return true }
        guard exited.wait(timeout: .now() + seconds) == .success else { return false }
        exited.signal()  // for the next waiter
        return true
    }
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
    /// Values streaming in keep each read short, so the reply has a deadline of its own.
    func request(_ line: String, events: inout [[String: Any]], seconds: Double = 30) throws -> [String: Any] {
        send(line + "\n")
        let deadline = Date().addingTimeInterval(seconds)
        while let message = try next() {
            if message["id"] != nil { return message }
            events.append(message)
            guard Date() < deadline else { throw RunningDaemon.Failure(description: "no reply to \(line) within \(Int(seconds)) s") }
        }
        throw RunningDaemon.Failure(description: "the daemon closed the connection")
    }

    func request(_ line: String) throws -> [String: Any] {
        var events: [[String: Any]] = []
        return try request(line, events: &events)
    }

    /// The ids `elements` lists, in its order.
    func elementIDs() throws -> [String] {
        let elements = try #require(try request(#"{"id": 1, "op": "elements"}"#)["result"] as? [String: Any])["elements"] as? [[String: Any]]
        return elements?.compactMap { $0["id"] as? String } ?? []
    }

    /// Why the last reload was refused, as `stats` reports it; nil when none was.
    func lastConfigError() throws -> String? {
        let stats = try #require(try request(#"{"id": 2, "op": "stats"}"#)["result"] as? [String: Any])
        return (stats["config"] as? [String: Any])?["last_error"] as? String
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

extension RunningDaemon {
    /// What motiond has logged so far, once it contains `text` (or after `seconds`).
    func log(containing text: String, seconds: Double = 30) -> String {
        String(decoding: logReader?.waitUntil(seconds: seconds) { String(decoding: $0, as: UTF8.self).contains(text) } ?? Data(), as: UTF8.self)
    }

    /// Runs `body`; an error it throws (a client's wait that ran out, most often) comes back
    /// with motiond's log, which says what the daemon was doing meanwhile.
    func withLogOnFailure<Result>(_ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch {
            throw Failure(description: "\(error)\nmotiond's log:\n\(log(containing: "", seconds: 0).suffix(6000))")
        }
    }

    /// The WebSocket URL motiond logged ("websocket on HOST:PORT"), within 30 s.
    func webSocketURL() throws -> String {
        let log = log(containing: "websocket on ")
        guard let range = log.range(of: #"websocket on (\S+):\s"#, options: .regularExpression) else {
            throw Failure(description: "motiond did not say where its WebSocket listens; it said:\n\(log)")
        }
        let address = log[range].dropFirst("websocket on ".count).dropLast(2)
        return "ws://\(address)/ws"
    }
}

extension EndToEnd {
    /// The whole response to `GET path` on loopback, each read bounded by 30 s.
    static func httpGet(port: Int, path: String) throws -> String {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { Glibc.close(fd) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        try #require(connected, "cannot connect to 127.0.0.1:\(port): \(String(cString: strerror(errno)))")
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        _ = request.withCString { send(fd, $0, strlen($0), 0) }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }  // the end, or the 30 s without a byte
            response += buffer[..<count]
        }
        return String(decoding: response, as: UTF8.self)
    }
}
