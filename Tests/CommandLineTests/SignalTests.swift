import Foundation
import Glibc
import SeededRandom
import Testing

/// SIGTERM must stop motiond at whatever moment it comes: during start-up, before READY=1,
/// while the socket is being bound, or later, on a loaded machine.
extension Daemons {
    @Suite("Signals")
    struct SignalTests {
        /// The daemon under test: the built product, or MOTIOND_UNDER_TEST (to measure another build).
        static var motiond: String {
            ProcessInfo.processInfo.environment["MOTIOND_UNDER_TEST"] ?? Run.productsDirectory.appendingPathComponent("motiond").path
        }

        static let recording = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("data/recordings/atmel-maxtouch-drag-up-down.evemu").path

        /// Each run is started the way a parent that blocks the signals starts it (a test runner
        /// may): a SIGTERM sent before motiond's `main` runs is then pending, not fatal, and
        /// `main` must take it, so every moment from exec on tests the daemon's own code. (With
        /// the default mask, a SIGTERM before `main` kills the process by the kernel's default
        /// action, which is out of the daemon's hands and harmless: no socket exists yet.)
        @Test("200 starts with the CPUs loaded, each sent SIGTERM 0–300 ms after exec: every one exits 0 within 2 s (not counting time it was runnable or waiting for a CPU) and removes its socket", .seeded)
        func sigtermAtAnyMoment() throws {
            let binary = Self.motiond
            guard FileManager.default.isExecutableFile(atPath: binary) else { throw Run.Missing(path: binary) }
            var random = TestSeed.generator()
            let plans = (0..<200).map { index in
                Plan(index: index, delay: Double(random.next() % 300_001) / 1e6, replay: index % 2 == 0)
            }
            let directory = try TemporaryDirectory()
            let load = try [ChildProcess.busyLoop(), ChildProcess.busyLoop()]
            defer { load.forEach { $0.kill() } }

            // Four at a time, to keep the test under a minute and a half on two loaded cores;
            // each daemon still gets its own SIGTERM at its own moment.
            let path = directory.path
            let failures = FailureList()
            let queue = PlanQueue(plans)
            let finished = DispatchGroup()
            for _ in 0..<4 {
                finished.enter()
                Thread.detachNewThread {
                    while let plan = queue.take() {
                        if let failure = Self.cycle(plan, binary: binary, directory: path) { failures.add(failure) }
                    }
                    finished.leave()
                }
            }
            // Each run takes at most 2 s blocked, or 30 s in all when it could not get a CPU.
            #expect(finished.wait(timeout: .now() + 400) == .success, "the cycles did not finish within 400 s")
            withExtendedLifetime(directory) {}
            let found = failures.all
            if !found.isEmpty { Issue.record("\(found.count) of 200 runs failed:\n\(found.prefix(5).joined(separator: "\n\n"))") }
        }

        struct Plan: Sendable {
            var index: Int
            /// Seconds after exec.
            var delay: Double
            var replay: Bool
        }

        /// One start and SIGTERM; nil if motiond exited 0 within 2 s and removed its socket,
        /// else what went wrong, with its standard error.
        static func cycle(_ plan: Plan, binary: String, directory: String) -> String? {
            let socket = "\(directory)/\(plan.index).sock"
            let log = "\(directory)/\(plan.index).log"
            var arguments = ["--socket", socket]
            if plan.replay { arguments += ["--replay", recording] }
            let describe = "run \(plan.index) (\(plan.replay ? "--replay" : "udev"), SIGTERM at \(Int(plan.delay * 1000)) ms)"
            let daemon: ChildProcess
            do { daemon = try ChildProcess(binary, arguments, log: log, blockingSignals: true) } catch { return "\(describe): \(error)" }
            let started = monotonic()
            sleep(until: started + plan.delay)
            daemon.signal(SIGTERM)
            let (status, runnable) = daemon.waitBlocked(seconds: 2, atMost: 30)
            let stderr = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            guard let status else {
                daemon.kill()
                return "\(describe): still running after 2 s blocked since SIGTERM (and \(String(format: "%.1f", runnable)) s runnable or waiting for a CPU); killed. Its standard error:\n\(stderr)"
            }
            if status != 0 { return "\(describe): ended with status \(status) (over 128: killed by signal status − 128). Its standard error:\n\(stderr)" }
            if FileManager.default.fileExists(atPath: socket) { return "\(describe): exited 0 but left \(socket). Its standard error:\n\(stderr)" }
            return nil
        }
    }
}

/// A child process started with `posix_spawn`, so that the test controls its signal mask and
/// can wait for it with a deadline (Foundation's `Process` reaps on a thread of its own).
private final class ChildProcess: @unchecked Sendable {
    let pid: pid_t
    private var reaped = false

