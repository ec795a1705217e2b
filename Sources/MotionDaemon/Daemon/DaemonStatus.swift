import TouchInput
import MotionWire

/// What `stats`, `health` and the metrics report of the daemon itself: since when it runs,
/// what it counted, when a finger last touched, how its loop keeps up, and how its
/// configuration's last load went. The daemon counts, once, here; the dispatcher (`stats`)
/// and the metrics (at each scrape, ``DaemonMetrics/collect(_:)``) read the same counts, so
/// the two never disagree and a frame costs a few integer increments, not a metric's lock.
final class DaemonStatus {
    let startTime: Double
    var frames = 0
    /// Input frames left out because newer ones of the same device were already waiting
    /// (``FrameCoalescing``): the daemon was behind.
    var coalescedFrames = 0
    /// Reports that sent clients lines, and the value lines in them.
    var publishedFrames = 0
    var publishedValues = 0
    /// Connections made, and clients dropped for not reading, by transport.
    var connections: [ClientTransport: Int] = [:]
    var dropped: [ClientTransport: Int] = [:]
    var reloads = 0
    var reloadFailures = 0
    /// Per touchscreen: its frames and the fingers that landed.
    private(set) var devices = DeviceCounts()
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

    /// A frame of `device` was processed at `time`, with `touches` fingers that landed in it.
    func frame(of device: DeviceIdentity, touches: Int, at time: Double) {
        frames += 1
        lastInput = time
        if touches > 0 { lastTouch = time }
        devices.frame(of: device, touches: touches)
    }

    /// A touchscreen came: its counts start at 0, or go on from where they were.
    func deviceAdded(_ device: DeviceIdentity) {
        devices.added(device)
    }

    /// The configuration was loaded again, or refused for `error`.
    func reloaded(refusedFor error: String?) {
        if error == nil { reloads += 1 } else { reloadFailures += 1 }
        lastReloadError = error
    }

    /// A report went to the clients with `values` value lines.
    func published(values: Int) {
        publishedFrames += 1
        publishedValues += values
    }
}

/// The frames and touches of each touchscreen, by node (the metrics' `device` label), kept
/// over the daemon's life: a touchscreen unplugged and plugged again goes on counting.
struct DeviceCounts {
    struct Count {
        /// The node, or `device N` for a device with none (a test's).
        var node: String
        var frames = 0
        var touches = 0
    }

    private(set) var counts: [Count] = []
    private var byNode: [String: Int] = [:]
    /// The device numbers in use, for the frame path: one lookup a frame.
    private var byNumber: [Int: Int] = [:]

    mutating func added(_ device: DeviceIdentity) {
        byNumber[device.number] = index(of: device.node)
    }

    mutating func frame(of device: DeviceIdentity, touches: Int) {
        let index = byNumber[device.number] ?? numbered(device)
        counts[index].frames += 1
        counts[index].touches += touches
    }

    /// A device whose frames come before it was added (a test's): by its node, or its number
    /// when it has none.
    private mutating func numbered(_ device: DeviceIdentity) -> Int {
        let index = index(of: device.node.isEmpty ? "device \(device.number)" : device.node)
        byNumber[device.number] = index
        return index
    }

    private mutating func index(of node: String) -> Int {
        if let index = byNode[node] { return index }
        counts.append(Count(node: node))
        byNode[node] = counts.count - 1
        return counts.count - 1
    }
}
