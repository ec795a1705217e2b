import Dispatch
import Foundation
import Glibc
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing
import TouchInput
@testable import MotionConfiguration
@testable import MotionServer
import MotionWire

/// The input thread's life: it starts watching udev (which works without any input device),
/// and a stop ends it and releases what it opened.
@Suite("Input thread", .timeLimit(.minutes(1)))
struct InputThreadTests {
    /// What /proc/self/fd shows for each open descriptor ("pipe:[1234]", "socket:[…]", a path).
    private static func openFiles() -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return entries.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)") }
    }

    @Test("stop ends the thread, waits for it, and closes its wake pipe; what it delivered is of the input devices here, and nothing comes after stop")
    func stopReleasesEverything() throws {
        /// The device node each delivered event is about.
        let delivered = NIOLockedValueBox<[String]>([])
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        let queue = InputQueue(lock: DaemonLock()) { batch, _ in
            delivered.withLockedValue { $0 += batch.map(Self.node(of:)) }
        }
        let input = try InputThread(configuration: .builtInDefault, logger: Logger(label: "test"), queue: queue)
        // The pipe by identity ("pipe:[inode]"), since other tests open and close
        // descriptors meanwhile and may reuse the numbers.
        let wake = try #require(input.wake)
        var status = stat()
        try #require(fstat(wake.read, &status) == 0)
        let pipe = "pipe:[\(status.st_ino)]"
        try #require(Self.openFiles().contains(pipe))
        #expect(input.stop(timeout: 10), "the input thread did not end")
        #expect(!Self.openFiles().contains(pipe), "the wake pipe is still open after stop")
        // What the thread handed over before stop returned reaches the loop before this does.
        try loop.submit {}.wait()
        let atStop = delivered.withLockedValue { $0 }
        // Every event names a node udev has under /dev/input (none at all on a machine, or in
        // a container, without input devices).
        let nodes = Set(((try? FileManager.default.contentsOfDirectory(atPath: "/dev/input")) ?? []).map { "/dev/input/" + $0 })
        #expect(atStop.allSatisfy(nodes.contains), "events about devices that are not here: \(atStop) (here: \(nodes.sorted()))")
        Thread.sleep(forTimeInterval: 0.2)
        #expect(delivered.withLockedValue { $0 } == atStop, "delivered after stop returned")
    }

    /// The node an input event is about.
    static func node(of event: TouchInputEvent) -> String {
        switch event {
        case let .frame(_, device, _), let .added(device, _, _), let .reconfigured(device, _), let .filterCounts(device, _),
             let .filtered(device, _), let .removed(device, _), let .eventsDropped(device, _):
            return device.node
        case let .skipped(node, _), let .skippedRemoved(node):
            return node
        }
    }

    @Test("a thread stuck past stop's bound keeps its pipe, and what it delivers once unstuck is dropped")
    func lateDeliveryDropped() throws {
        let delivered = NIOLockedValueBox<[String]>([])
        let unstick = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        // A thread that delivers, then sticks as in a device read that does not return, and
        // delivers again when let go.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        let queue = InputQueue(lock: DaemonLock()) { batch, _ in
            for case .skippedRemoved(let node) in batch { delivered.withLockedValue { $0.append(node) } }
        }
        let input = try InputThread(configuration: .builtInDefault, queue: queue) { _, queue, _, started in
            queue.deliver([.skippedRemoved(node: "before stop")])
            started.signal()
            _ = unstick.wait(timeout: .now() + 60)
            queue.deliver([.skippedRemoved(node: "after stop")])
            finished.signal()
        }
        #expect(!input.stop(timeout: 0.2), "stop waited for a thread that cannot end")
        #expect(input.wake != nil, "the pipe of a thread still running was closed")
        unstick.signal()
        // Once the thread has tried to deliver (it signals after), not at once.
        try #require(finished.wait(timeout: .now() + 10) == .success, "the thread did not finish once let go")
        try loop.submit {}.wait()
        #expect(delivered.withLockedValue { $0 } == ["before stop"])
        #expect(input.stop(timeout: 10), "the thread has ended: a second stop joins it")
        #expect(input.wake == nil)
    }

    @Test("the input thread runs at nice -8, above the rest of motiond, where it may; where it may not, it says why and keeps the process's priority")
    func readsAtAHigherPriority() throws {
        let seen = NIOLockedValueBox<(thread: Int32, caller: Int32)?>(nil)
        let caller = ReadingPriority.ofThisThread()
        let queue = InputQueue(lock: DaemonLock()) { _, _ in }
        let input = try InputThread(configuration: .builtInDefault, queue: queue) { _, _, _, started in
            seen.withLockedValue { $0 = (ReadingPriority.ofThisThread(), caller) }
            started.signal()
        }
        #expect(input.stop(timeout: 10))
        let (thread, before) = try #require(seen.withLockedValue { $0 })
        // The caller's own priority is untouched: the nice value is a thread's on Linux.
        #expect(ReadingPriority.ofThisThread() == before)
        if let refused = input.priorityRefused {
            // Not permitted here (no CAP_SYS_NICE, as a contributor's own user): the process's.
            #expect(refused == EACCES || refused == EPERM)
            #expect(thread == before)
        } else {
            #expect(thread == ReadingPriority.nice)
        }
    }
}
