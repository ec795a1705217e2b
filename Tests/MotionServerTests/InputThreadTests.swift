import Foundation
import Glibc
import Logging
import NIOConcurrencyHelpers
import Testing
@testable import MotionConfiguration
@testable import MotionServer

/// The input thread's life: it starts watching udev (which works without any input device),
/// and a stop ends it and releases what it opened.
@Suite("Input thread", .timeLimit(.minutes(1)))
struct InputThreadTests {
    /// What /proc/self/fd shows for each open descriptor ("pipe:[1234]", "socket:[…]", a path).
    private static func openFiles() -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return entries.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)") }
    }

    @Test("stop ends the thread, waits for it, closes its wake pipe, and nothing is delivered afterwards")
    func stopReleasesEverything() throws {
        let delivered = NIOLockedValueBox(0)
        let input = try InputThread(configuration: .builtInDefault, logger: Logger(label: "test")) { _ in
            delivered.withLockedValue { $0 += 1 }
        }
        // The pipe by identity ("pipe:[inode]"), since other tests open and close
        // descriptors meanwhile and may reuse the numbers.
        let wake = try #require(input.wake)
        var status = stat()
        try #require(fstat(wake.read, &status) == 0)
        let pipe = "pipe:[\(status.st_ino)]"
        try #require(Self.openFiles().contains(pipe))
        #expect(input.stop(timeout: 10), "the input thread did not end")
        #expect(!Self.openFiles().contains(pipe), "the wake pipe is still open after stop")
        let count = delivered.withLockedValue { $0 }
        input.update(.builtInDefault)
        #expect(delivered.withLockedValue { $0 } == count)
    }
}
