import MotionConfiguration
import MotionCore
import MotionWire

/// Where the scene goes besides the clients, frame by frame: TUIO's receivers (MotionTUIO's
/// `TUIOTargets`). The daemon knows outputs only by this; whoever makes the daemon (the
/// service, a test, a benchmark) gives it one.
public protocol TUIOReceivers: AnyObject {
    /// The configuration in force, at start and on each reload: what to send, and where.
    func configure(_ configuration: Configuration, elements: [Element], time: Double)
    /// Whether it sends anything: without, the daemon skips the calls below.
    var isActive: Bool { get }
    /// An input frame's contacts, as its report numbers them, at the frame's `time`.
    func take(_ contacts: [ReportedContact], time: Double)
    /// Fingers a lock took (``FrameReport/lockedFingers``): they leave at once, and are
    /// never in `take`'s contacts again.
    func cancel(fingers: [Int])
    /// The elements as they are after a frame or a spring's step.
    func publish(_ elements: [Element], time: Double)
    /// The daemon stops: receivers hear that nothing is alive any more.
    func finish()
    /// What it sent, for `stats`.
    var json: JSONValue { get }
    /// What it sent to each target since the daemon started, one entry per target: totals
    /// that never go down (reloads and repeated targets included), for metrics.
    var counts: [TUIOTargetCounts] { get }
}

/// What a scene output sent to one target: its metrics' values.
public struct TUIOTargetCounts: Equatable, Sendable {
    /// Where it goes (`127.0.0.1:3333`), the metrics' label.
    public var target: String
    public var datagrams: Int
    /// Datagrams the kernel refused to send.
    public var failures: Int

    public init(target: String, datagrams: Int, failures: Int) {
        self.target = target
        self.datagrams = datagrams
        self.failures = failures
    }
}
