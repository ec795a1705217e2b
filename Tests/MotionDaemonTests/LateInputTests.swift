import MotionCore
import DaemonTestSupport
import Testing
@testable import MotionConfiguration
@testable import MotionDaemon

/// A frame read late meets the scene as it was at the frame's time. A busy daemon (a loaded
/// machine, an emulated CPU) reads several frames at once, after the frame clock's frames
/// between them were due: each input frame first runs the frame the clock owed by its time,
/// so that a touch is hit-tested where the springs had put things when the finger landed, as
/// a replay (`motionctl simulate`) does.
@Suite("Frames read late")
struct LateInputTests {
    static let configuration = """
        [screen]
        width = 1920
        height = 1080

        [[element]]
        id = "marker"
        center = [960, 540]
        size = [40, 40]

        [element.attach]
        destination = [960, 540]
        spring = { bounciness = 8, speed = 14 }

        [element.set_position_on_tap]
        target = "attach"
        """

    /// A double tap as a Wacom ISDv4 sent it: the first tap sends the marker to it, the second
    /// lands on the marker, 0.23 s later, which by then has glided there. Returns where the
    /// marker's destination ends when the daemon read the second tap on time, or late.
    static func destination(secondTapReadLate: Bool) throws -> Point {
        let scheduler = HandScheduler(now: 10)
        let clock = TimedFrameClock(rate: 120, scheduler: scheduler)
        let daemon = Daemon(configuration: try Configuration.parse(configuration, file: "late.toml"), clock: clock,
                            idleScheduler: scheduler, controlPolicy: { _ in true })
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        func tap(_ id: Int32, at point: Point, from down: Double, to up: Double) {
            for (phase, time) in [(TouchPhase.began, down), (.ended, up)] {
                if !secondTapReadLate || id == 1 { scheduler.advance(to: time) }
                daemon.process(TouchFrame(time: time, contacts: [ScreenGestureProtocolTests.contact(id, phase, point.x, point.y)]),
                               from: testPanel)
            }
        }
        tap(1, at: Point(x: 921, y: 519), from: 10.0, to: 10.032)
        if secondTapReadLate {
            // The loop was busy: nothing ran, not even the clock's frames, until both of the
            // second tap's frames were read together.
            scheduler.now = 10.3
        }
        tap(2, at: Point(x: 915, y: 526), from: 10.172, to: 10.232)
        scheduler.advance(to: 13)
        _ = try output.take()
        daemon.receive(#"{"id": 1, "op": "get", "stream": "marker.destination"}"#, from: session)
        let reply = try #require(try output.take().first)
        let value = try #require(reply["result"]?["value"])
        return Point(x: try #require(value["x"]?.number), y: try #require(value["y"]?.number))
    }

    @Test("a second tap read late with the first's spring frames still owed lands on the marker where it had glided, as read on time")
    func secondTapOnTheMarker() throws {
        let onTime = try Self.destination(secondTapReadLate: false)
        #expect(onTime.distance(to: Point(x: 921, y: 519)) < 0.5, "read on time, the second tap is on the marker: \(onTime)")
        let late = try Self.destination(secondTapReadLate: true)
        #expect(late.distance(to: onTime) < 0.5, "read late, the destination is \(late); on time, \(onTime)")
    }
}
