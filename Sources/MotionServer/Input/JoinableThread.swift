import FoundationEssentials
import Glibc
import NIOConcurrencyHelpers

/// A POSIX thread that can be joined with a bound: the daemon's input and signal threads.
///
/// Foundation's `Thread` cannot be joined, so a stop could not know when a thread has
/// really ended (and may close what it uses). A bound keeps a stuck thread from holding
/// the daemon's exit hostage.
final class JoinableThread: @unchecked Sendable {
    /// The thread, for `pthread_kill`.
    private(set) var handle = pthread_t()
    private let ended = ConditionLock(value: false)
    private var joined = false

    /// Starts `body` on a new thread called `name` (15 characters show in `ps`).
    init(name: String, _ body: @escaping @Sendable () -> Void) throws(StartupFailure) {
        let ended = self.ended
        let work = Unmanaged.passRetained(Work {
            JoinableThread.nameThisThread(name)
            body()
            ended.lock()
            ended.unlock(withValue: true)
        }).toOpaque()
        let result = pthread_create(&handle, nil, { raw in
            Unmanaged<Work>.fromOpaque(raw!).takeRetainedValue().body()
            return nil
        }, work)
        guard result == 0 else {
            Unmanaged<Work>.fromOpaque(work).release()
            throw .threadNotStarted(name: name, errno: result)
        }
    }

    /// Waits until the thread has ended, at most `timeout` seconds; true if it has (and
    /// its resources are released), false if it is still running.
    func join(timeout: Double) -> Bool {
        if joined { return true }
        guard ended.lock(whenValue: true, timeoutSeconds: Swift.max(0, timeout)) else { return false }
        ended.unlock()
        // The body has returned; the thread is leaving, so this join is immediate.
        pthread_join(handle, nil)
        joined = true
        return true
    }

    deinit {
        // Never joined (it outlived its bound): let it release itself when it ends.
        if !joined { pthread_detach(handle) }
    }

    /// Whether the body has returned.
    var hasEnded: Bool { ended.withLock { ended.value } }

    /// Names the calling thread, as `ps -L` and `top -H` show it (the kernel keeps 15 bytes).
    /// Through /proc, since Glibc's module does not export `pthread_setname_np`.
    static func nameThisThread(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    private final class Work {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }
}

private extension ConditionLock {
    func withLock<R>(_ body: () -> R) -> R {
        lock()
        defer { unlock() }
        return body()
    }

}
