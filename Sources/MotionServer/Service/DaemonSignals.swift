import Dispatch
import FoundationEssentials
import Glibc
import NIOConcurrencyHelpers
import TouchInput

/// What a signal asks motiond to do.
public enum DaemonSignal: Sendable, Equatable {
    /// SIGHUP: read the configuration again.
    case reload
    /// SIGTERM or SIGINT: stop.
    case stop

    /// The signals motiond takes, each with what it asks.
    static let all: [(number: Int32, signal: DaemonSignal)] = [(SIGHUP, .reload), (SIGTERM, .stop), (SIGINT, .stop)]

    init?(number: Int32) {
        guard let entry = Self.all.first(where: { $0.number == number }) else { return nil }
        self = entry.signal
    }

    /// SIGHUP, SIGTERM and SIGINT as a set.
    static var set: sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for entry in all { sigaddset(&set, entry.number) }
        return set
    }

    /// Blocks SIGHUP, SIGTERM and SIGINT in the calling thread and gives them back their
    /// default actions: motiond's `main` calls it on its first line, before any thread
    /// exists, so that every thread inherits the mask and no signal can be handled
    /// asynchronously anywhere. From then on a signal waits, pending, until ``SignalThread``
    /// takes it; none can be lost, however early it comes. (A parent may have set one to
    /// SIG_IGN, under which even a blocked signal is discarded, hence the default actions.
    /// A parent that started motiond with them blocked changes nothing.) A child process
    /// would inherit the mask: whoever starts one must unblock them in it.
    public static func blockInThisThread() {
        var set = Self.set
        pthread_sigmask(SIG_BLOCK, &set, nil)
        for entry in all { Glibc.signal(entry.number, SIG_DFL) }
    }
}

/// Carries the signals from ``SignalThread`` to the daemon, and makes sure a stop ends the
/// process even when the daemon cannot (its event loop busy or stuck).
///
/// Until the daemon runs, signals are kept and handed over when it does: a SIGTERM during
/// start-up stops it as soon as it can act. After a stop was asked, the process has
/// ``grace`` seconds to end on its own; then the signal thread removes the socket file (so
/// that a new motiond can bind) and ends the process with ``forcedExit``.
final class SignalRelay: @unchecked Sendable {
    /// How long a stop may take before the process is ended without the event loop.
    let grace: Double
    private let lock = NIOLock()
    private var handler: (@Sendable (DaemonSignal) -> Void)?
    private var pending: [DaemonSignal] = []
    private var stopDeadline: Double?
    private var socketPath: String?
    private let forcedExit: @Sendable (String) -> Void

    /// `forcedExit` ends the process, saying why; the daemon's writes to standard error
    /// and calls `_exit(0)` (tests pass their own).
    init(grace: Double = 1.5, forcedExit: @escaping @Sendable (String) -> Void = SignalRelay.exitNow) {
        self.grace = grace
        self.forcedExit = forcedExit
    }

    /// Whether a stop was asked.
    var stopRequested: Bool { lock.withLock { stopDeadline != nil } }

    /// The daemon runs: from now on `handler` receives the signals, starting with any that
    /// came before. It must not block (it hands the signal to the event loop).
    func run(_ handler: @escaping @Sendable (DaemonSignal) -> Void) {
        let early = lock.withLock {
            self.handler = handler
            defer { pending = [] }
            return pending
        }
        // A stop makes any reload before it moot.
        if early.contains(.stop) { handler(.stop) } else { early.forEach(handler) }
    }

    /// A socket file this process bound, which a forced exit removes.
    func socketBound(_ path: String) {
        lock.withLock { socketPath = path }
    }

    /// Removes the socket file, once: the daemon's own stop and a forced exit both may.
    func removeSocket() {
        lock.withLock {
            if let socketPath { unlink(socketPath) }
            socketPath = nil
        }
    }

    /// A signal arrived (on the signal thread).
    func received(_ signal: DaemonSignal) {
        let handler = lock.withLock { () -> (@Sendable (DaemonSignal) -> Void)? in
            if signal == .stop, stopDeadline == nil { stopDeadline = monotonicNow() + grace }
            if self.handler == nil { pending.append(signal) }
            return self.handler
        }
        handler?(signal)
    }

    /// When the grace period of a stop ends, if a stop was asked.
    var deadline: Double? { lock.withLock { stopDeadline } }

    /// The grace period is over and the process is still here: remove the socket and exit.
    func graceExpired() {
        removeSocket()
        forcedExit("the daemon did not stop within \(grace) s of the signal (its event loop is busy); removed its socket and exited")
    }

    /// Writes `reason` to standard error, as a journal error, and exits with status 0: the
    /// stop that was asked for happened (the process is gone, its socket file removed, so a
    /// service manager counts it clean and a new motiond can start), and the journal keeps
    /// the reason. Clients got no goodbye; a stuck loop is the watchdog's to report.
    static let exitNow: @Sendable (String) -> Void = { reason in
        let line = "<3>motiond: \(reason)\n"
        _ = line.withCString { Glibc.write(2, $0, strlen($0)) }
        _exit(0)
    }
}

/// The thread that takes SIGHUP, SIGTERM and SIGINT, synchronously, with `sigtimedwait`:
/// no handler runs asynchronously, and a signal sent at any moment is either pending or
/// taken. It passes each to a ``SignalRelay``, and ends the process if a stop outlasts the
/// relay's grace period.
final class SignalThread {
    private let thread: JoinableThread

    /// Starts taking the signals for `relay`; returns once the thread has them blocked.
    init(relay: SignalRelay) throws(StartupFailure) {
        let ready = DispatchSemaphore(value: 0)
        thread = try JoinableThread(name: "motiond signals") {
            // Already so in motiond (main blocked them first); in a test process, until this
            // is done, a signal sent to the thread would take its default action.
            var set = DaemonSignal.set
            pthread_sigmask(SIG_BLOCK, &set, nil)
            ready.signal()
            while true {
                var info = siginfo_t()
                let number: Int32
                if let deadline = relay.deadline {
                    let left = deadline - monotonicNow()
                    guard left > 0 else {
                        relay.graceExpired()
                        return
                    }
                    var timeout = timespec(tv_sec: Int(left), tv_nsec: Int((left - left.rounded(.down)) * 1e9))
                    number = sigtimedwait(&set, &info, &timeout)
                } else {
                    number = sigwaitinfo(&set, &info)
                }
                // -1: the deadline passed (EAGAIN) or a stray interruption (EINTR); look again.
                if number > 0, let signal = DaemonSignal(number: number) { relay.received(signal) }
            }
        }
        ready.wait()
    }

    /// The thread, for a test that sends it a signal with `pthread_kill`.
    var handle: pthread_t { thread.handle }

    /// Waits for the thread to end (after a forced exit that returned, in tests).
    func join(timeout: Double) -> Bool { thread.join(timeout: timeout) }
}

