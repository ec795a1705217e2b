import Foundation
import MotionCore
import Testing
@testable import MotionConfiguration
@testable import MotionDaemon

/// A reload replaces the engine; the old one must let go of the clock and of memory.
@Suite("Reload takes the old scene apart")
struct ReloadTeardownTests {
    /// The example configuration: `marker` has a spring (attach) whose destination a client can set.
    private static func configuration() throws -> Configuration {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("config/motiond.toml").path
        return try Configuration.load(file: file)
    }

    /// Starts the marker's spring toward a point and lets it run one frame, so it is in flight.
    private static func moveMarker(_ daemon: Daemon, _ clock: ManualFrameClock, to x: Double) throws {
        let write = try #require(daemon.engine.property("marker.destination")?.write)
        #expect(write(.point(Point(x: x, y: 200))) == nil)
        daemon.publishPending()
        clock.tick(at: clock.now + 1.0 / 120)
    }

    @Test("1000 reloads with a spring in flight: the clock stops once the new scene rests, and every old engine and element is freed")
    func reloadsFreeTheOldScene() throws {
        let configuration = try Self.configuration()
        let clock = ManualFrameClock(now: 100)
        let daemon = Daemon(configuration: configuration, clock: clock, controlPolicy: { _ in true })
        weak var firstEngine: MotionEngine?
        var oldEngines: [Weak<MotionEngine>] = []
        var oldElements: [Weak<Element>] = []
        for reload in 0..<1000 {
            try Self.moveMarker(daemon, clock, to: Double(100 + reload % 500))
            #expect(clock.isRunning, "the marker's spring moves before reload \(reload)")
            // Keep a few witnesses; holding all 1000 costs nothing either way.
            if reload == 0 { firstEngine = daemon.engine }
            if reload % 100 == 0 {
                oldEngines.append(Weak(daemon.engine))
                oldElements += daemon.engine.scene.elements.map { Weak($0) }
            }
            daemon.reload(configuration)
        }
        // The new scene rests (nobody moved its marker); one more frame, then no observer is left.
        clock.tick(at: clock.now + 1.0 / 120)
        #expect(!clock.isRunning, "an old scene's spring still observes the clock")
        let framesBefore = clock.deliveredFrames
        for k in 1...240 { clock.tick(at: clock.now + Double(k) / 120) }
        #expect(clock.deliveredFrames == framesBefore, "frames were delivered to a scene that rests")
        #expect(firstEngine == nil, "the first engine is still alive")
        #expect(oldEngines.allSatisfy { $0.value == nil }, "\(oldEngines.filter { $0.value != nil }.count) old engines are still alive")
        #expect(oldElements.allSatisfy { $0.value == nil }, "\(oldElements.filter { $0.value != nil }.count) old elements are still alive")
    }
}

extension ReloadTeardownTests {
    @Test("a daemon that goes away takes its scene with it, even with a spring in flight")
    func droppedDaemonFreesItsScene() throws {
        let clock = ManualFrameClock(now: 100)
        var elements: [Weak<Element>] = []
        do {
            let daemon = Daemon(configuration: try Self.configuration(), clock: clock, controlPolicy: { _ in true })
            try Self.moveMarker(daemon, clock, to: 300)
            #expect(clock.isRunning)
            elements = daemon.engine.scene.elements.map { Weak($0) }
        }
        #expect(!elements.isEmpty)
        #expect(!clock.isRunning, "the dropped daemon's spring still observes the clock")
        #expect(elements.allSatisfy { $0.value == nil }, "\(elements.filter { $0.value != nil }.count) elements outlived their daemon")
    }
}

/// A weak reference, to see whether something was freed.
struct Weak<Object: AnyObject> {
    weak var value: Object?
    init(_ value: Object) { self.value = value }
}
