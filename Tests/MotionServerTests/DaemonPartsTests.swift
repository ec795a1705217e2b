import Logging
import NIOCore
import NIOEmbedded
import Testing
@testable import MotionServer

@Suite("The daemon's parts: kept in the order they started, stopped in reverse")
struct DaemonPartsTests {
    final class Journal { var lines: [String] = [] }

    /// A part that says when it stops, joining `parts` once it has started, as the daemon's do.
    static func started(_ name: String, _ journal: Journal, on loop: EventLoop, into parts: inout DaemonParts) {
        parts.append(DaemonPart(name: name) { journal.lines.append(name); return loop.makeSucceededVoidFuture() })
    }

    /// DaemonService starts the scene on the loop, then the input and the listeners off it
    /// (gathered in a list of their own, which joins the scene's once the rest starts on the
    /// loop), then the replay and the loop's probe. However the parts were gathered, they
    /// must be kept in the order they started: a join the wrong way round would stop the
    /// scene (the clients' goodbye) before the input, whose last touches would reach no one.
    @Test("parts started off the loop join those started on it in start order: a stop reverses the whole start, and a start that failed half-way stops what it started, in reverse")
    func startOrder() {
        let loop = EmbeddedEventLoop()
        let logger = Logger(label: "parts") { _ in SwiftLogNoOpLogHandler() }
        let journal = Journal()
        var service = DaemonParts()
        Self.started("scene", journal, on: loop, into: &service)
        var outside = DaemonParts()
        for name in ["input", "socket", "web listener"] { Self.started(name, journal, on: loop, into: &outside) }
        service.append(contentsOf: outside)
        for name in ["replay", "loop probe"] { Self.started(name, journal, on: loop, into: &service) }
        _ = service.stopAll(on: loop, lock: DaemonLock(), logger: logger)
        #expect(journal.lines == ["loop probe", "replay", "web listener", "socket", "input", "scene"])

        // The socket failed to start: what started stops, the input before the scene.
        journal.lines = []
        var failed = DaemonParts()
        Self.started("scene", journal, on: loop, into: &failed)
        var beforeFailure = DaemonParts()
        Self.started("input", journal, on: loop, into: &beforeFailure)
        failed.append(contentsOf: beforeFailure)
        _ = failed.stopAll(on: loop, lock: DaemonLock(), logger: logger)
        #expect(journal.lines == ["input", "scene"])
    }

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
        let stopped = parts.stopAll(on: loop, lock: DaemonLock(), logger: logger)
        #expect(journal.lines == ["web", "socket"])
        closed.succeed()
        #expect(journal.lines == ["web", "socket", "input", "scene"])
        // Completed by now: read without waiting, so a stop that never completes fails here
        // instead of waiting for ever.
        var results: [Result<Void, any Error>] = []
        stopped.whenComplete { results.append($0) }
        parts.stopAll(on: loop, lock: DaemonLock(), logger: logger).whenComplete { results.append($0) }
        #expect(results.count == 2 && results.allSatisfy { (try? $0.get()) != nil })
        #expect(journal.lines == ["web", "socket", "input", "scene"])
    }
}
