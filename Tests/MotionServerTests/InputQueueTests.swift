import Foundation
import MotionCore
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing
import TouchInput
@testable import MotionConfiguration
@testable import MotionServer
import MotionWire

@Suite("Input queue", .timeLimit(.minutes(1)))
struct InputQueueTests {
    /// Holds `lock` on another thread until the returned semaphore is signalled: the daemon
    /// busy with the loop's work. Returns once it is held.
    static func holdElsewhere(_ lock: DaemonLock) throws -> DispatchSemaphore {
        let held = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        Thread {
            lock.withLock {
                held.signal()
                _ = release.wait(timeout: .now() + 30)
            }
        }.start()
        try #require(held.wait(timeout: .now() + 10) == .success, "the other thread never took the lock")
        return release
    }

    private func moved(_ time: Double) -> TouchInputEvent {
        .frame(TouchFrame(time: time, contacts: [TouchContact(slot: 0, trackingID: 1, phase: .moved, deviceX: 0, deviceY: 0, position: Point(x: time, y: 0))]),
               from: DeviceIdentity(number: 0, node: "/dev/input/event0"))
    }

    @Test("frames that queue up while the daemon is busy reach it as one batch, coalesced to the newest")
    func behind() throws {
        let lock = DaemonLock()
        let batches = NIOLockedValueBox<[(times: [Double], coalesced: Int)]>([])
        let handled = DispatchSemaphore(value: 0)
        let queue = InputQueue(lock: lock) { batch, coalesced in
            let times = batch.compactMap { event -> Double? in
                if case let .frame(frame, _, _) = event { return frame.time }
                return nil
            }
            batches.withLockedValue { $0.append((times, coalesced)) }
            handled.signal()
        }
        // The daemon is busy until released: everything delivered meanwhile waits in the queue.
        let release = try Self.holdElsewhere(lock)
        for step in 0..<50 { queue.deliver([moved(Double(step))]) }
        queue.deliver([.removed(DeviceIdentity(number: 1, node: "/dev/input/event1"))])
        queue.deliver([moved(50)])
        release.signal()
        #expect(handled.wait(timeout: .now() + 10) == .success, "the batch was never handled")
        let seen = batches.withLockedValue { $0 }
        #expect(seen.count == 1)
        #expect(seen.first?.times == [49, 50], "the newest frame before the removal, and the one after it")
        #expect(seen.first?.coalesced == 49)
    }

    @Test("a batch delivered by emptying it arrives as one given by copy: the sender's array is left empty, and events behind others are appended in order")
    func emptying() throws {
        let lock = DaemonLock()
        let batches = NIOLockedValueBox<[[Double]]>([])
        let handled = DispatchSemaphore(value: 0)
        let queue = InputQueue(lock: lock) { batch, _ in
            batches.withLockedValue { $0.append(batch.compactMap { if case let .frame(frame, _, _) = $0 { frame.time } else { nil } }) }
            handled.signal()
        }
        let release = try Self.holdElsewhere(lock)
        // Into an empty queue (swapped), then behind what waits (appended), then by copy.
        var batch = [moved(1), .removed(DeviceIdentity(number: 1, node: "/dev/input/event1")), moved(2)]
        queue.deliver(emptying: &batch)
        #expect(batch.isEmpty)
        batch = [moved(3)]
        queue.deliver(emptying: &batch)
        #expect(batch.isEmpty)
        queue.deliver([.removed(DeviceIdentity(number: 2, node: "/dev/input/event2")), moved(4)])
        release.signal()
        #expect(handled.wait(timeout: .now() + 10) == .success, "the batch was never handled")
        // 1 before the removal; 2 and 3 coalesced to 3 before the next; then 4.
        #expect(batches.withLockedValue { $0 } == [[1, 3, 4]])
    }

    @Test("when the daemon keeps up, every frame arrives")
    func keepingUp() throws {
        let times = NIOLockedValueBox<[Double]>([])
        let handled = DispatchSemaphore(value: 0)
        let queue = InputQueue(lock: DaemonLock()) { batch, _ in
            for case let .frame(frame, _, _) in batch { times.withLockedValue { $0.append(frame.time) } }
            handled.signal()
        }
        for step in 0..<20 {
            queue.deliver([moved(Double(step))])
            // Each frame handled before the next is sent: a loop that keeps up.
            #expect(handled.wait(timeout: .now() + 10) == .success)
        }
        #expect(times.withLockedValue { $0 } == (0..<20).map(Double.init))
    }
}
