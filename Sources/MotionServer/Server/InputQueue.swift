import MotionCore
import NIOConcurrencyHelpers
import NIOCore
import TouchInput

/// Carries the input thread's events to the event loop, in batches: the thread appends,
/// and the loop is woken once for whatever has gathered by the time it runs. When the loop
/// falls behind (a thousand clients to write to, input faster than it can process), the
/// frames that queued up are coalesced (``FrameCoalescing``), so the daemon works on the
/// newest state and its latency stays bounded instead of growing with the queue.
final class InputQueue: @unchecked Sendable {
    private let lock = NIOLock()
    private var events: [TouchInputEvent] = []
    private var wakeScheduled = false
    private let loop: any EventLoop
    private let handle: @Sendable ([TouchInputEvent], _ coalesced: Int) -> Void

    /// A queue that hands batches to `handle`, on `loop`, with how many frames were left out.
    init(loop: any EventLoop, handle: @escaping @Sendable ([TouchInputEvent], _ coalesced: Int) -> Void) {
        self.loop = loop
        self.handle = handle
    }

    /// Queues an event (from any thread); wakes the loop unless a wake is pending.
    func deliver(_ event: TouchInputEvent) {
        let wake = lock.withLock { () -> Bool in
            events.append(event)
            defer { wakeScheduled = true }
            return !wakeScheduled
        }
        if wake { loop.execute { self.drain() } }
    }

    private func drain() {
        let batch = lock.withLock { () -> [TouchInputEvent] in
            wakeScheduled = false
            defer { events.removeAll(keepingCapacity: true) }
            return events
        }
        let kept = Self.coalesced(batch)
        handle(kept, batch.count - kept.count)
    }

    /// The batch with the frames that newer ones of the same device make redundant taken out.
    static func coalesced(_ batch: [TouchInputEvent]) -> [TouchInputEvent] {
        guard batch.count > 1 else { return batch }
        let keep = FrameCoalescing.keep(batch.map { event in
            if case let .frame(frame, device) = event { return .frame(device: device.number, frame) }
            return .barrier
        })
        guard keep.contains(false) else { return batch }
        return zip(batch, keep).compactMap { $1 ? $0 : nil }
    }
}
