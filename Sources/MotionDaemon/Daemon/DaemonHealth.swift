import MotionCore
import TouchInput
import MotionWire

/// Whether motiond is doing its job, as `GET /healthz`, the `health` op and `motionctl
/// status` say: healthy while it reads at least one touchscreen (a replayed recording
/// counts) and its event loop keeps up. Anything else is a problem, named in words.
public struct HealthReport: Sendable {
    /// How late the event loop may run its timer check before motiond is behind: half a
    /// second late, every value a client reads is that old.
    public static let loopLagLimit = 0.5

    /// The touchscreens read, and those found but skipped, with why.
    public var devices: Int
    public var skipped: [(node: String, reason: String)]
    /// Seconds since a frame was processed, and since a finger landed; nil before the first.
    public var sinceInput: Double?
    public var sinceTouch: Double?
    /// How late the loop ran its last timer check, in seconds; nil when nobody checks.
    public var loopLag: Double?
    public var clients: [ClientTransport: Int]
    public var uptime: Double
    /// Why the scene cannot be kept in its state file (a full disk, say); nil when it is
    /// kept or nothing is.
    public var stateFailure: String?
    /// The virtual touchscreens made (output, node and counts), and why the others were not.
    public var virtualTouchscreens: [VirtualTouchscreenReport] = []
    public var virtualFailures: [(output: String, reason: String)] = []
    /// The panels quiet after a touch storm: node, seconds since it began, its flood
    /// contacts in a second.
    public var storms: [(node: String, since: Double, contacts: Int)] = []
    /// Seconds until a lock (`lock`) ends by itself; nil while unlocked. Not a problem, which
    /// someone asked for, but said: a locked screen otherwise looks like a dead one.
    public var lockedFor: Double?

    /// What is wrong; healthy when nothing is.
    public var problems: [HealthProblem] {
        var problems: [HealthProblem] = []
        if devices == 0 {
            let skippedText = skipped.prefix(4).map { "\($0.node): \($0.reason)" }.joined(separator: "; ")
            problems.append(HealthProblem(.noTouchscreen, "no touchscreen is being read" + (skipped.isEmpty ? "" : " (\(skipped.count) skipped: \(skippedText))")))
        }
        if let loopLag, loopLag > Self.loopLagLimit {
            problems.append(HealthProblem(.loopBehind, "the event loop runs \(compactNumber(loopLag)) s late (more than \(compactNumber(Self.loopLagLimit)) s): the daemon is behind"))
        }
        if let stateFailure {
            problems.append(HealthProblem(.sceneNotKept, "the scene is not being kept across restarts: \(stateFailure)"))
        }
        for failure in virtualFailures {
            problems.append(HealthProblem(.virtualTouchscreenMissing, about: failure.output,
                                          "no virtual touchscreen for \(failure.output), so the apps read its panels raw: \(failure.reason)"))
        }
        problems += virtualTouchscreens.compactMap(\.problem)
        for storm in storms {
            problems.append(HealthProblem(.touchStorm, about: storm.node, "\(storm.node) flooded \(storm.contacts) contacts within a second that lifted within 70 ms (a touch storm) \(compactNumber(storm.since.rounded())) s ago: it is quiet until the flood stops (storm_quiet); a sensor that keeps storming needs a reset or a look"))
        }
        return problems
    }

    public var isHealthy: Bool { problems.isEmpty }

    /// The report as `GET /healthz` and the `health` op give it (docs/operations.md).
    public var json: JSONValue {
        func seconds(_ value: Double?) -> JSONValue { value.map { .number(($0 * 1000).rounded() / 1000) } ?? .null }
        return .object([
            ("status", .string(isHealthy ? "ok" : "unhealthy")),
            ("problems", .array(problems.map { .string($0.message) })),
            ("devices", .integer(Int64(devices))),
            ("skipped", .integer(Int64(skipped.count))),
            ("since_input", seconds(sinceInput)),
            ("since_touch", seconds(sinceTouch)),
            ("loop_lag", loopLag.map { .number(($0 * 1e6).rounded() / 1e6) } ?? .null),
            ("clients", .object(ClientTransport.allCases.map { ($0.rawValue, .integer(Int64(clients[$0] ?? 0))) })),
            ("uptime", seconds(uptime)),
            ("virtual_touchscreens", VirtualTouchscreenReport.json(virtualTouchscreens, failures: virtualFailures)),
            ("storms", .array(storms.map { .object([("node", .string($0.node)), ("since", seconds($0.since)), ("contacts", .integer(Int64($0.contacts)))]) })),
            ("locked_for", seconds(lockedFor)),
        ])
    }
}

