import MotionCore
import NIOConcurrencyHelpers
import NIOCore
import TouchInput
import MotionWire

/// Carries the input thread's events to the event loop, in batches: the thread hands over
/// what one poll of the hub reported, under one lock, and the loop is woken once for
/// whatever has gathered by the time it runs. When the loop falls behind (a thousand clients
/// to write to, input faster than it can process), the frames that queued up are coalesced
/// (``FrameCoalescing``), so the daemon works on the newest state and its latency stays
/// bounded instead of growing with the queue.
///
/// The same lock closes it (``close()``): once the input thread is stopped, whatever it
/// still hands over is dropped, since the loop it goes to is stopping.
final class InputQueue: @unchecked Sendable {
    private let lock = NIOLock()
    /// What the thread handed over since the loop last took it; under `lock`.
    private var events: [TouchInputEvent] = []
    private var wakeScheduled = false
    private var open = true
    /// The batch the loop works on: exchanged with `events` under the lock, so that neither
    /// side copies the other's and both keep their storage. Only the loop touches it.
    private var taken: [TouchInputEvent] = []
    private let loop: any EventLoop
    private let handle: @Sendable ([TouchInputEvent], _ coalesced: Int) -> Void

    /// A queue that hands batches to `handle`, on `loop`, with how many frames were left out.
    init(loop: any EventLoop, handle: @escaping @Sendable ([TouchInputEvent], _ coalesced: Int) -> Void) {
        self.loop = loop
        self.handle = handle
    }

    /// Queues a batch (from any thread), unless the queue is closed; wakes the loop unless a
    /// wake is pending. The events are copied: `batch` may be a buffer its sender keeps
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

    /// Adds to what waits with `add`, under the lock, unless the queue is closed; wakes the
    /// loop unless a wake is pending.
    private func enqueue(_ add: (inout [TouchInputEvent]) -> Void) {
        let wake = lock.withLock { () -> Bool in
            guard open else { return false }
            add(&events)
            defer { wakeScheduled = true }
            return !wakeScheduled
        }
        if wake { loop.execute { self.drain() } }
    }

    /// Drops whatever is delivered from now on; what was queued before still reaches the loop.
    func close() {
        lock.withLock { open = false }
    }

    private func drain() {
        lock.withLock {
            wakeScheduled = false
            swap(&events, &taken)
        }
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
