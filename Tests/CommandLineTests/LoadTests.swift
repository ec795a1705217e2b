import Foundation
import Glibc
import Testing

/// motiond under hostile clients, load and exhausted descriptors, end to end.
extension Daemons {
    @Suite("motiond under load and faults")
    struct LoadTests {
        static let bundled = DaemonTests.bundled
        static let loadScript = EndToEnd.repository.appendingPathComponent("scripts/load-clients").path

        @Test("hostile patterns are refused by the daemon's bounds (128 bytes a pattern, 64 a request), naming them, while a fast client keeps receiving every value")
        func hostilePatterns() throws {
            let daemon = try RunningDaemon(["--replay", Self.bundled, "--loop", "--speed", "20"])
            let fast = try TestClient(daemon.socket)
            _ = try fast.next()
            _ = try fast.request(#"{"id": 1, "op": "subscribe", "streams": ["surface.position"]}"#)
            let hostile = try TestClient(daemon.socket)
            _ = try hostile.next()
            let lines = [
                #"{"id": 1, "op": "subscribe", "streams": [""# + String(repeating: "*", count: 30) + #"#"]}"#,
                #"{"id": 2, "op": "subscribe", "streams": [""# + String(repeating: "*", count: 60_000) + #""]}"#,
                #"{"id": 3, "op": "subscribe", "streams": ["# + (0..<10_000).map { #""\#(String($0, radix: 36))""# }.joined(separator: ",") + "]}",
            ]
            var sequence: [Int] = []
            func readFast(_ count: Int) throws {
                for _ in 0..<count {
                    guard let message = try fast.next() else { break }
                    if let seq = message["seq"] as? Int { sequence.append(seq) }
                }
            }
            // The 30 stars match nothing (the bounded matcher's work is pattern × name, measured
            // in the benchmarks, not here); the others are refused before any matching.
            let refusals = ["unknown_stream", "at most 128 are allowed", "a request may hold at most 64"]
            for (index, line) in lines.enumerated() {
                let reply = try hostile.request(line)
                #expect(reply["ok"] as? Bool == false && reply["id"] as? Int == index + 1, "\(reply)")
                let error = reply["error"] as? [String: Any]
                #expect(error?["code"] as? String == refusals[index] || (error?["message"] as? String)?.contains(refusals[index]) == true, "\(reply)")
                try readFast(50)
            }
            #expect(sequence.count > 100)
            #expect(zip(sequence.dropFirst(), sequence).allSatisfy { $0 == $1 + 1 }, "the fast client missed values")
            #expect(daemon.stop().status == 0)
        }

        /// Runs scripts/load-clients against the debug motiond; its JSON result.
        private func loadScript(_ arguments: [String]) throws -> [String: Any] {
            let run = try Run("/usr/bin/python3", [Self.loadScript, "--motiond", Run.productsDirectory.appendingPathComponent("motiond").path, "--json"] + arguments)
            let line = try #require(run.lines.last, "no result: \(run.error)")
            return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(run.output)\n\(run.error)")
        }

        @Test("100 subscribers to *, 150 clients that never read and an endless line: the fast client gets every seq, the endless line is refused")
        func boundedLoad() throws {
            let result = try loadScript(["--subscribers", "100", "--idle", "150", "--seconds", "6"])
            #expect(result["fast_seq_gaps"] as? Int == 0, "\(result)")
            #expect(result["fast_closed"] as? Bool == false)
            let loaded = try #require(result["loaded"] as? [String: Any])
            #expect((loaded["fast_values_per_s"] as? Double ?? 0) > 5, "\(result)")
            #expect((result["endless_line_refusals"] as? Int ?? 0) >= 1, "the endless line was refused")
            // Memory under this load is the measuring tool's figure (scripts/load-clients prints
            // rss_mib); what the daemon enforces is each client's 4 MiB of pending output.
            #expect(result["exit"] as? Int == 0)
        }

        @Test("out of descriptors (ulimit -n 256, 400 connections): connected clients keep receiving, new ones get a bye, and are accepted again later")
        func descriptorExhaustion() throws {
            let result = try loadScript(["--descriptors", "--nofile", "256", "--attempts", "400"])
            let hellos = result["hello"] as? Int ?? 0, refused = result["refused_with_bye"] as? Int ?? 0
            #expect(hellos > 0 && refused > 0, "\(result)")
            #expect(hellos + refused == 400, "every attempt got an answer: \(result)")
            #expect((result["reader_values_while_full"] as? Int ?? 0) > 0, "\(result)")
            #expect(result["reader_seq_gaps"] as? Int == 0)
            #expect(result["hello_after_freeing"] as? Bool == true, "\(result)")
            #expect(result["exit"] as? Int == 0)
        }

        @Test("a socket path longer than sun_path is an error for motiond and motionctl, not cut short")
        func longSocketPath() throws {
            // A daemon on a path of exactly 107 bytes, the most that fits.
            let directory = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: directory) }
            let fits = directory.path + "/" + String(repeating: "s", count: 107 - directory.path.utf8.count - 1)
            let daemon = try RunningDaemon(["--replay", Self.bundled], socket: fits)
            // One byte more: cut short, it would name the running daemon's socket.
            let tooLong = fits + "x"
            let motionctl = try Run("motionctl", ["status", "--socket", tooLong])
            #expect(motionctl.status != 0)
            #expect(motionctl.error.contains("at most 107"), "\(motionctl.error)")
            let second = try Run("motiond", ["--replay", Self.bundled, "--socket", tooLong])
            #expect(second.status != 0)
            #expect(second.error.contains("at most 107"), "\(second.error)")
            #expect(FileManager.default.fileExists(atPath: fits), "the running daemon's socket is untouched")
            #expect(try TestClient(fits).next()?["event"] as? String == "hello")
            #expect(daemon.stop().status == 0)
        }
    }
}
