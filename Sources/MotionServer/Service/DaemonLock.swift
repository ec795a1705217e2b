import Glibc
import NIOCore
import Synchronization

/// The lock the daemon runs under: whoever holds it may touch the daemon and everything it
/// reaches (its scene, clients, sinks, timers), whatever thread it is on.
///
/// Why a lock and not the event loop's thread: a frame read by the input thread (or the
/// replay's) is run there, by the thread that woke for it, instead of being handed to the
/// loop and waking a second thread. At one client most of a frame's CPU is wake-ups, not
/// work (docs/performance.md, "One thread a frame"). The loop takes the lock for whatever it
/// brings the daemon: a request, a connection, a timer, a scrape.
///
/// A reading thread never waits for the lock. Its batch goes into its ``InputQueue`` and it
/// only *tries* the lock: if someone holds it, the holder runs what waits when it lets go
/// (``unlock()``). So a busy loop never blocks the reading, frames that gather meanwhile are
/// coalesced as before, and a stop may hold the lock while it joins the input thread.
///
/// The lock is recursive: the loop's own callbacks nest (closing a channel fires its
/// handler's `channelInactive` in the same call; a `reload` request reaches the service's
/// reload from inside the daemon), as they did when the loop alone ran the daemon.
final class DaemonLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// How many times the holder holds it; under the mutex.
    private var depth = 0
    /// The holding thread (`pthread_self`), 0 for none: for ``isHeldByThisThread``.
    private let owner = Atomic<UInt>(0)
    /// Whether a queue was handed a batch that nobody has run yet. Set after the batch is
    /// queued, cleared by the holder that runs it, and read by every holder just after it
    /// lets go: a batch whose thread found the lock taken is so run by the holder, or, if it
    /// came just as the holder let go, by whoever takes the lock next.
    private let waiting = Atomic<Bool>(false)
    /// The queues whose waiting batches the holder runs as it lets go, until they close
    /// (``remove(_:)``); under the mutex. Not held weakly: a weak reference gives a queue a
    /// side table, and loading it cost every batch a retain and a release on the runtime's
    /// slow path.
    private var queues: [InputQueue] = []
    /// Work a holder off the loop left for the loop (``forLoop(_:_:)``), by loop; under the
    /// mutex.
    private var loopWork: [(loop: any EventLoop, work: () -> Void)] = []

    init() {
        mutex = .allocate(capacity: 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` holding the lock, waiting for it if need be; the batches that waited run
    /// as it lets go.
    func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }

    func lock() {
        pthread_mutex_lock(mutex)
        took()
    }

    /// Takes the lock if nobody else holds it (this thread may); false if someone does.
    func tryLock() -> Bool {
        guard pthread_mutex_trylock(mutex) == 0 else { return false }
        took()
        return true
    }

    private func took() {
        depth += 1
        if depth == 1 { owner.store(UInt(pthread_self()), ordering: .relaxed) }
    }

    /// Lets go. The outermost release first runs the batches that wait; once let go, it looks
    /// again, since one may have come meanwhile, and runs it unless someone else has taken the
    /// lock (who then will). So on the loop a batch may run at the end of any callback that
    /// took the lock (a line read, a channel gone, a write completed), not only between them.
    ///
    /// The hand-shake with ``runSoon()`` (store the flag, then try; let go, then load the
    /// flag) leans on the failed `trylock` and the release being ordered with the flag's
    /// sequentially consistent store and load. Swift's memory model does not promise that of
    /// a mutex; glibc's mutexes (atomic read-modify-writes, full barriers on x86-64, and
    /// acquire-release pairs with the sequentially consistent accesses on ARMv8) give it.
    func unlock() {
        guard depth == 1 else {
            depth -= 1
            pthread_mutex_unlock(mutex)
            return
        }
        repeat {
            if waiting.exchange(false, ordering: .sequentiallyConsistent) {
                for queue in queues { queue.runWaiting() }
            }
            // Taken out, not copied: nothing to retain when nothing was left for the loop.
            var handOver: [(loop: any EventLoop, work: () -> Void)] = []
            if !loopWork.isEmpty { swap(&handOver, &loopWork) }
            depth = 0
            owner.store(0, ordering: .relaxed)
            pthread_mutex_unlock(mutex)
            handToLoops(handOver)
        } while waiting.load(ordering: .sequentiallyConsistent) && tryLock()
    }

    /// Has `loop` do `work` under this lock, in one task for everything a holder left it, once
    /// the holder has let go. Only once: a loop woken while the lock is still held would
    /// preempt the holder, find the lock taken and sleep again, two context switches more a
    /// frame (a WebSocket client's lines, written by NIO, cost that much). Call it holding
    /// the lock.
    func forLoop(_ loop: any EventLoop, _ work: @escaping () -> Void) {
        loopWork.append((loop, work))
    }

    private func handToLoops(_ handOver: [(loop: any EventLoop, work: () -> Void)]) {
        guard let first = handOver.first else { return }
        // One task a loop (motiond has one; a test may have several).
        let (now, later) = (handOver.filter { $0.loop === first.loop }, handOver.filter { $0.loop !== first.loop })
        let work = UncheckedSendable(now.map(\.work))
        first.loop.execute { self.withLock { for action in work.value { action() } } }
        handToLoops(later)
    }

    /// A queue holds a batch: it runs now if the lock is free, else when its holder lets go.
    func runSoon() {
        waiting.store(true, ordering: .sequentiallyConsistent)
        if tryLock() { unlock() }
    }

    /// A queue holds a batch that someone else will run: the holder, as it lets go, or the
    /// loop the queue handed its batches to (``InputQueue``).
    func noteWaiting() {
        waiting.store(true, ordering: .sequentiallyConsistent)
    }

    /// Whether this thread holds the lock: what the daemon's entry points check in debug
    /// builds, so that a way into the daemon that forgot the lock fails its tests.
    var isHeldByThisThread: Bool {
        owner.load(ordering: .relaxed) == UInt(pthread_self())
    }

    /// Has `queue`'s waiting batches run by whoever lets go of the lock, until it closes.
    func add(_ queue: InputQueue) {
        withLock { queues.append(queue) }
    }

    /// Runs `queue`'s batches no more: it closed (``InputQueue/closeAndRunWaiting()``).
    func remove(_ queue: InputQueue) {
        withLock { queues.removeAll { $0 === queue } }
    }
}

/// A value carried to another thread whose uses are kept apart otherwise: by the daemon's
/// lock (a callback that takes it), or by a serial queue (the state writer's file).
struct UncheckedSendable<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