/// One thing wrong with the daemon: what kind of thing (for code and tests to tell them
/// apart), what it is about (a device's node, an output), and the sentence `health`,
/// `GET /healthz` and `motionctl status` give an operator.
public struct HealthProblem: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// No touchscreen is read (those skipped are in the message).
        case noTouchscreen
        /// The event loop runs late.
        case loopBehind
        /// The scene cannot be written to its state file.
        case sceneNotKept
        /// A virtual touchscreen could not be made (``about`` is its output).
        case virtualTouchscreenMissing
        /// A virtual touchscreen's writes fail (``about`` is its output).
        case virtualTouchscreenFailing
        /// A panel is quiet after a touch storm (``about`` is its node).
        case touchStorm
    }

    public var kind: Kind
    public var about: String?
    public var message: String

    public init(_ kind: Kind, about: String? = nil, _ message: String) {
        self.kind = kind
        self.about = about
        self.message = message
    }

    public var description: String { message }
}

/// Health and metrics: what a fleet's monitoring reads of the daemon.
extension Daemon {
    /// The daemon's health now.
    public func health() -> HealthReport {
        let now = clock.now
        return HealthReport(
            devices: touchscreens.devices.devices.count,
            skipped: touchscreens.devices.skipped.map { ($0.node, $0.reason.description) },
            sinceInput: status.lastInput.map { max(0, now - $0) }, sinceTouch: status.lastTouch.map { max(0, now - $0) },
            loopLag: status.loopLag, clients: clientsByTransport, uptime: now - status.startTime,
            stateFailure: keeper?.problem?.description,
            virtualTouchscreens: virtualTouchscreens.counts,
            virtualFailures: virtualTouchscreens.failureList,
            storms: touchscreens.devices.quiet(at: now),
            lockedFor: engine.isLocked ? max(0, (engine.lockedUntil ?? now) - now) : nil)
    }

    /// The metrics in Prometheus's text format, as `GET /metrics` serves them.
    public func metricsExposition() -> [UInt8] {
        // Times the daemon keeps on its monotonic clock become Unix times, as Prometheus's
        // practice has it: how long ago, taken from the wall clock now.
        let now = clock.now, wallNow = wallClockNow()
        func wall(_ time: Double?) -> Double? { time.map { wallNow - (now - $0) } }
        metrics.collect(DaemonMetrics.Snapshot(
            status: status, devices: touchscreens.devices, clients: clientsByTransport,
            valuesCoalesced: status.coalescedByClosedClients + clients.sessions.values.reduce(0) { $0 + $1.output.coalesced },
            lastInput: wall(status.lastInput), lastTouch: wall(status.lastTouch), loopLag: status.loopLag,
            tuio: tuio?.counts ?? [], process: ProcessStatistics.current(),
            stateWrites: keeper.map { ($0.writes, $0.failedWrites) }, virtualTouchscreens: virtualTouchscreens.counts))
        return metrics.exposition()
    }

    /// The media type of ``metricsExposition()``.
    public static let metricsContentType = DaemonMetrics.contentType

    /// The event loop ran a timer check `seconds` late (`LoopLagProbe`, in MotionServer).
    public func loopLagMeasured(_ seconds: Double) {
        status.loopLag = seconds
    }

    private var clientsByTransport: [ClientTransport: Int] {
        var counts: [ClientTransport: Int] = [:]
        for session in clients.sessions.values { counts[session.output.transport, default: 0] += 1 }
        return counts
    }
}
