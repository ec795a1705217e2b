import ArgumentParser
import FoundationEssentials
import MotionConfiguration
import MotionCore

/// `motionctl spring`: prints a spring's trajectory, for people tuning springs.
struct SpringCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "spring",
        abstract: "Print (or draw) a spring's trajectory until it comes to rest.",
        discussion: """
            The spring is solved in closed form, exactly as motiond runs it, and sampled at \
            a frame rate or at chosen times. Give its constants in one of three ways: \
            tension/friction (Rebound and Material Motion units, default 342/30), Origami \
            tension/friction, or POP-style bounciness/speed.

            Examples:
              motionctl spring
              motionctl spring --json --at 0.1,0.2
              motionctl spring --bounciness 10 --speed 8 --from 0 --to 100 --svg spring.svg
            """
    )

    @Option(parsing: .unconditional, help: "Stiffness (default 342).") var tension: Double?
    @Option(parsing: .unconditional, help: "Damping (default 30).") var friction: Double?
    @Option(parsing: .unconditional, help: "Mass.") var mass: Double = 1
    @Option(parsing: .unconditional, help: "Origami tension, converted to tension.") var origamiTension: Double?
    @Option(parsing: .unconditional, help: "Origami friction, converted to friction.") var origamiFriction: Double?
    @Option(parsing: .unconditional, help: "POP bounciness (0…20), with --speed.") var bounciness: Double?
    @Option(parsing: .unconditional, help: "POP speed (0…20), with --bounciness.") var speed: Double?

    @Option(parsing: .unconditional, help: "Start value.") var from: Double = 0
    @Option(parsing: .unconditional, help: "Destination.") var to: Double = 1
    @Option(parsing: .unconditional, help: "Initial velocity, in units per second.") var velocity: Double = 0
    @Option(parsing: .unconditional, help: "Distance from the destination that counts as there (default: a thousandth of the distance travelled, at least 0.001).")
    var threshold: Double?

    @Option(parsing: .unconditional, help: "Frames per second to sample at.") var rate: Double?
    @Option(help: "Comma-separated times in seconds to sample at, instead of a rate.") var at: String?

    @Flag(help: "One JSON object per line instead of a table.") var json = false
    @Option(help: "Also draw the curve into this SVG file.") var svg: String?

    /// Longest simulated time before giving up; a valid spring rests long before.
    static let maximumDuration = 600.0

    func validate() throws {
        _ = try configuration()
        for (name, value) in [("--from", from), ("--to", to), ("--velocity", velocity)] where !value.isFinite {
            throw ValidationError("\(name) must be a finite number")
        }
        if let threshold, !(threshold.isFinite && threshold > 0) {
            throw ValidationError("--threshold must be a positive number, not \(threshold)")
        }
        if rate != nil && at != nil { throw ValidationError("give --rate or --at, not both") }
        if let rate, !(rate.isFinite && rate > 0) {
            throw ValidationError("--rate must be a positive number of frames per second, not \(rate)")
        }
        _ = try sampleTimes()
    }

    /// The configuration chosen by the options, validated.
    func configuration() throws -> SpringConfiguration {
        let direct = tension != nil || friction != nil
        let origami = origamiTension != nil || origamiFriction != nil
        let pop = bounciness != nil || speed != nil
        guard [direct, origami, pop].filter({ $0 }).count <= 1 else {
            throw ValidationError("choose one way to give the spring: --tension/--friction, --origami-tension/--origami-friction, or --bounciness/--speed")
        }
        let configuration: SpringConfiguration
        if origami {
            guard let origamiTension, let origamiFriction else {
                throw ValidationError("--origami-tension and --origami-friction go together")
            }
            configuration = SpringConfiguration(origamiTension: origamiTension, origamiFriction: origamiFriction)
        } else if pop {
            guard let bounciness, let speed else { throw ValidationError("--bounciness and --speed go together") }
            configuration = SpringConfiguration(bounciness: bounciness, speed: speed)
        } else {
            configuration = SpringConfiguration(tension: tension ?? 342, friction: friction ?? 30)
        }
        var withMass = configuration
        withMass.mass = mass
        do {
            return try withMass.validated()
        } catch {
            throw ValidationError("this spring cannot run: \(error)")
        }
    }

    /// The explicit sample times of `--at`, or nil when sampling at a rate.
    func sampleTimes() throws -> [Double]? {
        guard let at else { return nil }
        var times: [Double] = []
        for field in at.split(separator: ",", omittingEmptySubsequences: false) {
            let text = field.trimmingBlanks()
            guard let time = Double(text), time.isFinite, time >= 0 else {
                throw ValidationError("--at takes times in seconds separated by commas, like 0.1,0.2; '\(text)' is not a time")
            }
            if let last = times.last, time <= last {
                throw ValidationError("--at times must increase: \(time) comes after \(last)")
            }
            times.append(time)
        }
        return times
    }

    func run() throws {
        let configuration = try configuration()
        let threshold = self.threshold ?? 0.001 * Swift.max(Swift.abs(to - from), 1)
        let trajectory: SpringTrajectory
        if let times = try sampleTimes() {
            trajectory = SpringTrajectory.sample(configuration, from: from, to: to, velocity: velocity, threshold: threshold, at: times)
        } else {
            trajectory = SpringTrajectory.sample(
                configuration, from: from, to: to, velocity: velocity, threshold: threshold,
                rate: rate ?? 60, until: Self.maximumDuration)
        }

        if json {
            for sample in trajectory.samples {
                emit(#"{"t": \#(SpringCommand.json(sample.t)), "value": \#(SpringCommand.json(sample.value)), "velocity": \#(SpringCommand.json(sample.velocity))}"#)
            }
            if let restTime = trajectory.restTime { emit(#"{"rest": true, "t": \#(SpringCommand.json(restTime))}"#) }
        } else {
            printTable(trajectory, configuration: configuration)
        }

        if let svg {
            let drawing = SpringPlot(trajectory: trajectory, configuration: configuration, destination: to).svg()
            do {
                try drawing.write(toFile: svg, atomically: true, encoding: .utf8)
            } catch {
                throw ValidationError("cannot write \(svg): \(reason(error))")
            }
        }

        if trajectory.restTime == nil && at == nil {
            writeStandardError("motionctl: the spring did not come to rest within \(Int(Self.maximumDuration)) s\n")
            throw ExitCode(ExitStatus.refused)
        }
    }

    private static func json(_ value: Double) -> String { MotionControl.json(value) }

    private func printTable(_ trajectory: SpringTrajectory, configuration: SpringConfiguration) {
        emit("spring: \(configuration), from \(from) to \(to), velocity \(velocity)/s")
        emit(pad("t (s)", 10) + pad("value", 16) + pad("velocity (/s)", 16))
        for sample in trajectory.samples {
            emit(pad(formatted("%.4f", sample.t), 10) + pad(formatted("%.9f", sample.value), 16)
                + pad(formatted("%.6f", sample.velocity), 16))
        }
        if let restTime = trajectory.restTime {
            emit(formatted("at rest at t = %.4f s", restTime))
        }
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : String(repeating: " ", count: width - text.count) + text
    }
}

/// A spring's samples, taken by running it through ``springSource(_:clock:)`` on a
/// ``ManualFrameClock``: the same code path the daemon uses, ticked by hand.
struct SpringTrajectory {
    struct Sample {
        var t: Double
        var value: Double
        var velocity: Double
    }

    var samples: [Sample] = []
    /// The frame at which the spring came to rest, if it did.
    var restTime: Double?

    /// Samples at `rate` frames per second from t = 0 until rest (or `limit` seconds).
    static func sample(
        _ configuration: SpringConfiguration, from: Double, to: Double, velocity: Double,
        threshold: Double, rate: Double, until limit: Double
    ) -> SpringTrajectory {
        var trajectory = SpringTrajectory(samples: [Sample(t: 0, value: from, velocity: velocity)])
        let run = SpringRun(configuration, from: from, to: to, velocity: velocity, threshold: threshold)
        var frame = 1
        while run.restTime == nil {
            // Times from the frame number, not by adding up 1/rate, which would drift.
            let time = Double(frame) / rate
            if time > limit { break }
            trajectory.samples.append(run.tick(at: time))
            frame += 1
        }
        trajectory.restTime = run.restTime
        if run.restTime == nil && from == to && velocity == 0 { trajectory.restTime = 0 }
        return trajectory
    }

    /// Samples at the given times; after rest, the value stays at the destination.
    static func sample(
        _ configuration: SpringConfiguration, from: Double, to: Double, velocity: Double,
        threshold: Double, at times: [Double]
    ) -> SpringTrajectory {
        let run = SpringRun(configuration, from: from, to: to, velocity: velocity, threshold: threshold)
        var trajectory = SpringTrajectory()
        for time in times {
            trajectory.samples.append(time == 0 ? Sample(t: 0, value: from, velocity: velocity) : run.tick(at: time))
        }
        trajectory.restTime = run.restTime
        return trajectory
    }
}

/// One spring running on a hand-driven clock, started at t = 0.
private final class SpringRun {
    private let clock = ManualFrameClock(now: 0)
    private let spring: Spring<Double>
    private var subscription: Subscription?
    private var lastValue: Double
    private(set) var restTime: Double?

    init(_ configuration: SpringConfiguration, from: Double, to: Double, velocity: Double, threshold: Double) {
        spring = Spring(to: to, from: from, threshold: threshold, configuration: configuration)
        spring.initialVelocity.value = velocity
        lastValue = from
        subscription = springSource(spring, clock: clock).subscribe(
            next: { [unowned self] value in self.lastValue = value },
            state: { [unowned self] state in if state == .atRest { self.restTime = self.clock.now } }
        )
    }

    deinit { subscription?.unsubscribe() }

    func tick(at time: Double) -> SpringTrajectory.Sample {
        clock.tick(at: time)
        return SpringTrajectory.Sample(t: time, value: lastValue, velocity: spring.velocity.value)
    }
}
