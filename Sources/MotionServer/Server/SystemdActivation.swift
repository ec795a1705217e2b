import FoundationEssentials
import Glibc
import NIOCore

/// Tells systemd how the service is doing (`sd_notify`), when it runs under systemd.
struct SystemdNotifier {
    private let path: String?

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        path = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whether there is a systemd to tell.
    var isActive: Bool { path != nil }

    /// Sends `READY=1`, `STATUS=…`, `WATCHDOG=1`, `STOPPING=1` or `RELOADING=1`.
    func notify(_ message: String) {
        guard let path, case (var address, let length)? = try? unixSocketAddress(path) else { return }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { Glibc.close(fd) }
        _ = message.withCString { text in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, text, strlen(text), 0, $0, length) }
            }
        }
    }
}

/// What systemd hands a service it started: the listening sockets of its socket units, and a
/// watchdog to ping.
enum SystemdActivation {
    /// The listening sockets systemd passed (`LISTEN_FDS`, for this process): the one named
    /// `websocket` (motiond-web.socket's `FileDescriptorName=`) is the browsers' listener,
    /// the first other one the Unix socket (motiond.socket).
    static func inheritedSockets(_ environment: [String: String], pid: Int32 = getpid()) -> (control: Int32?, web: Int32?) {
        guard let listenPID = environment["LISTEN_PID"].flatMap(Int32.init), listenPID == pid,
              let count = environment["LISTEN_FDS"].flatMap(Int.init), count >= 1, count < 64 else { return (nil, nil) }
        let names = (environment["LISTEN_FDNAMES"] ?? "").split(separator: ":", omittingEmptySubsequences: false)
        var control: Int32?, web: Int32?
        for index in 0..<count {
            let descriptor = Int32(3 + index)  // SD_LISTEN_FDS_START
            if index < names.count, names[index] == "websocket" {
                web = web ?? descriptor
            } else {
                control = control ?? descriptor
            }
        }
        return (control, web)
    }

    /// Pings systemd's watchdog (`WATCHDOG_USEC`) at half its period from the event loop
    /// itself, so a stuck loop stops the pings and systemd restarts the daemon.
    static func startWatchdog(_ notifier: SystemdNotifier, on loop: EventLoop, environment: [String: String]) {
        guard notifier.isActive, let text = environment["WATCHDOG_USEC"], let microseconds = Int64(text), microseconds > 0 else { return }
        loop.scheduleRepeatedTask(initialDelay: .zero, delay: .microseconds(microseconds / 2)) { _ in
            notifier.notify("WATCHDOG=1")
        }
    }
}
