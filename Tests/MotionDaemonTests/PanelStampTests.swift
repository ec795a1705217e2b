import MotionCore
import DaemonTestSupport
import Testing
import TouchInput
@testable import MotionConfiguration
@testable import MotionDaemon

/// A toss comes to rest whatever the panel stamps its frames with: frames reach the engine on
/// motiond's monotonic clock (``PanelClock``), the clock the frame clock ticks on. A spring
/// starts at its frame's time; with a panel's stamps ahead of that clock (the wall clock where
/// the kernel refused `EVIOCSCLOCKID`, a firmware 10⁶ s ahead, the wall clock set forward
/// mid-fling), every tick came before the spring's start and the card never settled.
@Suite("Panel stamps and the frame clock")
struct PanelStampTests {
    static let configuration = """
        [screen]
        width = 1920
        height = 1080

        [[element]]
        id = "card"
        center = [400, 500]
        size = [200, 200]

        [element.tossable]
        snap_points = { left = [400, 500], right = [1500, 500] }
        """

    /// Flings the card rightward, each frame read at the clock's `t` and stamped `t + skew(t)`
    /// by the panel. Returns whether the frame clock still runs 5 s after the lift (a spring
    /// still moving), and where the card is then.
    static func fling(skew: (Double) -> Double) throws -> (running: Bool, position: Point) {
        let scheduler = HandScheduler(now: 100)
        let clock = TimedFrameClock(rate: 120, scheduler: scheduler)
        let daemon = Daemon(configuration: try Configuration.parse(configuration, file: "toss.toml"), clock: clock,
                            idleScheduler: scheduler, controlPolicy: { _ in true })
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        var panel = PanelClock()
        let count = 11
        for index in 0..<count {
            let time = 100 + Double(index) * 0.01
            scheduler.advance(to: time)
            let phase: TouchPhase = index == 0 ? .began : index == count - 1 ? .ended : .moved
            let contact = ScreenGestureProtocolTests.contact(1, phase, 400 + Double(index) * 30, 500)
            daemon.process(TouchFrame(time: panel.time(of: time + skew(time), readAt: scheduler.now), contacts: [contact]), from: testPanel)
        }
        scheduler.advance(to: 105.1)
        _ = try output.take()
        daemon.receive(#"{"id": 1, "op": "get", "stream": "card.position"}"#, from: session)
        let value = try #require(try output.take().first?["result"]?["value"])
        return (clock.isRunning, Point(x: try #require(value["x"]?.number), y: try #require(value["y"]?.number)))
    }

    @Test("the card tossed right comes to rest on the right snap point, whether the panel's stamps are the clock's, 10⁶ s or a wall clock ahead, or jump an hour either way mid-fling",
          arguments: [("the clock's", 0.0, 0.0), ("10⁶ s ahead", 1e6, 1e6), ("a wall clock", 1.7e9, 1.7e9),
                      ("set an hour forward mid-fling", 0, 3600), ("set an hour back mid-fling", 0, -3600), ("10⁶ s behind", -1e6, -1e6)])
    func tossSettles(stamps: String, before: Double, after: Double) throws {
        let (running, position) = try Self.fling { $0 < 100.05 ? before : after }
        #expect(!running, "stamps \(stamps): the frame clock still runs 5 s after the lift")
        #expect(position.distance(to: Point(x: 1500, y: 500)) < 0.01, "stamps \(stamps): the card is at \(position)")
    }
}
