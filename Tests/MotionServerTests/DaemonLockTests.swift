import Dispatch
import Foundation
import Glibc
import MotionCore
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOWebSocket
import Testing
import TouchInput
@testable import MotionServer

/// The daemon's lock: a reading thread runs its batch itself when the daemon is free, and
/// otherwise leaves it to the holder, who runs it as it lets go; nothing is stranded, nothing
/// runs in the middle of the holder's work, and what the loop does meanwhile keeps its order.
@Suite("Daemon lock", .timeLimit(.minutes(1)))
struct DaemonLockTests {
    static func removed(_ number: Int) -> TouchInputEvent {
        .skippedRemoved(node: "/dev/input/event\(number)")
    }

    static var thisThread: UInt { UInt(pthread_self()) }

    @Test("a batch delivered while the daemon is free runs at once, on the thread that delivered it")
    func freeRunsHere() throws {
        let lock = DaemonLock()
        let ranOn = NIOLockedValueBox<[UInt]>([])
        let queue = InputQueue(lock: lock) { _, _ in ranOn.withLockedValue { $0.append(Self.thisThread) } }
        queue.deliver([Self.removed(1)])
        #expect(ranOn.withLockedValue { $0 } == [Self.thisThread])
        #expect(!lock.isHeldByThisThread, "let go once the batch ran")
    }

    @Test("a batch delivered while another thread holds the daemon runs on that thread as it lets go, after its work, not during it")
    func heldRunsAtRelease() throws {
        let lock = DaemonLock()
        let order = NIOLockedValueBox<[String]>([])
        let queue = InputQueue(lock: lock) { batch, _ in order.withLockedValue { $0.append("batch of \(batch.count) on \(Self.thisThread)") } }
        let holding = DispatchSemaphore(value: 0)
        let delivered = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let holder = NIOLockedValueBox<UInt>(0)
        Thread {
            holder.withLockedValue { $0 = Self.thisThread }
            lock.withLock {
                // Nested, as the loop's callbacks nest: the batch waits for the outermost release.
                lock.withLock {
                    holding.signal()
                    _ = delivered.wait(timeout: .now() + 10)
                    order.withLockedValue { $0.append("inner work done") }
                }
                order.withLockedValue { $0.append("outer work done") }
            }
            finished.signal()
        }.start()
        try #require(holding.wait(timeout: .now() + 10) == .success)
        queue.deliver([Self.removed(1)])
        queue.deliver([Self.removed(2)])
        #expect(order.withLockedValue { $0 }.isEmpty, "the delivering thread did not wait for the lock, nor run the batch")
        delivered.signal()
        try #require(finished.wait(timeout: .now() + 10) == .success)
        let thread = holder.withLockedValue { $0 }
        #expect(order.withLockedValue { $0 } == ["inner work done", "outer work done", "batch of 2 on \(thread)"])
    }

    @Test("nothing is stranded: while one thread takes and lets go of the daemon over and over, every event another delivers is run by the time both are done")
    func nothingStranded() throws {
        let lock = DaemonLock()
        let count = 20_000
        let handled = NIOLockedValueBox(0)
        // Events that are never coalesced, so that each one counts.
        let queue = InputQueue(lock: lock) { batch, coalesced in
            handled.withLockedValue { $0 += batch.count + coalesced }
        }
        let stop = NIOLockedValueBox(false)
        let loopDone = DispatchSemaphore(value: 0)
        Thread {
            while !stop.withLockedValue({ $0 }) { lock.withLock {} }
            loopDone.signal()
        }.start()
        for number in 0..<count { queue.deliver([Self.removed(number)]) }
        stop.withLockedValue { $0 = true }
        try #require(loopDone.wait(timeout: .now() + 20) == .success)
        #expect(handled.withLockedValue { $0 } == count)
    }