    /// Starts `path` with `arguments`, standard output and error into `log` (or nowhere),
    /// optionally with SIGHUP, SIGINT and SIGTERM blocked, all three with default actions.
    init(_ path: String, _ arguments: [String], log: String?, blockingSignals: Bool) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var signals = sigset_t()
        sigemptyset(&signals)
        for number in [SIGHUP, SIGINT, SIGTERM] { sigaddset(&signals, number) }
        var mask = sigset_t()
        sigemptyset(&mask)
        if blockingSignals { mask = signals }
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setsigdefault(&attributes, &signals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
        guard result == 0 else { throw Run.Missing(path: "\(path) (posix_spawn: \(String(cString: strerror(result))))") }
        self.pid = pid
    }

    /// `sh -c 'while :; do :; done'`: a process that keeps a CPU busy.
    static func busyLoop() throws -> ChildProcess {
        try ChildProcess("/bin/sh", ["-c", "while :; do :; done"], log: nil, blockingSignals: false)
    }

    func signal(_ number: Int32) { Glibc.kill(pid, number) }

    /// The exit status (128 + the signal if a signal ended it), or nil if it is still
    /// running at `deadline` (seconds on the monotonic clock).
    func wait(until deadline: Double) -> Int32? {
        while true {
            var status: Int32 = 0
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid {
                reaped = true
                // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import.
                return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + status & 0x7f
            }
            if result < 0 { return -1 }
            guard monotonic() < deadline else { return nil }
            usleep(2000)
        }
    }

    /// ``wait(until:)`` until the process has spent `seconds` blocked (none of its threads
    /// runnable, nor waiting on a run queue for a CPU), or `cap` seconds in all; with how long
    /// it was runnable meanwhile. On a loaded machine (the suite's labs run QEMU beside this
    /// test) a runnable daemon can wait for a CPU for longer than the limit itself; a daemon
    /// that hangs blocked still fails at `seconds`, and one that spins at `cap`.
    ///
    /// Sampled every 5 ms: an interval counts as blocked when no thread is runnable at its end
    /// (`/proc/PID/task/TID/stat`), less the run-queue waits that ended within it (schedstat's
    /// second field, the longest of any thread), which the end's state cannot show.
    func waitBlocked(seconds: Double, atMost cap: Double) -> (status: Int32?, runnable: Double) {
        let start = monotonic()
        var last = start, blocked = 0.0
        var waits = threads().waits
        while true {
            if let status = wait(until: 0) { return (status, monotonic() - start - blocked) }
            let now = monotonic()
            let (runnable, newWaits) = threads()
            let waited = newWaits.map { $0.value - (waits[$0.key] ?? 0) }.max() ?? 0
            if !runnable { blocked += Swift.max(0, now - last - waited) }
            waits = newWaits
            last = now
            if blocked >= seconds || now - start >= cap { return (nil, now - start - blocked) }
            usleep(5000)
        }
    }

    /// Whether any of the process's threads is runnable (state R), and the seconds each has
    /// waited on a run queue so far, by thread id.
    private func threads() -> (runnable: Bool, waits: [Int: Double]) {
        guard let ids = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return (false, [:]) }
        var runnable = false
        var waits: [Int: Double] = [:]
        for thread in ids {
            guard let id = Int(thread) else { continue }
            // The state follows the command name, which is in parentheses and may hold spaces.
            if let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/stat", encoding: .utf8),
               let close = stat.lastIndex(of: ")"), stat[close...].dropFirst(2).first == "R" {
                runnable = true
            }
            if let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/schedstat", encoding: .utf8) {
                let fields = text.split(separator: " ")
                if fields.count >= 2, let nanoseconds = Double(fields[1]) { waits[id] = nanoseconds / 1e9 }
            }
        }
        return (runnable, waits)
    }

    /// SIGKILL, then reap.
    func kill() {
        guard !reaped else { return }
        Glibc.kill(pid, SIGKILL)
        _ = wait(until: monotonic() + 10)
    }
}

/// A directory removed at the end.
private final class TemporaryDirectory {
    let path: String
    init() throws {
        var template = Array("\(NSTemporaryDirectory())/motiond-signals-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Run.Missing(path: "a temporary directory") }
        path = String(cString: made)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// The failures the workers found.
private final class FailureList: @unchecked Sendable {
    private let lock = NSLock()
    private var failures: [String] = []
    func add(_ failure: String) { lock.withLock { failures.append(failure) } }
    var all: [String] { lock.withLock { failures } }
}

/// Hands out the plans one by one to the workers.
private final class PlanQueue: @unchecked Sendable {
    private let lock = NSLock()
    private let plans: [Daemons.SignalTests.Plan]
    private var next = 0
    init(_ plans: [Daemons.SignalTests.Plan]) { self.plans = plans }
    func take() -> Daemons.SignalTests.Plan? {
        lock.withLock {
            guard next < plans.count else { return nil }
            defer { next += 1 }
            return plans[next]
        }
    }
}

/// Seconds on the monotonic clock.
private func monotonic() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// Sleeps until `deadline` on the monotonic clock.
private func sleep(until deadline: Double) {
    let left = deadline - monotonic()
    guard left > 0 else { return }
    var time = timespec(tv_sec: Int(left), tv_nsec: Int((left - left.rounded(.down)) * 1e9))
    var remaining = timespec()
    while nanosleep(&time, &remaining) != 0 && errno == EINTR { time = remaining }
}
