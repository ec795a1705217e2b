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

    public init() {}

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
                output.configure(settings, screen: configuration.screen, elementIDs: ids)
            } else {
                output = TUIOOutput(settings: settings, screen: configuration.screen, elementIDs: ids, frameNumber: lastFrame, predicted: predicted)
            }
            output?.publish(elements, time: time)
        }
        update(&outputs.measured, configuration.tuio.filter { !$0.predicted }, predicted: false)
        update(&outputs.predicted, configuration.tuio.filter(\.predicted), predicted: true)
    }

    /// Whether any target is configured: without, the daemon skips the calls below.
    public var isActive: Bool { outputs.measured != nil || outputs.predicted != nil }

    /// A frame's contacts, from the device numbered `device`.
    public func take(_ frame: TouchFrame, device: Int) {
        for output in active { output.take(frame, device: device) }
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
        output.finish()
        lastFrame = max(lastFrame, output.frameNumber)
    }

    /// Each target and what went to it.
    public var statistics: [TUIOTargetStatistics] { active.flatMap(\.statistics) }
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