    @Test("a timer the daemon cancels does not run, even when the loop had already taken it and was waiting for the lock")
    func cancelledTimer() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        let lock = DaemonLock()
        let scheduler = EventLoopFrameScheduler(eventLoop: loop, lock: lock)
        let ran = NIOLockedValueBox(false)
        let markerRan = DispatchSemaphore(value: 0)
        // The loop is kept busy, from before both are scheduled until both are due, so that
        // it takes them up together (NIO takes every task due in one batch): the marker first,
        // then the daemon's timer, a millisecond later, which then waits for the lock.
        let busy = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let due = NIODeadline.now() + .milliseconds(1)
        let timerDue = Double(due.uptimeNanoseconds) / 1e9 + 0.001
        loop.execute {
            started.signal()
            _ = busy.wait(timeout: .now() + 10)
            while NIODeadline.now().uptimeNanoseconds < UInt64(timerDue * 1e9) + 10_000 {}
        }
        try #require(started.wait(timeout: .now() + 10) == .success, "the loop never ran")
        _ = loop.scheduleTask(deadline: due) { markerRan.signal() }
        lock.lock()
        let cancel = scheduler.schedule(at: timerDue) { ran.withLockedValue { $0 = true } }
        busy.signal()
        try #require(markerRan.wait(timeout: .now() + 10) == .success, "the loop never ran the marker")
        cancel()
        lock.unlock()
        try loop.submit {}.wait()
        #expect(!ran.withLockedValue { $0 })
    }

    @Test("lines written off the loop reach the client before a reply the loop writes after them, though the loop was already waiting to write it")
    func offLoopOrder() throws {
        let pair = try ChannelPair()
        defer { pair.close() }
        let channel = pair.channel
        let lock = DaemonLock()
        // Through NIO's channel, as a WebSocket's lines and whatever waited always are.
        let output = try channel.eventLoop.submit { UncheckedSendable(ChannelOutput(channel: channel, lock: lock)) }.wait()
        lock.lock()
        // The loop waits for the lock to write a reply, as a request that came in does.
        channel.eventLoop.execute { lock.withLock { output.value.sendNow(Array("reply\n".utf8)[...]) } }
        // Meanwhile a frame is run off the loop, holding the lock.
        output.value.sendNow(Array("frame\n".utf8)[...])
        lock.unlock()
        try channel.eventLoop.submit { lock.withLock { output.value.close(saying: nil) } }.wait()
        let (received, error) = pair.readToEnd()
        #expect(error == nil, "the connection did not end: \(error ?? "")")
        #expect(String(decoding: received, as: UTF8.self) == "frame\nreply\n")
    }

    @Test("a WebSocket's close frame, which its handler sends on the loop, goes after the lines written off the loop before it")
    func webSocketCloseAfterLines() throws {
        let pair = try ChannelPair()
        defer { pair.close() }
        let channel = pair.channel
        try channel.pipeline.addHandler(WebSocketFrameEncoder()).wait()
        let lock = DaemonLock()
        let output = try channel.eventLoop.submit { UncheckedSendable(ChannelOutput(channel: channel, lock: lock, framing: .webSocket)) }.wait()
        var body = channel.allocator.buffer(capacity: 2)
        body.write(webSocketErrorCode: .normalClosure)
        lock.lock()
        // The loop waits for the lock to close, as a client's close frame that came in does.
        channel.eventLoop.execute { [body] in lock.withLock { output.value.closeWebSocket(with: body) } }
        output.value.sendNow(Array("frame\n".utf8)[...], ranges: [0..<6])
        lock.unlock()
        let (received, error) = pair.readToEnd()
        #expect(error == nil, "the connection did not end: \(error ?? "")")
        // A text frame "frame" (FIN, opcode 1, unmasked, 5 bytes), then the close frame (opcode 8) with code 1000.
        #expect(received == [0x81, 5] + Array("frame".utf8) + [0x88, 2, 0x03, 0xE8])
    }

    /// A queue handing its batches to a loop of its own when behind, whose handler notes where
    /// each batch ran and takes three times the reading budget for the nodes in `slow`.
    private final class BehindLoopBench {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop: any EventLoop
        let loopThread: UInt
        let ran = NIOLockedValueBox<[(node: String, thread: UInt)]>([])
        private(set) var queue: InputQueue!

        init(slow: Set<String>) throws {
            loop = group.next()
            loopThread = try loop.submit { DaemonLockTests.thisThread }.wait()
            queue = InputQueue(lock: DaemonLock(), behindLoop: loop) { [ran] batch, _ in
                for case .skippedRemoved(let node) in batch {
                    ran.withLockedValue { $0.append((node, DaemonLockTests.thisThread)) }
                    if slow.contains(node) { usleep(useconds_t(InputQueue.readingBudget * 3_000_000)) }
                }
            }
        }

        deinit { try? group.syncShutdownGracefully() }

        /// Keeps the loop busy until the semaphore is signalled, so that what it is handed
        /// meanwhile cannot run early.
        func busyLoop() -> DispatchSemaphore {
            let busy = DispatchSemaphore(value: 0)
            loop.execute { _ = busy.wait(timeout: .now() + 10) }
            return busy
        }

        func deliver(_ number: Int) { queue.deliver([DaemonLockTests.removed(number)]) }

        /// Once the loop has run every task handed to it so far (tasks run in order).
        func loopCaughtUp() throws { try loop.submit {}.wait() }

        var nodes: [String] { ran.withLockedValue { $0.map(\.node) } }
        var threads: [UInt] { ran.withLockedValue { $0.map(\.thread) } }
    }

    @Test("a reading thread whose batch ran longer than its budget hands the next ones to the loop, which runs them while the thread goes on delivering; once the loop caught up, the thread runs its batches again")
    func behindHandsToLoop() throws {
        let bench = try BehindLoopBench(slow: ["/dev/input/event1"])
        let busy = bench.busyLoop()
        bench.deliver(1)
        bench.deliver(2)
        #expect(bench.nodes == ["/dev/input/event1"], "the second batch waits for the loop")
        busy.signal()
        try bench.loopCaughtUp()
        bench.deliver(3)
        #expect(bench.nodes == ["/dev/input/event1", "/dev/input/event2", "/dev/input/event3"])
        #expect(bench.threads == [Self.thisThread, bench.loopThread, Self.thisThread])
    }

    @Test("while the loop's own runs of the batches take longer than the budget, the loop keeps them: the reading thread runs none until one of the loop's runs is within it")
    func slowLoopKeepsTheBatches() throws {
        let bench = try BehindLoopBench(slow: ["/dev/input/event1", "/dev/input/event2"])
        let busy = bench.busyLoop()
        bench.deliver(1)
        bench.deliver(2)
        busy.signal()
        try bench.loopCaughtUp()
        // The loop's run of the second batch was slow too: the third is the loop's as well.
        let busyAgain = bench.busyLoop()
        bench.deliver(3)
        #expect(bench.nodes == ["/dev/input/event1", "/dev/input/event2"], "the third batch waits for the loop")
        busyAgain.signal()
        try bench.loopCaughtUp()
        // That run was within the budget: the thread runs the fourth.
        bench.deliver(4)
        #expect(bench.nodes == ["/dev/input/event1", "/dev/input/event2", "/dev/input/event3", "/dev/input/event4"])
        #expect(bench.threads == [Self.thisThread, bench.loopThread, bench.loopThread, Self.thisThread])
    }
}
