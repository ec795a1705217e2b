import MotionCore
import NIOConcurrencyHelpers
import NIOCore

/// Carries the input thread's messages to the event loop, in batches: the thread appends,
/// and the loop is woken once for whatever has gathered by the time it runs. When the loop
/// falls behind (a thousand clients to write to, input faster than it can process), the
/// frames that queued up are coalesced (``FrameCoalescing``), so the daemon works on the
/// newest state and its latency stays bounded instead of growing with the queue.
final class InputQueue: @unchecked Sendable {
    private let lock = NIOLock()
    private var messages: [InputMessage] = []
    private var wakeScheduled = false
    private let loop: any EventLoop
    private let handle: @Sendable ([InputMessage], _ coalesced: Int) -> Void

    /// A queue that hands batches to `handle`, on `loop`, with how many frames were left out.
    init(loop: any EventLoop, handle: @escaping @Sendable ([InputMessage], _ coalesced: Int) -> Void) {
        self.loop = loop
        self.handle = handle
    }

    /// Queues a message (from any thread); wakes the loop unless a wake is pending.
    func deliver(_ message: InputMessage) {
        let wake = lock.withLock { () -> Bool in
            messages.append(message)
            defer { wakeScheduled = true }
            return !wakeScheduled
        }
        if wake { loop.execute { self.drain() } }
    }

    private func drain() {
        let batch = lock.withLock { () -> [InputMessage] in
            wakeScheduled = false
            defer { messages.removeAll(keepingCapacity: true) }
            return messages
        }
        let kept = Self.coalesced(batch)
        handle(kept, batch.count - kept.count)
    }

    /// The batch with the frames that newer ones of the same device make redundant taken out.
    static func coalesced(_ batch: [InputMessage]) -> [InputMessage] {
        guard batch.count > 1 else { return batch }
        let keep = FrameCoalescing.keep(batch.map { message in
            if case let .frame(frame, device, _) = message { return .frame(device: device, frame) }
            return .barrier
        })
        guard keep.contains(false) else { return batch }
        return zip(batch, keep).compactMap { $1 ? $0 : nil }
    }
}
