import MotionCore
import NIOConcurrencyHelpers
import NIOCore
import Synchronization
import TouchInput
import MotionWire

/// Carries a reading thread's events (the input thread's, the replay's) to the daemon, in
/// batches: the thread hands over what one poll of the hub reported, under the queue's own
/// lock, and the batch runs at once on that thread if the daemon is free (``DaemonLock``),
/// else as the loop, which holds it, lets go. When the daemon falls behind (a thousand
/// clients to write to, input faster than it can process), the frames that queued up are
/// coalesced (``FrameCoalescing``), so the daemon works on the newest state and its latency
/// stays bounded instead of growing with the queue.
///
/// A reading thread that runs its batches itself does not read meanwhile. Should a run take
/// longer than ``readingBudget`` (a daemon slower than its input: a debug build, a starved
/// machine), the kernel's buffer of a panel could fill and drop events (`SYN_DROPPED`: whole
/// touches lost). So then the batches go to the loop (``behindLoop``), which runs them while the
/// thread goes back to reading: frames that gather meanwhile are coalesced in the queue, where
/// no landing or lift is lost. The loop keeps them for as long as its own runs take longer
/// than the budget, and gives them back after the first that does not: a daemon that is slow
/// for a while (an emulated CPU, a loaded one) is then never run by the reading thread, which
/// had, with each batch it took back, stopped reading for as long as the batch took.
///
/// The same lock closes it (``close()``): once the input thread is stopped, whatever it
/// still hands over is dropped, since the daemon it goes to is stopping.
final class InputQueue: @unchecked Sendable {
    /// How long a reading thread may run batches at one go: a frame's time at 120 Hz. The
    /// kernel keeps at least eight frames of a panel (evdev's buffer), and a frame takes well
    /// under a millisecond in a release build.
    static let readingBudget = 0.008

    private let lock = NIOLock()
    /// What the thread handed over since the daemon last took it; under `lock`.
    private var events: [TouchInputEvent] = []
    private var open = true
    /// The batch the daemon works on: exchanged with `events` under the lock, so that neither
    /// side copies the other's and both keep their storage. Only touched under the daemon's lock.
    private var taken: [TouchInputEvent] = []
    private let daemonLock: DaemonLock
    private let handle: ([TouchInputEvent], _ coalesced: Int) -> Void
    /// Where the batches run while the reading thread is behind; nil: always on the thread.
    private let behindLoop: (any EventLoop)?
    /// Whether the loop has the batches, until one of its runs is within the budget.
    private let handedToLoop = Atomic<Bool>(false)
    /// Whether a run on the loop is due: the deliveries while the loop has the batches ask
    /// for one, one at a time.
    private let loopRunDue = Atomic<Bool>(false)
    /// How many batches have run; under the daemon's lock. A run on the loop that found its
    /// batches run already (by the lock's holder as it let go) says nothing of their cost.
    private var batchesRun = 0

    /// A queue that hands batches to `handle`, under `daemonLock`, with how many frames were
    /// left out. `handle` may run on any thread, but never on two at once. With `behindLoop`,
    /// batches go there while the reading thread is behind (``readingBudget``).
    init(lock daemonLock: DaemonLock, behindLoop: (any EventLoop)? = nil,
         handle: @escaping ([TouchInputEvent], _ coalesced: Int) -> Void) {
        self.daemonLock = daemonLock
        self.behindLoop = behindLoop
        self.handle = handle
        daemonLock.add(self)
    }

    /// Queues a batch (from any thread), unless the queue is closed, and runs it if the
    /// daemon is free. The events are copied: `batch` may be a buffer its sender keeps
    /// writing (the hub's).
    func deliver(_ batch: [TouchInputEvent]) {
        guard !batch.isEmpty else { return }
        enqueue { $0.append(contentsOf: batch) }
    }

