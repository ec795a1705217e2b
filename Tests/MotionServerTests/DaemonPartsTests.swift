import Logging
import NIOCore
import NIOEmbedded
import Testing
@testable import MotionServer

@Suite("The daemon's parts: started in order, stopped in reverse")
struct DaemonPartsTests {
    final class Journal { var lines: [String] = [] }

    @Test("each part stops after the one started after it has finished stopping, even when that one failed; a second stop does nothing")
    func reverseOrder() {
        let loop = EmbeddedEventLoop()
        let journal = Journal()
        var parts = DaemonParts()
        // The socket's close completes later (as a channel's does); the next part waits for it.
        let closed = loop.makePromise(of: Void.self)
        parts.append(DaemonPart(name: "scene") { journal.lines.append("scene"); return loop.makeSucceededVoidFuture() })
        parts.append(DaemonPart(name: "input") { journal.lines.append("input"); return loop.makeSucceededVoidFuture() })
        parts.append(DaemonPart(name: "socket") { journal.lines.append("socket"); return closed.futureResult })
        parts.append(DaemonPart(name: "web") {
            journal.lines.append("web")
            return loop.makeFailedFuture(ChannelError.alreadyClosed)
        })
        let logger = Logger(label: "parts") { _ in SwiftLogNoOpLogHandler() }
        let stopped = parts.stopAll(on: loop, logger: logger)
        #expect(journal.lines == ["web", "socket"])
        closed.succeed()
        #expect(journal.lines == ["web", "socket", "input", "scene"])
        // Completed by now: read without waiting, so a stop that never completes fails here
        // instead of waiting for ever.
        var results: [Result<Void, any Error>] = []
        stopped.whenComplete { results.append($0) }
        parts.stopAll(on: loop, logger: logger).whenComplete { results.append($0) }
        #expect(results.count == 2 && results.allSatisfy { (try? $0.get()) != nil })
        #expect(journal.lines == ["web", "socket", "input", "scene"])
    }
}
