import Testing
@testable import MotionCore

@Suite("springSource")
struct SpringSourceTests {
    @Test("emits .active, values on each frame, the exact destination, then .atRest")
    func emissionOrder() {
        let recorder = SpringRecorder(Spring(to: 1.0, from: 0.0, threshold: 0.001))
        #expect(recorder.events == ["active"], "active as soon as it has somewhere to go, before any frame")
        recorder.run(at: frameTimes(rate: 60, until: 2))
        #expect(recorder.events.first == "active")
        #expect(recorder.events.last == "atRest")
        #expect(recorder.events.dropFirst().dropLast().allSatisfy { $0 == "value" })
        #expect(recorder.values.last?.value == 1.0)
        #expect(recorder.spring.state.value == .atRest)
        #expect(recorder.spring.velocity.value == 0)
    }

    @Test("a spring already at its destination emits nothing and does not observe the clock")
    func alreadyThere() {
        let recorder = SpringRecorder(Spring(to: 5.0, from: 5.0))
        #expect(recorder.events.isEmpty)
        #expect(!recorder.clock.isRunning)
    }

    @Test("a spring within its threshold lands exactly on the destination without animating")
    func withinThreshold() {
        let recorder = SpringRecorder(Spring(to: 5.0, from: 5.4, threshold: 1))
        #expect(recorder.events == ["value"])
        #expect(recorder.values.first?.value == 5.0)
        #expect(!recorder.clock.isRunning)
    }

    @Test("a destination change in flight keeps position and velocity continuous")
    func retargetIsContinuous() throws {
        let recorder = SpringRecorder(Spring(to: 1.0, from: 0.0, threshold: 1e-4))
        let before = frameTimes(rate: 120, until: 0.1)
        recorder.run(at: before)
        // Retarget between two frames, at t = 0.105.
        recorder.clock.now = 0.105
        let atRetarget = SpringCurve(from: 0.0, velocity: 0, to: 1, configuration: .standard)
        recorder.spring.destination.value = 3
        recorder.run(at: [0.105] + frameTimes(rate: 120, until: 0.6).filter { $0 > 0.105 })

        // The frame at the retarget instant is where the old curve was: no jump.
        #expect(Swift.abs(try #require(recorder.value(at: 0.105)) - atRetarget.value(at: 0.105)) < 1e-12)
        // After it, the motion is the ODE continued from the old state with the new destination.
        let state = SpringOracle().integrate(x: 0, v: 0, destination: 1, for: 0.105)
        for (t, value) in recorder.values where t > 0.105 && t < 0.6 {
            let expected = SpringOracle().integrate(x: state.x, v: state.v, destination: 3, for: t - 0.105)
            #expect(Swift.abs(value - expected.x) < 1e-6, "at \(t)")
        }
    }

    @Test("a destination change after rest starts again from the current value")
    func retargetAfterRest() {
        let position = ReactiveProperty(0.0)
        let destination = ReactiveProperty(1.0)
        let spring = Spring(to: destination, initialValue: position, threshold: 0.001)
        let recorder = SpringRecorder(spring)
        let subscription = springSource(spring, clock: recorder.clock).subscribe(next: { position.value = $0 })
        recorder.run(at: frameTimes(rate: 60, until: 1))
        #expect(position.value == 1)
        #expect(!recorder.clock.isRunning)

        destination.value = 2
        #expect(recorder.clock.isRunning)
        recorder.run(at: frameTimes(rate: 60, until: 2.2).filter { $0 > 1 })
        #expect(position.value == 2)
        subscription.unsubscribe()
    }

    @Test("a disabled spring does not move; re-enabled, it starts from the current initial value with the pending velocity")
    func enableAndDisable() throws {
        let position = ReactiveProperty(0.0)
        let spring = Spring(to: ReactiveProperty(100.0), initialValue: position)
        spring.enabled.value = false
        let recorder = SpringRecorder(spring)
        #expect(recorder.events.isEmpty)
        #expect(!recorder.clock.isRunning)

        // A finger moves the value to 40 and lets go at 500/s.
        position.value = 40
        spring.initialVelocity.value = 500
        #expect(spring.initialVelocity.value == 500, "kept until the spring is enabled")
        recorder.clock.now = 1
        spring.enabled.value = true
        #expect(spring.initialVelocity.value == 0)
        recorder.run(at: [1.1])
        let expected = SpringCurve(from: 40.0, velocity: 500, to: 100, configuration: .standard).value(at: 0.1)
        #expect(Swift.abs(try #require(recorder.value(at: 1.1)) - expected) < 1e-9)

        // Disabled in flight: it stops at once and reports rest.
        spring.enabled.value = false
        #expect(recorder.events.last == "atRest")
        #expect(!recorder.clock.isRunning)
        let count = recorder.values.count
        recorder.run(at: [1.2, 1.3])
        #expect(recorder.values.count == count)
    }