    /// Queues the events in `batch` as ``deliver(_:)`` does, leaving it empty: when nothing
    /// waits, the queue's empty array and `batch` are swapped, so the events are moved, not
    /// copied, and the sender keeps an array's storage for its next batch (the replay's).
    func deliver(emptying batch: inout [TouchInputEvent]) {
        guard !batch.isEmpty else { return }
        enqueue { events in
            if events.isEmpty { swap(&events, &batch) } else { events.append(contentsOf: batch) }
        }
        batch.removeAll(keepingCapacity: true)
    }

    /// Adds to what waits with `add`, under the lock, unless the queue is closed; then has it
    /// run.
    private func enqueue(_ add: (inout [TouchInputEvent]) -> Void) {
        let queued = lock.withLock { () -> Bool in
            guard open else { return false }
            add(&events)
            return true
        }
        guard queued else { return }
        guard let loop = behindLoop else { return daemonLock.runSoon() }
        if handedToLoop.load(ordering: .sequentiallyConsistent) {
            // The loop has them: a holder of the lock runs this batch as it lets go, or the loop.
            daemonLock.noteWaiting()
            return runOnLoopSoon(loop)
        }
        let start = monotonicNow()
        daemonLock.runSoon()
        if monotonicNow() - start > Self.readingBudget {
            handedToLoop.store(true, ordering: .sequentiallyConsistent)
            runOnLoopSoon(loop)
        }
    }

    /// Has the loop run what waits, unless a run is due already (it will run this batch too:
    /// the flag is cleared before its run takes the batches).
    private func runOnLoopSoon(_ loop: any EventLoop) {
        guard !loopRunDue.exchange(true, ordering: .sequentiallyConsistent) else { return }
        loop.execute { [self] in runOnLoop() }
    }

    /// The loop runs what waits. If that ran a batch within the budget, the reading thread
    /// runs its batches again, and whatever it queued in between (having seen them handed
    /// over) runs now; if it took longer, the loop keeps them.
    private func runOnLoop() {
        loopRunDue.store(false, ordering: .sequentiallyConsistent)
        let start = monotonicNow()
        let ran = daemonLock.withLock { () -> Bool in
            let before = batchesRun
            runWaiting()
            return batchesRun != before
        }
        guard ran, monotonicNow() - start <= Self.readingBudget else { return }
        handedToLoop.store(false, ordering: .sequentiallyConsistent)
        daemonLock.withLock { runWaiting() }
    }

    /// Drops whatever is delivered from now on; what was queued before still runs.
    func close() {
        lock.withLock { open = false }
    }

    /// Closes the queue, then runs what waited: how a stop makes sure the input thread's last
    /// batch (the contacts it cancelled) reached the daemon, whether or not the caller holds
    /// the daemon's lock. The lock then lets go of the queue.
    func closeAndRunWaiting() {
        close()
        daemonLock.withLock {
            runWaiting()
            daemonLock.remove(self)
        }
    }

    /// Runs what waits, if anything does; only under the daemon's lock (``DaemonLock``
    /// calls it as it is let go, and a stop once the input thread has ended).
    func runWaiting() {
        lock.withLock { swap(&events, &taken) }
        guard !taken.isEmpty else { return }
        batchesRun &+= 1
        handleTaken()
        taken.removeAll(keepingCapacity: true)
    }

    /// Hands the taken batch to `handle`; a function of its own so that nothing holds the
    /// batch once it returns, and `taken` keeps its storage.
    private func handleTaken() {
        let kept = Self.coalesced(taken)
        handle(kept, taken.count - kept.count)
    }

    /// The batch with the frames that newer ones of the same device make redundant taken out.
    static func coalesced(_ batch: [TouchInputEvent]) -> [TouchInputEvent] {
        guard batch.count > 1 else { return batch }
        let keep = FrameCoalescing.keep(batch.map { event in
            if case let .frame(frame, device, _) = event { return .frame(device: device.number, frame) }
            return .barrier
        })
        guard keep.contains(false) else { return batch }
        return zip(batch, keep).compactMap { $1 ? $0 : nil }
    }
}
