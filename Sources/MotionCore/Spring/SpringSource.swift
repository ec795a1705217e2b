/// Runs a spring on a frame clock: the Material Motion `springSource`.
///
/// On subscription the stream emits `.active` as soon as the spring has somewhere to go,
/// then the spring's value on every frame of `clock` until it is at rest, then the exact
/// destination once and `.atRest`; it stays subscribed and starts again when the
/// destination, the initial velocity or `enabled` changes. While nothing moves, it does not
/// observe the clock, so an idle scene costs no wake-ups.
public func springSource<Value>(_ spring: Spring<Value>, clock: FrameClock) -> MotionObservable<Value> {
    MotionObservable { observer in
        let simulation = SpringSimulation(spring: spring, clock: clock, observer: observer)
        simulation.connect()
        return simulation.disconnect
    }
}

/// One running spring: the piece of the curve it is on, and its links to the spring's
/// properties and the clock. The links hold it alive until the subscription is cancelled.
///
/// Motion is a sequence of segments, each an exact ``SpringCurve`` from the state at the
/// moment something changed. A retarget starts a new segment from the position and
/// velocity the old one had at that instant, so neither jumps.
final class SpringSimulation<Value: MotionVector> {
    private let spring: Spring<Value>
    private let clock: FrameClock
    private let observer: MotionObserver<Value>

    /// The segment being played and when it started; nil while at rest or disabled.
    private var segment: (curve: SpringCurve<Value>, start: Double)?
    private var frames: Subscription?
    private var links: [Subscription] = []
    private var isActive = false
    /// Whether the next write of the destination, or of the configuration, is the
    /// property's replay of its current value on subscription.
    private var skipsDestination = true
    private var skipsConfiguration = true

    init(spring: Spring<Value>, clock: FrameClock, observer: MotionObserver<Value>) {
        self.spring = spring
        self.clock = clock
        self.observer = observer
    }

    func connect() {
        // Properties emit their current value on subscription; only later writes are changes.
        // Flags of the simulation's own, not a wrapping closure per link: each closure here
        // holds the simulation alone, which costs no allocation, and a scene runs thousands.
        links.reserveCapacity(4)
        links.append(spring.destination.subscribeToWrites {
            if self.skipsDestination { self.skipsDestination = false } else { self.destinationChanged() }
        })
        links.append(spring.configuration.subscribeToWrites {
            if self.skipsConfiguration { self.skipsConfiguration = false } else { self.configurationChanged() }
        })
        links.append(spring.initialVelocity.subscribe { velocity in self.velocityWritten(velocity) })
        links.append(spring.enabled.subscribe { enabled in self.enabledChanged(enabled) })
    }

    func disconnect() {
        links.forEach { $0.unsubscribe() }
        links = []
        segment = nil
        settle()
    }

    // MARK: Reactions to the spring's properties

    private func enabledChanged(_ enabled: Bool) {
        if enabled {
            // Properties notify on every write, so `true` may arrive while already running.
            if segment == nil { start(from: spring.initialValue.value) }
        } else if segment != nil {
            segment = nil
            settle()
        }
    }

    private func destinationChanged() {
        guard spring.enabled.value else { return }
        if let state = currentState() {
            begin(from: state.position, velocity: state.velocity)
        } else {
            start(from: spring.initialValue.value)
        }
    }

    private func configurationChanged() {
        guard let state = currentState() else { return }
        begin(from: state.position, velocity: state.velocity)
    }

    private func velocityWritten(_ velocity: Value) {
        guard velocity != .zero, spring.enabled.value else { return }
        if let state = currentState() {
            spring.initialVelocity.value = .zero
            begin(from: state.position, velocity: velocity)
        } else {
            start(from: spring.initialValue.value)
        }
    }

    // MARK: Segments

    /// Starts from rest at `position`, consuming the pending initial velocity.
    private func start(from position: Value) {
        let velocity = spring.initialVelocity.value
        if velocity != .zero { spring.initialVelocity.value = .zero }
        begin(from: position, velocity: velocity)
    }

    private func begin(from position: Value, velocity: Value) {
        let destination = spring.destination.value
        // A configuration that cannot come to rest (no tension or no friction) would keep
        // the clock running forever, so such a spring jumps to its destination. Callers that
        // take configurations from people validate them first and report the error.
        guard let configuration = try? spring.configuration.value.validated() else {
            segment = nil
            observer.next(destination)
            settle()
            return
        }
        // Still, and where it goes: at rest, as the curve would say, without making it (a
        // curve's constants take thousands of instructions, and every spring of a scene
        // checks this when it is connected).
        if segment == nil, velocity == .zero, position == destination { return }
        let curve = SpringCurve(from: position, velocity: velocity, to: destination, configuration: configuration)
        if segment == nil, curve.isAtRest(at: 0, threshold: spring.currentThreshold) {
            // Already there and still: no animation, but land exactly on the destination.
            if position != destination { observer.next(destination) }
            return
        }
        segment = (curve, clock.now)
        if !isActive {
            isActive = true
            spring.setState(.active)
            observer.state(.active)
        }
        if frames == nil {
            frames = clock.observeFrames { time in self.frame(at: time) }
        }
    }

    private func frame(at time: Double) {
        guard let (curve, start) = segment else { return }
        let t = Swift.max(0, time - start)
        if curve.isAtRest(at: t, threshold: spring.currentThreshold) {
            segment = nil
            spring.setVelocity(.zero)
            observer.next(curve.destination)
            settle()
        } else {
            spring.setVelocity(curve.velocity(at: t))
            observer.next(curve.value(at: t))
        }
    }

    /// Position and velocity now, if a segment is playing.
    private func currentState() -> (position: Value, velocity: Value)? {
        guard let (curve, start) = segment else { return nil }
        let t = Swift.max(0, clock.now - start)
        return (curve.value(at: t), curve.velocity(at: t))
    }

    private func settle() {
        stopFrames()
        spring.setVelocity(.zero)
        if isActive {
            isActive = false
            spring.setState(.atRest)
            observer.state(.atRest)
        }
    }

    private func stopFrames() {
        frames?.unsubscribe()
        frames = nil
    }
}
