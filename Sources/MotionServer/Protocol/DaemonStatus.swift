/// What `stats` reports of the daemon itself: since when it runs, the frames it took, and
/// how its configuration's last load went. The daemon counts; the dispatcher reads.
final class DaemonStatus {
    let startTime: Double
    var frames = 0
    /// Input frames left out because newer ones of the same device were already waiting
    /// (``FrameCoalescing``): the daemon was behind.
    var coalescedFrames = 0
    var configurationLoadedAt: Double
    var lastReloadError: String?
    /// Where the web listener serves the live page (`127.0.0.1:8765`); nil without one.
    var webAddress: String?

    init(now: Double) {
        startTime = now
        configurationLoadedAt = now
    }
}
