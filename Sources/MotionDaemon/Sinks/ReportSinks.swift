import MotionConfiguration
import MotionCore
import TouchInput
import MotionWire

/// A consumer of what the engine did, for as long as the daemon runs. The daemon has its
/// sinks in a list (``Daemon/sinks``), and reaches each the same way:
/// - **configured** (``configure(_:elements:time:)``) when the daemon starts (``Daemon/configureSinks()``),
///   and again whenever the configuration or the scene is made anew (a reload, `reset_scene`);
/// - given **each report**, in the list's order (``Daemon/publish(_:input:)``): the virtual
///   touchscreens, whose apps wait on them as the clients do; TUIO's receivers (``TUIOSink``),
///   over UDP, which never waits; the clients (``ClientsSink``), each client's lines in one
///   write; the state file (``SceneKeeper``), whose write a change of values schedules. A lock
///   reaches them in the report itself (``FrameReport/lockedFingers``): no sink can miss it;
/// - **finished** when the daemon stops (``Daemon/finish(reason:)``), in reverse order: the
///   scene on disk first, then the clients' goodbye, TUIO's last word, the devices removed.
///
/// A report comes from an input frame, the engine's timer, a spring's step or a command;
/// `input` says which frame, for the sinks that follow the fingers. The report is the engine's
/// storage: a sink reads it during the call and keeps nothing of it.
protocol ReportSink: AnyObject {
    /// Makes the sink ready for `configuration` and its scene's `elements` at `time`: what
    /// to say in the log about it.
    func configure(_ configuration: Configuration, elements: [Element], time: Double) -> [SinkNote]
    func take(_ report: FrameReport, input: FrameOrigin?)
    /// The daemon stops, for `reason` (what clients are told): the sink's last word to
    /// whoever it serves, and what to say in the log about it.
    func finish(reason: String) -> [SinkNote]
}

extension ReportSink {
    func configure(_ configuration: Configuration, elements: [Element], time: Double) -> [SinkNote] { [] }
    func finish(reason: String) -> [SinkNote] { [] }
}

/// What a sink says for the log when it is configured or finished, and whether it is a problem.
public struct SinkNote: Sendable, Equatable {
    public var line: String
    public var problem: Bool

    public init(_ line: String, problem: Bool = false) {
        self.line = line
        self.problem = problem
    }
}

/// Where a report came from when an input frame made it (not the frame itself, which the
/// engine has taken in): the device whose contacts it holds, the frame's time (for the
/// latency from input to the clients), and when the input thread read it, for a panel's
/// frame (for motiond's own latency to the apps, ``VirtualTouchscreens``).
struct FrameOrigin {
    let device: DeviceIdentity
    let time: Double
    var readAt: Double? = nil
}

/// The scene to TUIO's receivers: the fingers of each input frame, then the elements as
/// they are, whenever a frame came or values changed. The fingers a lock took leave at once.
final class TUIOSink: ReportSink {
    let receivers: TUIOReceivers
    private unowned let scene: DaemonScene

    init(_ receivers: TUIOReceivers, scene: DaemonScene) {
        self.receivers = receivers
        self.scene = scene
    }

    func configure(_ configuration: Configuration, elements: [Element], time: Double) -> [SinkNote] {
        receivers.configure(configuration, elements: elements, time: time)
        return []
    }

    func finish(reason: String) -> [SinkNote] {
        receivers.finish()
        return []
    }

    func take(_ report: FrameReport, input: FrameOrigin?) {
        let locking = !report.lockedFingers.isEmpty
        guard receivers.isActive, input != nil || report.elementValuesChanged || locking else { return }
        if locking { receivers.cancel(fingers: report.lockedFingers) }
        if input != nil { receivers.take(report.contacts, time: report.time) }
        receivers.publish(scene.engine.scene.elements, time: report.time)
    }
}

/// The report to the clients that subscribe to what it holds (``Publisher``); then the
/// streams that went are forgotten.
final class ClientsSink: ReportSink {
    private let clients: ClientHub
    private let status: DaemonStatus
    private let metrics: DaemonMetrics
    private let clock: FrameClock

    init(clients: ClientHub, status: DaemonStatus, metrics: DaemonMetrics, clock: FrameClock) {
        self.clients = clients
        self.status = status
        self.metrics = metrics
        self.clock = clock
    }

    func take(_ report: FrameReport, input: FrameOrigin?) {
        if !report.values.isEmpty || !report.events.isEmpty {
            let sent = clients.publisher.publish(report, to: clients.subscriptions)
            if sent > 0 {
                status.published(values: sent)
                metrics.published(latency: input.map { clock.now - $0.time })
            }
        }
        if !report.removedStreams.isEmpty { clients.streamsRemoved(report.removedStreams) }
    }

    /// Every client is told goodbye, and its connection closed.
    func finish(reason: String) -> [SinkNote] {
        clients.closeAll(saying: Array(ProtocolLine.bye(reason).utf8)[...])
        return []
    }
}

extension SceneKeeper: ReportSink {
    /// Elements' values changed: the scene is written within the interval.
    func take(_ report: FrameReport, input: FrameOrigin?) {
        if report.elementValuesChanged { sceneChanged() }
    }

    /// The scene as the stop left it, on disk before anyone is told goodbye (a client that
    /// reconnects at once to a new motiond finds it there).
    func finish(reason: String) -> [SinkNote] {
        writeFinally().map { [SinkNote("\($0.description): the scene of this stop is not kept", problem: true)] } ?? []
    }
}
