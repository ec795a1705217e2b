import AllocationCounter
import MotionCore
import Testing
import TouchInput
import VirtualTouchscreenTestSupport
import MotionWire
@testable import MotionDaemon

/// motiond's own stage for a virtual touchscreen: from the input thread's read of a panel's
/// frame to the uinput write's return, in `/metrics` and in `stats`. Not timed: each frame is
/// given a read time seconds apart from the others' and far from its own stamp, so a latency
/// taken from the wrong time (the frame's stamp, the sink's own now) lands outside what the
/// writer's stamps allow.
@Suite("Virtual touchscreens: motiond's own latency")
struct VirtualTouchscreenLatencyTests {
    static let metric = "motiond_virtual_touchscreen_latency_seconds"

    /// The value of `name{output="HDMI-A-1"}` in the daemon's exposition.
    static func sample(_ name: String, in daemon: Daemon) throws -> Double {
        let text = String(decoding: daemon.metricsExposition(), as: UTF8.self)
        let prefix = name + #"{output="HDMI-A-1"} "#
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix(prefix) }, "no \(prefix) in:\n\(text)")
        return try #require(Double(line.dropFirst(prefix.count)), "\(line)")
    }

    @Test("one sample per panel frame written (none for a frame that writes nothing, nor for a cancel), each from that frame's read to its write's return, in /metrics and stats")
    func latencyPerFrameWritten() throws {
        let bench = try VirtualTouchscreenSinkTests.Bench()
        let device = try bench.device()
        let contact = VirtualTouchscreenSinkTests.contact
        let frames: [[TouchContact]] = [
            [contact(1, .began, 1000, 900)], [contact(1, .moved, 1000, 950)], [contact(1, .stationary, 1000, 950)],
            [contact(1, .moved, 1010, 960)], [contact(1, .ended, 1010, 960)],
        ]
        // Per frame written: the least and the most its latency can be (from its read to the
        // writer's stamp, and to after the frame was processed).
        var bounds: [(least: Double, most: Double)] = []
        for (index, contacts) in frames.enumerated() {
            let time = 10 + Double(index) * 0.01
            bench.clock.now = time
            bench.scheduler.advance(to: time)
            // Seconds ago, and each frame a second apart: the frame's own stamp (10.0x, on
            // the test's clock) is nowhere near it.
            let readAt = monotonicNow() - 2 - Double(index)
            let writes = device.writeTimes.count
            bench.daemon.input(.frame(TouchFrame(time: time, contacts: contacts), from: bench.panel, readAt: readAt))
            let after = monotonicNow()
            if device.writeTimes.count > writes, let written = device.writeTimes.last {
                bounds.append((written - readAt, after - readAt))
            }
        }
        try #require(bounds.count == 4, "frames written: \(bounds.count) of \(frames.count) (the stationary one writes nothing)")
        // Each write carries its frame's own time (10.0x), for the kernel to give the apps.
        #expect(device.stamps == [10, 10.01, 10.03, 10.04], "\(device.stamps)")
        // A cancel (a lock) writes, and has no panel frame to be timed from.
        _ = try bench.request(#"{"id": 1, "op": "lock", "for": 1}"#)

        #expect(try Self.sample(Self.metric + "_count", in: bench.daemon) == Double(bounds.count))
        let sum = try Self.sample(Self.metric + "_sum", in: bench.daemon)
        let least = bounds.map(\.least).reduce(0, +), most = bounds.map(\.most).reduce(0, +)
        #expect(sum >= least - 1e-6 && sum <= most + 1e-6, "sum \(sum), not within \(least)…\(most)")
        // Every latency is 2 s or more here: all in the top bucket, none in the lower ones.
        #expect(try Self.sample(Self.metric + #"_bucket"#, in: bench.daemon, bucket: "0.05") == 0)

        let latency = try #require(bench.daemon.virtualTouchscreens.counts.first?.counts.latency)
        #expect(latency.count == bounds.count)
        let entry = try #require(try bench.request(#"{"id": 2, "op": "stats"}"#)["virtual_touchscreens"]?.array?.first)
        // The median frame is the second slowest but two (read 3 s before), the p99 the slowest (5 s).
        let sorted = bounds.sorted { $0.least < $1.least }
        let p50 = try #require(entry["latency_p50"]?.number, "\(entry)"), p99 = try #require(entry["latency_p99"]?.number, "\(entry)")
        #expect(p50 >= sorted[1].least && p50 <= sorted[1].most * 1.13, "p50 \(p50), frames \(sorted)")
        #expect(p99 >= sorted[3].least && p99 <= sorted[3].most * 1.13, "p99 \(p99), frames \(sorted)")
    }

    @Test("timing a frame allocates nothing: a finger moving for 300 frames costs the daemon as many allocations timed as not")
    func timingAllocatesNothing() throws {
        /// Allocations on this thread for 300 frames of a moving finger, after 100 to warm up
        /// (the route, the histogram, the buffers' growth), each read `readAt` (nil: untimed).
        func allocations(timed: Bool) throws -> UInt64 {
            let bench = try VirtualTouchscreenSinkTests.Bench()
            let device = try bench.device()
            func play(_ frames: Range<Int>) {
                for index in frames {
                    let time = 10 + Double(index) * 0.008
                    bench.clock.now = time
                    bench.scheduler.advance(to: time)
                    let contact = VirtualTouchscreenSinkTests.contact(1, index == 0 ? .began : .moved, 1000 + Double(index % 100), 900)
                    bench.daemon.input(.frame(TouchFrame(time: time, contacts: [contact]), from: bench.panel, readAt: timed ? monotonicNow() : nil))
                }
            }
            play(0..<100)
            let before = allocation_count_of_this_thread()
            play(100..<400)
            let calls = allocation_count_of_this_thread().calls - before.calls
            #expect(device.frames.count == 400)
            return calls
        }
        let untimed = try allocations(timed: false), timed = try allocations(timed: true)
        #expect(timed == untimed, "\(timed) allocations timed, \(untimed) untimed, in 300 frames")
    }

    @Test("frames read from no panel (a replay's) time nothing, and stats says null")
    func untimedFrames() throws {
        let bench = try VirtualTouchscreenSinkTests.Bench()
        let device = try bench.device()
        bench.frame(10, VirtualTouchscreenSinkTests.contact(1, .began, 1000, 900))
        #expect(device.frames.count == 1)
        #expect(bench.daemon.virtualTouchscreens.counts.first?.counts.latency.count == 0)
        let entry = try #require(try bench.request(#"{"id": 1, "op": "stats"}"#)["virtual_touchscreens"]?.array?.first)
        #expect(entry["latency_p50"] == .null && entry["latency_p99"] == .null, "\(entry)")
    }
}

extension VirtualTouchscreenLatencyTests {
    /// The count of `name{output="HDMI-A-1",le="bucket"}`.
    static func sample(_ name: String, in daemon: Daemon, bucket: String) throws -> Double {
        let text = String(decoding: daemon.metricsExposition(), as: UTF8.self)
        let prefix = name + #"{output="HDMI-A-1",le=""# + bucket + #""} "#
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix(prefix) }, "no \(prefix) in:\n\(text)")
        return try #require(Double(line.dropFirst(prefix.count)), "\(line)")
    }
}
