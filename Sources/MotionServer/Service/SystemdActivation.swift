import FoundationEssentials
import Glibc
import NIOCore
import MotionWire

/// Tells systemd how the service is doing (`sd_notify`), when it runs under systemd.
///
/// It never blocks the loop. The notify socket is a queue of datagrams of bounded length
/// (`net.unix.max_dgram_qlen`, 10 unless raised), and a send to a full queue waits until its
/// reader takes one: a pid1 busy at boot, or a supervisor that reads only the first READY=1,
/// froze motiond at its sixth reload, touches and replies included. So a message that does
/// not fit waits here, in order, and is sent again every ``retryInterval`` until the queue
/// takes it; only repeated watchdog pings are let go, and past ``waitingLimit`` the oldest.
final class SystemdNotifier {
    private let path: String?
    /// Where a retry runs, and where every message is sent from; without one (a test's), a
    /// message that does not fit waits for the next one sent.
    private let loop: EventLoop?
    /// What `logger` says when the queue is found full, once until it takes messages again.
    private let onFull: () -> Void
    private var waiting: [String] = []
    private var retry: Scheduled<Void>?

    static let retryInterval = TimeAmount.milliseconds(100)
    static let waitingLimit = 64

    init(environment: [String: String] = ProcessInfo.processInfo.environment, loop: EventLoop? = nil, onFull: @escaping () -> Void = {}) {
        path = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        self.loop = loop
        self.onFull = onFull
    }

    /// Whether there is a systemd to tell.
    var isActive: Bool { path != nil }

    /// Sends `READY=1`, `STATUS=…`, `WATCHDOG=1`, `STOPPING=1` or `RELOADING=1`, now or, when
    /// systemd's queue is full, once it has room.
    func notify(_ message: String) {
        guard isActive else { return }
        if message == "WATCHDOG=1" && waiting.contains(message) { return }
        waiting.append(message)
        if waiting.count > Self.waitingLimit { waiting.removeFirst() }
        sendWaiting()
    }

    private func sendWaiting() {
        let wasFull = retry != nil
        retry?.cancel()
        retry = nil
        while let message = waiting.first {
            switch send(message) {
            case .sent, .refused:
                waiting.removeFirst()
            case .full:
                if !wasFull { onFull() }
                retry = loop?.assumeIsolated().scheduleTask(in: Self.retryInterval) { [weak self] in self?.sendWaiting() }
                return
            }
        }
    }

    private enum Outcome { case sent, full, refused }

    /// One datagram, without waiting: a queue with no room is `full`; no socket, or nobody
    /// bound to it, `refused` (systemd is gone; there is no one to wait for).
    private func send(_ message: String) -> Outcome {
        guard let path, case (var address, let length)? = try? unixSocketAddress(path) else { return .refused }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .refused }
        defer { Glibc.close(fd) }
        let sent = message.withCString { text in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, text, strlen(text), Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL), $0, length) }
            }
        }
        if sent >= 0 { return .sent }
        return errno == EAGAIN || errno == EWOULDBLOCK ? .full : .refused
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
        let bound = NIOLoopBound(notifier, eventLoop: loop)
        loop.scheduleRepeatedTask(initialDelay: .zero, delay: .microseconds(microseconds / 2)) { _ in
            bound.value.notify("WATCHDOG=1")
        }
    }
}
