import Foundation
import Glibc
import MotionCore
import DaemonTestSupport
import Testing
import TouchInput
@testable import MotionConfiguration
import MotionWire
@testable import MotionDaemon

/// What a virtual touchscreen did, seen: frames written, writes uinput refused, fingers
/// dropped and cancelled, in `devices`, `stats`, health and `/metrics`. The devices themselves
/// need uinput (the kernel lab's); here their counts are given as a device reports them.
@Suite("Virtual touchscreens' counts")
struct VirtualTouchscreenCountsTests {
    static let failing = VirtualTouchscreenReport(output: "HDMI-A-1", node: "/dev/input/event9",
        counts: VirtualTouchscreenCounts(framesWritten: 1388, writeFailures: 3, fingersDropped: 1, fingersCancelled: 2, lastWriteErrno: ENODEV, isFailing: true))

    static func health(_ reports: [VirtualTouchscreenReport]) -> HealthReport {
        HealthReport(devices: 1, skipped: [], sinceInput: nil, sinceTouch: nil, loopLag: nil, clients: [:], uptime: 10,
                     stateFailure: nil, virtualTouchscreens: reports)
    }

    @Test("health shows each device's counts, and is unhealthy while its writes fail, saying so; healthy again once one goes through")
    func health() throws {
        let report = Self.health([Self.failing])
        #expect(!report.isHealthy)
        let problem = try #require(report.problems.first)
        #expect(problem.kind == .virtualTouchscreenFailing && problem.about == "HDMI-A-1", "\(problem)")
        #expect(problem.message.contains("3 frames") && problem.message.contains(String(cString: strerror(ENODEV))), "\(problem)")
        let entry = try #require(try JSONInput(parsing: Array(report.json.encoded.utf8))["virtual_touchscreens"]?.array?.first)
        #expect(entry["frames_written"]?.integer == 1388 && entry["write_failures"]?.integer == 3)
        #expect(entry["fingers_dropped"]?.integer == 1 && entry["fingers_cancelled"]?.integer == 2)
        #expect(entry["last_write_error"]?.string == String(cString: strerror(ENODEV)))
        var recovered = Self.failing
        recovered.counts = recovered.counts.adding(VirtualTouchscreenCounts(framesWritten: 1))
        #expect(Self.health([recovered]).isHealthy, "\(Self.health([recovered]).problems)")
        #expect(recovered.counts.writeFailures == 3 && recovered.counts.lastWriteError != nil, "the count stays")
    }

    @Test("the metrics count frames written, writes refused and fingers dropped and cancelled, by output")
    func metrics() throws {
        let metrics = DaemonMetrics(version: "test")
        metrics.collect(DaemonMetrics.Snapshot(status: DaemonStatus(now: 0), devices: DeviceRegistry(), clients: [:], valuesCoalesced: 0,
                                               lastInput: nil, lastTouch: nil, loopLag: nil, tuio: [], process: nil,
                                               virtualTouchscreens: [Self.failing]))
        let text = String(decoding: metrics.exposition(), as: UTF8.self)
        for line in ["motiond_virtual_frames_written_total{output=\"HDMI-A-1\"} 1388", "motiond_virtual_write_failures_total{output=\"HDMI-A-1\"} 3",
                     "motiond_virtual_fingers_total{output=\"HDMI-A-1\",outcome=\"dropped\"} 1",
                     "motiond_virtual_fingers_total{output=\"HDMI-A-1\",outcome=\"cancelled\"} 2"] {
            #expect(text.contains(line), "no \(line) in:\n\(text)")
        }
        for name in ["motiond_virtual_frames_written_total", "motiond_virtual_write_failures_total", "motiond_virtual_fingers_total"] {
            #expect(text.contains("# TYPE \(name) counter") && text.contains("# HELP \(name) "), "\(name)")
        }
    }

    @Test("devices and stats list the virtual touchscreens, one not made with why")
    func replies() throws {
        let daemon = Daemon(configuration: try Configuration.parse("[[virtual_touchscreen]]\noutput = \"DP-1\"\n", file: "x.toml"), clock: ManualFrameClock(now: 1),
                            uinputPath: "/nonexistent/uinput", controlPolicy: { _ in true })
        _ = daemon.configureSinks()
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        _ = try output.take()
        for op in ["devices", "stats"] {
            daemon.receive(#"{"id": 1, "op": "\#(op)"}"#, from: session)
            let reply = try #require(try output.take().first)
            let entry = try #require(reply["result"]?["virtual_touchscreens"]?.array?.first, "\(op)")
            #expect(entry["output"]?.string == "DP-1" && entry["error"]?.string?.contains("does not exist") == true, "\(op): \(reply)")
        }
    }
}
