import MotionConfiguration
import MotionCore

/// The `[[tuio]]` targets over the daemon's life: a ``TUIOOutput`` while the configuration
/// names any, nothing otherwise (so that TUIO costs nothing then), with frame numbers going
/// on across reloads (a reference client ignores frames numbered below the last it saw).
public final class TUIOTargets {
    private var output: TUIOOutput?
    private var lastFrame: Int32 = 0

    public init() {}

    /// Starts, changes or ends the output as `configuration` says (at start and on each
    /// reload), and sends each target the scene as it is.
    public func configure(_ configuration: Configuration, elements: [Element], time: Double) {
        guard !configuration.tuio.isEmpty else {
            finish()
            return
        }
        let ids = configuration.elements.map(\.id)
        if let output {
            output.configure(configuration.tuio, screen: configuration.screen, elementIDs: ids)
        } else {
            output = TUIOOutput(settings: configuration.tuio, screen: configuration.screen, elementIDs: ids, frameNumber: lastFrame)
        }
        output?.publish(elements, time: time)
    }

    /// Whether any target is configured: without, the daemon skips the calls below.
    public var isActive: Bool { output != nil }

    /// A frame's contacts, from the device numbered `device`.
    public func take(_ frame: TouchFrame, device: Int) {
        output?.take(frame, device: device)
    }

    /// The elements as they are after a frame or a spring's step.
    public func publish(_ elements: [Element], time: Double) {
        output?.publish(elements, time: time)
    }

    /// Receivers hear that nothing is alive any more; a later output numbers its frames on.
    public func finish() {
        guard let output else { return }
        output.finish()
        lastFrame = output.frameNumber
        self.output = nil
    }

    /// Each target and what went to it.
    public var statistics: [TUIOTargetStatistics] { output?.statistics ?? [] }
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
