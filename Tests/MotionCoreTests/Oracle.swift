@testable import MotionCore

/// An independent solution of the spring equation by fine-step RK4, to check the closed form
/// against something that shares none of its algebra. With a 10 µs step its error is far
/// below the 1e-6 the tests ask for.
struct SpringOracle {
    var tension = 342.0, friction = 30.0, mass = 1.0
    var step = 1e-5

    /// Position and velocity after `duration`, starting from `x`, `v`, pulled toward `destination`.
    func integrate(x: Double, v: Double, destination: Double, for duration: Double) -> (x: Double, v: Double) {
        func acceleration(_ x: Double, _ v: Double) -> Double {
            (tension * (destination - x) - friction * v) / mass
        }
        var x = x, v = v, remaining = duration
        while remaining > 0 {
            let h = Swift.min(step, remaining)
            let k1x = v, k1v = acceleration(x, v)
            let k2x = v + h / 2 * k1v, k2v = acceleration(x + h / 2 * k1x, v + h / 2 * k1v)
            let k3x = v + h / 2 * k2v, k3v = acceleration(x + h / 2 * k2x, v + h / 2 * k2v)
            let k4x = v + h * k3v, k4v = acceleration(x + h * k3x, v + h * k3v)
            x += h / 6 * (k1x + 2 * k2x + 2 * k3x + k4x)
            v += h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
            remaining -= h
        }
        return (x, v)
    }
}

/// A ``FrameScheduler`` driven by hand, which counts what it was asked to do.
final class ManualScheduler: FrameScheduler {
    private(set) var now: Double
    private var pending: [(id: Int, deadline: Double, work: () -> Void)] = []
    private var nextID = 0
    private(set) var scheduledCount = 0

    init(now: Double = 0) { self.now = now }

    var pendingCount: Int { pending.count }

    func schedule(at deadline: Double, _ work: @escaping () -> Void) -> () -> Void {
        let id = nextID
        nextID += 1
        scheduledCount += 1
        pending.append((id, deadline, work))
        return { [weak self] in self?.pending.removeAll { $0.id == id } }
    }

    /// Runs, in deadline order, the work due by `time`, each at its deadline plus `lateness`.
    func advance(to time: Double, lateness: Double = 0) {
        while let next = pending.min(by: { $0.deadline < $1.deadline }), next.deadline <= time {
            pending.removeAll { $0.id == next.id }
            now = Swift.max(now, next.deadline + lateness)
            next.work()
        }
        now = Swift.max(now, time)
    }

    /// Time passes to `time` with the loop busy: nothing due runs.
    func busy(until time: Double) {
        now = Swift.max(now, time)
    }
}

/// Runs `spring` on a manual clock at the given frame times and records what it emitted.
final class SpringRecorder<Value: MotionVector> {
    let clock: ManualFrameClock
    let spring: Spring<Value>
    private(set) var values: [(t: Double, value: Value)] = []
    private(set) var events: [String] = []
    private var subscription: Subscription?

    init(_ spring: Spring<Value>, clock: ManualFrameClock = ManualFrameClock(now: 0)) {
        self.spring = spring
        self.clock = clock
        subscription = springSource(spring, clock: clock).subscribe(
            next: { [unowned self] value in
                self.values.append((self.clock.now, value))
                self.events.append("value")
            },
            state: { [unowned self] state in self.events.append(state.rawValue) }
        )
    }

    func run(at times: [Double]) {
        for time in times { clock.tick(at: time) }
    }

    func value(at t: Double) -> Value? {
        values.first { Swift.abs($0.t - t) < 1e-12 }?.value
    }

    func stop() { subscription?.unsubscribe() }
}

/// Frame times at `rate` Hz from 0 (exclusive) to `end`, computed from the frame number.
func frameTimes(rate: Double, until end: Double) -> [Double] {
    (1...Int((end * rate).rounded(.down))).map { Double($0) / rate }
}
