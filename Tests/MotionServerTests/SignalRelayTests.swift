import Foundation
import Glibc
import NIOConcurrencyHelpers
import Testing
@testable import MotionConfiguration
@testable import MotionServer

/// The signal thread and relay, in this process: signals go to the thread alone
/// (`pthread_kill`), and the forced exit is recorded instead of ending the process.
@Suite("Signal relay", .timeLimit(.minutes(1)))
struct SignalRelayTests {
    /// What the relay did, from the signal thread.
    final class Record: @unchecked Sendable {
        private let lock = NIOLock()
        private var _signals: [DaemonSignal] = []
        private var _exits: [String] = []
        var signals: [DaemonSignal] { lock.withLock { _signals } }
        var exits: [String] { lock.withLock { _exits } }
        func signal(_ signal: DaemonSignal) { lock.withLock { _signals.append(signal) } }
        func exit(_ reason: String) { lock.withLock { _exits.append(reason) } }
    }

    /// A listening socket file, as motiond leaves one while it runs.
    private static func socketFile() throws -> String {
        let path = NSTemporaryDirectory() + "/motiond-relay-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { bytes in
            for (index, byte) in path.utf8.enumerated() { bytes[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0 && FileManager.default.fileExists(atPath: path))
        return path
    }

    @Test("SIGTERM while the event loop never gets to it: after the grace period the socket file is removed and the process exits")
    func stopWhileTheLoopIsBusy() throws {
        let record = Record()
        let relay = SignalRelay(grace: 0.3) { record.exit($0) }
        let path = try Self.socketFile()
        defer { unlink(path) }
        relay.socketBound(path)
        // The daemon's handler hands the signal to a loop that is busy: nothing comes of it.
        relay.run { record.signal($0) }
        let thread = try SignalThread(relay: relay)
        pthread_kill(thread.handle, SIGTERM)
        // The thread ends after the forced exit (which, here, returns).
        #expect(thread.join(timeout: 10), "the signal thread did not give up on the loop")
        #expect(record.signals == [.stop])
        #expect(record.exits.count == 1)
        #expect(!FileManager.default.fileExists(atPath: path), "the forced exit left the socket file")
    }

    @Test("signals before the daemon runs are kept: a stop during start-up is handed over when it runs, and wins over a reload")
    func signalsBeforeRunning() throws {
        let record = Record()
        let relay = SignalRelay(grace: 0.3) { record.exit($0) }
        let thread = try SignalThread(relay: relay)
        pthread_kill(thread.handle, SIGHUP)
        pthread_kill(thread.handle, SIGTERM)
        // Wait (with a deadline) until the thread has taken the SIGTERM.
        let deadline = Date().addingTimeInterval(10)
        while !relay.stopRequested && Date() < deadline { usleep(1000) }
        #expect(relay.stopRequested)
        relay.run { record.signal($0) }
        #expect(record.signals == [.stop])
        #expect(thread.join(timeout: 10))
    }

    @Test("SIGHUP reaches the running daemon as a reload, and never forces an exit")
    func reload() throws {
        let record = Record()
        let relay = SignalRelay(grace: 0.1) { record.exit($0) }
        let received = ConditionLock(value: 0)
        relay.run { signal in
            record.signal(signal)
            received.lock()
            received.unlock(withValue: 1)
        }
        let thread = try SignalThread(relay: relay)
        pthread_kill(thread.handle, SIGHUP)
        #expect(received.lock(whenValue: 1, timeoutSeconds: 10))
        received.unlock()
        #expect(record.signals == [.reload])
        #expect(!relay.stopRequested)
        // No stop, so no deadline: the thread keeps waiting and nothing forces an exit.
        #expect(!thread.join(timeout: 0.3))
        #expect(record.exits.isEmpty)
        // End it: a stop, then the grace period.
        pthread_kill(thread.handle, SIGTERM)
        #expect(thread.join(timeout: 10))
    }
}
