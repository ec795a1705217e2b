import Foundation
import Glibc
import Testing

extension Daemons {
    /// Reloads give back what they replace: the example configuration (its TUIO targets and
    /// a WebSocket listener included) reloaded a thousand times, each reload awaited through
    /// its READY=1, costs the daemon less than 1 MiB of memory. Today's cost was 22 KB each.
    @Suite("Reload memory")
    struct ReloadMemoryTests {
        static func residentKiB(_ pid: Int32) throws -> Int {
            let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
            let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
            return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
        }

        @Test("1,000 reloads of the example configuration with a listener grow RSS by less than 1 MiB")
        func thousandReloads() throws {
            let example = try String(contentsOf: EndToEnd.repository.appendingPathComponent("config/motiond.toml"), encoding: .utf8)
            let daemon = try RunningDaemon(["--replay", DaemonTests.bundled], configuration: example + "\n[websocket]\nlisten = \"127.0.0.1:0\"\n")
            func reload(_ times: Int) throws {
                for _ in 0..<times {
                    daemon.signal(SIGHUP)
                    try daemon.waitFor("READY=1")
                }
            }
            try reload(50)  // what the first reloads allocate for good (caches, arenas)
            let before = try Self.residentKiB(daemon.process.processIdentifier)
            try reload(1_000)
            let after = try Self.residentKiB(daemon.process.processIdentifier)
            #expect(after - before < 1024, "RSS grew from \(before) KiB to \(after) KiB over 1,000 reloads")
            #expect(daemon.log(containing: "reloaded").contains("reloaded"))
            #expect(daemon.stop().status == 0)
        }
    }
}
