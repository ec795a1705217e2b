/// What `stats`, `health` and the metrics report of the daemon itself: since when it runs,
/// the frames it took, when a finger last touched, how its loop keeps up, and how its
/// configuration's last load went. The daemon counts; the dispatcher reads.
final class DaemonStatus {
    let startTime: Double
    var frames = 0
    /// Input frames left out because newer ones of the same device were already waiting
    /// (``FrameCoalescing``): the daemon was behind.
    var coalescedFrames = 0
    /// When a frame was last processed, and when a finger last landed, on the daemon's clock.
    var lastInput: Double?
    var lastTouch: Double?
    /// How late the event loop ran its last timer check, in seconds; nil when nobody checks
    /// (a daemon without a service: tests, benchmarks).
    var loopLag: Double?
    /// Values coalesced for clients that have gone (those connected count their own).
    var coalescedByClosedClients = 0
    var configurationLoadedAt: Double
    var lastReloadError: String?
    /// Where the web listener serves the live page (`127.0.0.1:8765`); nil without one.
    var webAddress: String?

    init(now: Double) {
        startTime = now
        configurationLoadedAt = now
    }
}
