import MotionConfiguration
import MotionCore

/// The `[[tuio]]` targets over the daemon's life: a ``TUIOOutput`` while the configuration
/// names any, nothing otherwise (so that TUIO costs nothing then), with frame numbers going
/// on across reloads (a reference client ignores frames numbered below the last it saw).
/// Targets that ask for predicted elements (`predicted = true`) have an output of their
/// own, with its own sessions: one object cannot be in two places in one output.
public final class TUIOTargets {
    /// The outputs: where elements are, and where they are predicted to be.
    private var outputs: (measured: TUIOOutput?, predicted: TUIOOutput?)
    private var lastFrame: Int32 = 0
    /// What went to the targets of earlier configurations, by target: a reload starts each
    /// target's own counts again, and the metrics' counters must not.
    private var sentBefore: [String: TUIOSent] = [:]
    /// Where datagrams go and what time 2.0's frames carry: UDP and the system's clock, or a
    /// test's recorder and clock.
    private let makeSink: (ListenAddress) -> DatagramSink
    private let wallClock: WallClock

    public convenience init() {
        self.init(makeSink: UDPSender.init, wallClock: TUIOOutput.systemWallClock)
    }

    /// Targets whose datagrams go to the sinks `makeSink` opens, 2.0's frames stamped with
    /// `wallClock`: for a test that records what would be sent.
    package init(makeSink: @escaping (ListenAddress) -> DatagramSink, wallClock: @escaping WallClock) {
        self.makeSink = makeSink
        self.wallClock = wallClock
    }

    private var active: [TUIOOutput] { [outputs.measured, outputs.predicted].compactMap { $0 } }

    /// Starts, changes or ends the outputs as `configuration` says (at start and on each
    /// reload), and sends each target the scene as it is.
    public func configure(_ configuration: Configuration, elements: [Element], time: Double) {
        let ids = configuration.elements.map(\.id)
        func update(_ output: inout TUIOOutput?, _ settings: [TUIOSettings], predicted: Bool) {
            guard !settings.isEmpty else {
                if let ended = output { end(ended) }
                output = nil
                return
            }
            if let output {
                retire(output.targets)
                output.configure(settings, screen: configuration.screen, elementIDs: ids)
            } else {
                output = TUIOOutput(settings: settings, screen: configuration.screen, elementIDs: ids, frameNumber: lastFrame, predicted: predicted,
                                    makeSink: makeSink, wallClock: wallClock)
            }
            output?.publish(elements, time: time)
        }
        update(&outputs.measured, configuration.tuio.filter { !$0.predicted }, predicted: false)
        update(&outputs.predicted, configuration.tuio.filter(\.predicted), predicted: true)
    }

    /// Whether any target is configured: without, the daemon skips the calls below.
    public var isActive: Bool { outputs.measured != nil || outputs.predicted != nil }

    /// An input frame's contacts, as its report numbers them, at the frame's `time`.
    public func take(_ contacts: [ReportedContact], time: Double) {
        for output in active { output.take(contacts, time: time) }
    }

    /// Fingers a lock took: they leave every output at once.
    public func cancel(fingers: [Int]) {
        for output in active { output.cancel(fingers: fingers) }
    }

    /// The elements as they are after a frame or a spring's step.
    public func publish(_ elements: [Element], time: Double) {
        for output in active { output.publish(elements, time: time) }
    }

    /// Receivers hear that nothing is alive any more; a later output numbers its frames on.
    public func finish() {
        for output in active { end(output) }
        outputs = (nil, nil)
    }

    private func end(_ output: TUIOOutput) {
        let targets = output.targets
        output.finish()
        retire(targets)  // after their goodbyes, which count too
        lastFrame = max(lastFrame, output.frameNumber)
    }

    /// Keeps what went to `targets`, which are sent nothing more.
    private func retire(_ targets: [TUIOOutput.Target]) {
        for target in targets { sentBefore[target.settings.target.description, default: TUIOSent()] += target.sent }
    }

    /// Each target and what went to it since the configuration in force was loaded.
    public var statistics: [TUIOTargetStatistics] { active.flatMap(\.statistics) }

    /// What went to each target since the daemon started, by target: the targets of earlier
    /// configurations included, and two `[[tuio]]` with one target as one. Totals that never
    /// go down, for metrics.
    public var sentByTarget: [String: TUIOSent] {
        var sent = sentBefore
        for target in active.flatMap(\.targets) { sent[target.settings.target.description, default: TUIOSent()] += target.sent }
        return sent
    }
}

/// The wall clock TUIO 2.0's frames carry: Unix seconds and nanoseconds.
package typealias WallClock = () -> (seconds: Int, nanoseconds: Int)

/// What went to a TUIO target, for metrics.
public struct TUIOSent: Equatable, Sendable {
    public var datagrams = 0
    /// Datagrams the kernel refused to send, and frames too large to encode.
    public var failures = 0

    public init(datagrams: Int = 0, failures: Int = 0) {
        self.datagrams = datagrams
        self.failures = failures
    }

    static func += (sum: inout TUIOSent, more: TUIOSent) {
        sum.datagrams += more.datagrams
        sum.failures += more.failures
    }
}

/// What went to one TUIO target, for `stats`.
public struct TUIOTargetStatistics: Equatable, Sendable {
    public var target: String
    public var version: String
    public var frames: Int
    public var datagrams: Int
    public var failures: Int
    public var lastError: String?
}
