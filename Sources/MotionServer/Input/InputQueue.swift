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
/// thread goes back to reading, until it has caught up: frames that gather meanwhile are
/// coalesced in the queue, where no landing or lift is lost.
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
    /// Whether the loop has the batches, until it has run what waited.
    private let handedToLoop = Atomic<Bool>(false)

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
        // The loop has them: it runs this batch too, as it lets go or once it has caught up.
        if handedToLoop.load(ordering: .sequentiallyConsistent) { return daemonLock.noteWaiting() }
        guard let loop = behindLoop else { return daemonLock.runSoon() }
        let start = monotonicNow()
        daemonLock.runSoon()
        if monotonicNow() - start > Self.readingBudget { handToLoop(loop) }
    }

    /// The reading thread ran its batches for longer than it may: the loop runs the next ones
    /// until nothing waits, then lets the thread run them again. Whatever was queued while the
    /// loop had them, it runs after it gives them back (the thread saw them handed over).
    private func handToLoop(_ loop: any EventLoop) {
        handedToLoop.store(true, ordering: .sequentiallyConsistent)
        loop.execute { [self] in
            daemonLock.withLock { runWaiting() }
            handedToLoop.store(false, ordering: .sequentiallyConsistent)
            daemonLock.withLock { runWaiting() }
        }
    }

    /// Drops whatever is delivered from now on; what was queued before still runs.
    func close() {
        lock.withLock { open = false }
    }

    /// Closes the queue, then runs what waited: how a stop makes sure the input thread's last
    /// batch (the contacts it cancelled) reached the daemon, whether or not the caller holds
    /// the daemon's lock.
    func closeAndRunWaiting() {
        close()
        daemonLock.withLock { runWaiting() }
    }

    /// Runs what waits, if anything does; only under the daemon's lock (``DaemonLock``
    /// calls it as it is let go, and a stop once the input thread has ended).
    func runWaiting() {
        lock.withLock { swap(&events, &taken) }
        guard !taken.isEmpty else { return }
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