    @Test("enabling a running spring again changes nothing")
    func enablingTwice() {
        let recorder = SpringRecorder(Spring(to: 1.0, from: 0.0, threshold: 1e-4))
        recorder.run(at: [0.05])
        recorder.spring.enabled.value = true
        recorder.run(at: [0.1])
        #expect(Swift.abs(recorder.value(at: 0.1)! - 0.622017250) < 1e-6)
    }

    @Test("a velocity written in flight replaces the velocity from the current position")
    func kickInFlight() throws {
        let recorder = SpringRecorder(Spring(to: 0.0, from: 10.0, threshold: 1e-3))
        recorder.run(at: [0.05])
        let state = SpringOracle().integrate(x: 10, v: 0, destination: 0, for: 0.05)
        recorder.spring.initialVelocity.value = -300
        #expect(recorder.spring.initialVelocity.value == 0)
        recorder.run(at: [0.15])
        let expected = SpringOracle().integrate(x: state.x, v: -300, destination: 0, for: 0.1)
        #expect(Swift.abs(try #require(recorder.value(at: 0.15)) - expected.x) < 1e-6)
    }

    @Test("a configuration change in flight continues from the current state")
    func configurationInFlight() throws {
        let recorder = SpringRecorder(Spring(to: 1.0, from: 0.0, threshold: 1e-4))
        recorder.run(at: [0.05])
        let state = SpringOracle().integrate(x: 0, v: 0, destination: 1, for: 0.05)
        recorder.spring.configuration.value = SpringConfiguration(tension: 100, friction: 50)
        recorder.run(at: [0.25])
        let expected = SpringOracle(tension: 100, friction: 50).integrate(x: state.x, v: state.v, destination: 1, for: 0.2)
        #expect(Swift.abs(try #require(recorder.value(at: 0.25)) - expected.x) < 1e-6)
    }

    @Test("a configuration that cannot rest jumps to the destination instead of running forever")
    func unrunnableConfiguration() {
        let recorder = SpringRecorder(Spring(to: 7.0, from: 0.0, configuration: SpringConfiguration(tension: 342, friction: 0)))
        #expect(recorder.values.map(\.value) == [7])
        #expect(!recorder.clock.isRunning)
    }

    @Test("unsubscribing stops the spring and releases the clock and the properties")
    func unsubscribe() {
        let spring = Spring(to: 1.0, from: 0.0, threshold: 1e-3)
        let recorder = SpringRecorder(spring)
        #expect(recorder.clock.isRunning)
        #expect(spring.state.value == .active)
        recorder.stop()
        #expect(!recorder.clock.isRunning)
        #expect(spring.state.value == .atRest)
        #expect(recorder.events == ["active"], "nothing reaches the observer after unsubscribe")
        #expect(spring.destination.subscriberCount == 0)
        #expect(spring.enabled.subscriberCount == 0)
        spring.destination.value = 5
        #expect(!recorder.clock.isRunning)
    }
}

@Suite("SpringConfiguration")
struct SpringConfigurationTests {
    @Test("Origami values convert with (o − 30)·3.62 + 194 and (o − 8)·3 + 25, and 0 stays 0")
    func origami() {
        let c = SpringConfiguration(origamiTension: 40, origamiFriction: 7)
        #expect(Swift.abs(c.tension - 230.2) < 1e-9)
        #expect(Swift.abs(c.friction - 22) < 1e-9)
        let zero = SpringConfiguration(origamiTension: 0, origamiFriction: 0)
        #expect(zero.tension == 0 && zero.friction == 0)
    }

    @Test("POP bounciness 4 and speed 12 give about 342.1 / 30.5")
    func bouncinessAndSpeed() {
        let c = SpringConfiguration(bounciness: 4, speed: 12)
        #expect(Swift.abs(c.tension - 342.1) < 0.05)
        #expect(Swift.abs(c.friction - 30.5) < 0.05)
        // More bounciness, less friction; more speed, more tension.
        #expect(SpringConfiguration(bounciness: 15, speed: 12).friction < c.friction)
        #expect(SpringConfiguration(bounciness: 4, speed: 18).tension > c.tension)
    }

    @Test("validation names the value that cannot run")
    func validation() {
        #expect(throws: SpringConfigurationError.mass(-1)) { try SpringConfiguration(mass: -1).validated() }
        #expect(throws: SpringConfigurationError.tension(0)) { try SpringConfiguration(tension: 0).validated() }
        #expect(throws: SpringConfigurationError.friction(0)) { try SpringConfiguration(friction: 0).validated() }
        #expect(throws: SpringConfigurationError.self) { try SpringConfiguration(tension: .nan).validated() }
        #expect((try? SpringConfiguration.standard.validated()) == .standard)
        #expect(SpringConfigurationError.friction(0).description.contains("never comes to rest"))
    }

    @Test("damping ratio and natural frequency of the default")
    func derived() {
        #expect(Swift.abs(SpringConfiguration.standard.dampingRatio - 0.811107105653813) < 1e-12)
        #expect(Swift.abs(SpringConfiguration.standard.naturalFrequency - 342.0.squareRoot()) < 1e-12)
    }
}
