import Testing
@testable import MotionCore

@Suite("MotionRuntime")
struct MotionRuntimeTests {
    @Test("connect writes a stream's values to a property")
    func connect() {
        let runtime = MotionRuntime(clock: ManualFrameClock())
        let property = ReactiveProperty(0)
        runtime.connect(MotionObservable.of(1, 2, 3), to: property)
        #expect(property.value == 3)
    }

    @Test("the aggregate state is active while any spring moves, at rest when all have settled")
    func aggregateState() {
        let clock = ManualFrameClock()
        let runtime = MotionRuntime(clock: clock)
        var states: [MotionState] = []
        runtime.state.subscribe { states.append($0) }

        let short = ReactiveProperty(0.0), long = ReactiveProperty(0.0)
        runtime.connect(springSource(Spring(to: ReactiveProperty(1.0), initialValue: short, threshold: 0.01), clock: clock), to: short)
        runtime.connect(
            springSource(Spring(to: ReactiveProperty(1.0), initialValue: long, threshold: 1e-6), clock: clock), to: long)
        #expect(runtime.state.value == .active)

        var restTime: Double?
        for time in frameTimes(rate: 60, until: 3) {
            clock.tick(at: time)
            if short.value == 1 && restTime == nil { restTime = time }
            if short.value == 1 && long.value != 1 {
                #expect(runtime.state.value == .active, "one spring still moves at \(time)")
            }
        }
        #expect(restTime != nil)
        #expect(runtime.state.value == .atRest)
        #expect(states == [.atRest, .active, .atRest], "written only when it changes")
    }

    @Test("toggle disables the spring during the gesture and re-enables it at the end, from where the finger left it")
    func toggle() throws {
        let clock = ManualFrameClock()
        let runtime = MotionRuntime(clock: clock)
        let position = ReactiveProperty(Point(x: 0, y: 0))
        let spring = Spring(to: ReactiveProperty(Point(x: 0, y: 0)), initialValue: position, threshold: 0.01)
        let gesture = GestureOperatorTests.Gesture()

        runtime.connect(springSource(spring, clock: clock), to: position)
        runtime.toggle(spring, inReactionTo: gesture.stream)
        runtime.connect(gesture.stream.translated(from: position), to: position)

        gesture.send(FakeGesture(state: .began))
        #expect(spring.enabled.value == false)
        gesture.send(FakeGesture(state: .changed, translation: Point(x: 80, y: 60)))
        clock.tick(at: 0.1)
        #expect(position.value == Point(x: 80, y: 60), "the finger, not the spring, moves the value")

        clock.now = 0.2
        gesture.send(FakeGesture(state: .ended, translation: Point(x: 80, y: 60)))
        #expect(spring.enabled.value == true)
        clock.tick(at: 0.3)
        let expected = SpringCurve(from: Point(x: 80, y: 60), velocity: .zero, to: .zero, configuration: .standard).value(at: 0.1)
        #expect(position.value.distance(to: expected) < 1e-9)
    }

    /// A minimal interaction: writes a constant into its target when added.
    final class SetTo: Interaction {
        let value: Int
        init(_ value: Int) { self.value = value }
        func add(to target: ReactiveProperty<Int>, withRuntime runtime: MotionRuntime) {
            runtime.connect(MotionObservable.of(value), to: target)
        }
    }

    @Test("add asks the interaction to connect itself, and disconnectAll undoes every connection")
    func addAndDisconnect() {
        let clock = ManualFrameClock()
        let runtime = MotionRuntime(clock: clock)
        let target = ReactiveProperty(0)
        runtime.add(SetTo(42), to: target)
        #expect(target.value == 42)

        let destination = ReactiveProperty(10.0), value = ReactiveProperty(0.0)
        runtime.connect(springSource(Spring(to: destination, initialValue: value), clock: clock), to: value)
        #expect(clock.isRunning)
        runtime.disconnectAll()
        #expect(!clock.isRunning)
        #expect(runtime.state.value == .atRest)
        #expect(destination.subscriberCount == 0)
    }
}
