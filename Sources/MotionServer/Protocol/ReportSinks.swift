import MotionCore
import NIOCore
import TouchInput

/// A consumer of what the engine did: each frame's ``FrameReport`` goes to every sink the
/// daemon has, one after the other, in this order (``Daemon/publish(_:input:)``):
/// 1. TUIO's receivers (``TUIOSink``), over UDP, which never waits;
/// 2. the clients (``ClientsSink``): the values (`screen.contacts` among them) and the
///    gesture events, each client's lines in one write;
/// 3. the state file (``SceneKeeper``), whose write a change of values schedules.
///
/// A report comes from an input frame, the engine's timer, a spring's step or a command;
/// `input` says which frame, for the sinks that follow the fingers. The report is the engine's
/// storage: a sink reads it during the call and keeps nothing of it.
protocol ReportSink: AnyObject {
    func take(_ report: FrameReport, input: InputFrame?)
}

/// The input frame a report is of: the device whose contacts it holds, its time (for the
/// latency from input to the clients), and when the input thread read it, for a panel's
/// frame (for motiond's own latency to the apps, ``VirtualTouchscreens``).
struct InputFrame {
    let device: DeviceIdentity
    let time: Double
    var readAt: Double? = nil
}

/// The scene to TUIO's receivers: the fingers of each input frame, then the elements as
/// they are, whenever a frame came or values changed. The fingers a lock took leave at once.
final class TUIOSink: ReportSink {
    let output: TUIOReceivers
    private unowned let scene: DaemonScene

    init(_ output: TUIOReceivers, scene: DaemonScene) {
        self.output = output
        self.scene = scene
    }

    func take(_ report: FrameReport, input: InputFrame?) {
        let locking = !report.lockedFingers.isEmpty
        guard output.isActive, input != nil || report.elementValuesChanged || locking else { return }
        if locking { output.cancel(fingers: report.lockedFingers) }
        if input != nil { output.take(report.contacts, time: report.time) }
        output.publish(scene.engine.scene.elements, time: report.time)
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

    func take(_ report: FrameReport, input: InputFrame?) {
        if !report.values.isEmpty || !report.events.isEmpty {
            let sent = clients.publisher.publish(report, to: clients.subscriptions)
            if sent > 0 {
                status.published(values: sent)
                metrics.published(latency: input.map { clock.now - $0.time })
            }
        }
        if !report.removedStreams.isEmpty { clients.streamsRemoved(report.removedStreams) }
    }
}

extension SceneKeeper: ReportSink {
    /// Elements' values changed: the scene is written within the interval.
    func take(_ report: FrameReport, input: InputFrame?) {
        if report.elementValuesChanged { sceneChanged() }
    }
}
