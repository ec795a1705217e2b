import Foundation
import Logging
import MotionCore
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing
import TouchInput
@testable import MotionConfiguration
@testable import MotionServer
import MotionWire
@testable import MotionDaemon

/// motiond's own stage for a virtual touchscreen, measured on a fake panel: the daemon's own
/// input thread reads a umockdev panel that scripts/measure-virtual-latency drives, the
/// frames go through the input queue and the event loop as in motiond, and the virtual
/// touchscreen's writer stamps the time of each write instead of going to uinput (which a
/// host without /dev/uinput lacks). Not a test: it runs only under that script
/// (`MOTIOND_LATENCY_WORK` names its folder), and says what it measured in `result.json`.
@Suite("Virtual touchscreen latency, measured on a umockdev panel",
       .enabled(if: ProcessInfo.processInfo.environment["MOTIOND_LATENCY_WORK"] != nil, "run by scripts/measure-virtual-latency"))
struct VirtualTouchscreenLatencyMeasurement {
    /// A virtual touchscreen's device that keeps only the time of each write: what it costs
    /// is an append into storage reserved beforehand.
    final class StampingWriter: VirtualDeviceWriter {
        let node = "/dev/input/event99"
        let syspath = ""
        private(set) var writes: [Double] = []

        init() { writes.reserveCapacity(1 << 16) }

        func write(_ events: [InputEvent], stamped time: Double?) -> Int32? {
            writes.append(monotonicNow())
            return nil
        }

        func close() {}
    }

    static let configuration = """
        [screen]
        width = 1920
        height = 1080

        [[device]]
        virtual_touchscreen = "HDMI-A-1"
        """

    @Test("measure")
    func measure() throws {
        let work = try #require(ProcessInfo.processInfo.environment["MOTIOND_LATENCY_WORK"])
        let configuration = try Configuration.parse(Self.configuration, file: "latency.toml")
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        // The daemon as motiond makes it, on its loop and under its lock (the input thread runs
        // the frames); only its virtual touchscreen differs.
        let lock = DaemonLock()
        let daemon = try loop.submit { () -> UncheckedSendable<Daemon> in
            let scheduler = EventLoopFrameScheduler(eventLoop: loop, lock: lock)
            let daemon = Daemon(configuration: configuration, clock: TimedFrameClock(rate: configuration.daemon.frameRate, scheduler: scheduler),
                                idleScheduler: scheduler, controlPolicy: { _ in true })
            daemon.virtualTouchscreens.makeDevice = { output, geometry in
                VirtualTouchscreen(output: output, geometry: geometry, writer: StampingWriter())
            }
            daemon.mayEnter = { lock.isHeldByThisThread }
            _ = lock.withLock { daemon.configureSinks() }
            return UncheckedSendable(daemon)
        }.wait()
        let added = NIOLockedValueBox(0)
        // The first part of the stage apart: from the read to the daemon taking the frame up
        // (the queue, and the wait for the lock when the loop holds it), for each frame taken.
        let handOver = NIOLockedValueBox(StageLatency())
        let queue = InputQueue(lock: lock) { batch, coalesced in
            daemon.value.framesCoalesced(coalesced)
            for event in batch {
                if case .added = event { added.withLockedValue { $0 += 1 } }
                if case let .frame(_, _, readAt?) = event { handOver.withLockedValue { $0.record(monotonicNow() - readAt) } }
                daemon.value.input(event)
            }
        }
        let input = try InputThread(configuration: configuration, logger: Logger(label: "latency"), queue: queue)
        defer { _ = input.stop(timeout: 10) }
        try Self.waitFor("the panel to be read", seconds: 30) { added.withLockedValue { $0 } > 0 }
        FileManager.default.createFile(atPath: work + "/ready", contents: nil)

        // The driver writes how many frames it sent when done; every frame moves the finger,
        // so each is written.
        var sent = 0
        try Self.waitFor("the panel's frames", seconds: 600) {
            sent = (try? String(contentsOfFile: work + "/done", encoding: .utf8)).flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 0
            return sent > 0
        }
        func latency() throws -> StageLatency {
            lock.withLock { daemon.value.virtualTouchscreens.devices["HDMI-A-1"]?.latency ?? StageLatency() }
        }
        // Every frame written, or as many as were when the count stops growing for a second
        // (frames coalesced, a filter's cancel): the result says how many.
        var written = -1
        try Self.waitFor("the frames to be written", seconds: 60) {
            let count = try latency().count
            defer { written = count }
            if count >= sent { return true }
            if count == written { usleep(1_000_000); return try latency().count == count }
            return false
        }
        let measured = try latency()
        let (coalesced, counts) = lock.withLock {
            (daemon.value.status.coalescedFrames, daemon.value.virtualTouchscreens.counts.first?.counts ?? VirtualTouchscreenCounts())
        }
        let queued = handOver.withLockedValue { $0 }
        let result = "{\"frames\": \(measured.count), \"sent\": \(sent), \"coalesced\": \(coalesced), \"cancelled\": \(counts.fingersCancelled), "
            + "\"p50\": \(measured.quantile(0.5) ?? -1), \"p99\": \(measured.quantile(0.99) ?? -1), \"max\": \(measured.quantile(1) ?? -1), "
            + "\"hand_over_p50\": \(queued.quantile(0.5) ?? -1), \"hand_over_p99\": \(queued.quantile(0.99) ?? -1)}\n"
        FileManager.default.createFile(atPath: work + "/result.json", contents: Data(result.utf8))
    }

    /// Polls `done` every millisecond until it holds, failing after `seconds`.
    static func waitFor(_ what: String, seconds: Double, _ done: () throws -> Bool) throws {
        let deadline = monotonicNow() + seconds
        while try !done() {
            guard monotonicNow() < deadline else { throw MeasurementTimeout(what: what, seconds: seconds) }
            usleep(1000)
        }
    }

    struct MeasurementTimeout: Error, CustomStringConvertible {
        let what: String
        let seconds: Double
        var description: String { "waited \(seconds) s for \(what)" }
    }
}
