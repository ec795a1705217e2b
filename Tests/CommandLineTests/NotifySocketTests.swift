import Foundation
import Glibc
import Testing

extension Daemons {
    /// systemd's notify socket is a queue of at most `net.unix.max_dgram_qlen` datagrams (10
    /// unless raised), and a send to a full one waits. motiond must not: with nothing reading
    /// the socket, its sixth reload once waited there for good, its reply and every touch
    /// behind it.
    @Suite("Notify socket")
    struct NotifySocketTests {
        /// More reloads than the queue holds messages (two each), by ten.
        static var reloadsPastQueue: Int {
            let length = (try? String(contentsOfFile: "/proc/sys/net/unix/max_dgram_qlen", encoding: .utf8))
                .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 10
            return length / 2 + 10
        }

        @Test("reloads are answered while nothing reads the notify socket, and what waited reaches it in order once read")
        func fullNotifySocket() throws {
            let daemon = try RunningDaemon([], configuration: "[screen]\nwidth = 800\nheight = 600\n")
            let client = try TestClient(daemon.socket)
            _ = try client.next()  // the hello
            let reloads = Self.reloadsPastQueue
            for id in 1...reloads {
                let reply = try client.request(#"{"id": \#(id), "op": "reload"}"#)
                #expect(reply["ok"] as? Bool == true, "reload \(id): \(reply)")
            }
            // Those that did not fit come once the queue is read.
            let told = daemon.notifications { received in received.count { $0.hasPrefix("READY=1") } >= reloads }
            #expect(told.count { $0 == "RELOADING=1" } == reloads)
            #expect(told.count { $0.hasPrefix("READY=1") } == reloads)
            let alternating = told.enumerated().allSatisfy { index, message in
                index.isMultiple(of: 2) ? message == "RELOADING=1" : message.hasPrefix("READY=1")
            }
            #expect(alternating, "told systemd, out of order: \(told)")
            let log = daemon.stop()
            #expect(log.status == 0)
            #expect(log.error.contains("notify socket is full"))
        }
    }
}
