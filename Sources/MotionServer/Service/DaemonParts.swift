import Logging
import NIOCore

/// A part of the running daemon (the scene, the input thread, a listener, the replay, the
/// loop's probe), in swift-service-lifecycle's shape: parts start in order, each once the
/// one before it is ready, and stop in reverse, each once the one started after it has
/// stopped; a start that fails half-way stops what it started, the same way.
///
/// motiond takes the shape rather than the library's `ServiceGroup`, which runs its
/// services as concurrent tasks with no readiness between them: motiond's start is a
/// sequence (the scene restored before the first client, the socket bound before systemd
/// hears `READY=1`) on one event loop, and some steps wait, which the loop must not.
struct DaemonPart: @unchecked Sendable {
    /// What the part is, for the log.
    let name: String
    /// Stops the part; called on the daemon's loop. The part started before it stops when
    /// the future completes. Only ever called there, hence `@unchecked Sendable`: a part
    /// holds what lives on the loop.
    let stop: () -> EventLoopFuture<Void>
}

/// The parts started so far, to stop in reverse.
struct DaemonParts: Sendable {
    private var started: [DaemonPart] = []

    mutating func append(_ part: DaemonPart) { started.append(part) }

    mutating func append(contentsOf parts: DaemonParts) { started += parts.started }

    /// Stops every part, the last started first, each once the one after it has stopped
    /// (or failed to: a listener already closed stops no other part); on `loop`, each under
    /// the daemon's `lock`. Nothing is left to stop after: a second call does nothing.
    mutating func stopAll(on loop: EventLoop, lock: DaemonLock, logger: Logger) -> EventLoopFuture<Void> {
        loop.preconditionInEventLoop()
        let parts = started.reversed()
        started = []
        var stopped = loop.makeSucceededVoidFuture()
        for part in parts {
            stopped = stopped.flatMap {
                lock.withLock { part.stop() }.recover { logger.debug("stopping the \(part.name): \($0)") }
            }
        }
        return stopped
    }
}
