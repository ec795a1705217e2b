import CoreMetrics
import MotionConfiguration
import MotionCore
import TouchInput
import MotionWire

/// The virtual touchscreens the configuration asks for (`[[virtual_touchscreen]]`, and the
/// outputs `[[device]]` entries name), and what each shows the apps: the fingers of every
/// input frame from a panel that names it, as the engine reported them. A ``ReportSink``,
/// first of the daemon's, since the apps wait on it as the clients do.
///
/// A virtual touchscreen that cannot be made (no uinput, no permission) is kept as a
/// failure: the daemon says why in the log and in health, and its panels are not grabbed
/// (``available``), so the apps keep reading them raw.
final class VirtualTouchscreens: ReportSink {
    /// The devices made, by output.
    private(set) var devices: [String: VirtualTouchscreen] = [:]
    /// Why the others were not, by output.
    private(set) var failures: [String: VirtualTouchscreenError] = [:]
    private var configuration = Configuration()
    /// The virtual touchscreen each panel's frames go to, by the engine's device number, with
    /// its output's latency histogram: found once a device, not at every frame.
    private var routes: [Int: Route?] = [:]
    private struct Route {
        let device: VirtualTouchscreen
        let latency: CoreMetrics.Timer
    }
    /// Where each output's latency goes (`motiond_virtual_touchscreen_latency_seconds`).
    private let metrics: DaemonMetrics
    /// One frame's fingers, kept between frames so that showing them allocates nothing.
    private var contacts: [VirtualContact] = []
    /// The counts of each output's devices made anew or removed since motiond started, which
    /// its live device's counts add to: counters never go back on a reload.
    private var retired: [String: VirtualTouchscreenCounts] = [:]
    /// Makes the device for an output: through uinput at the path given (a test names a
    /// file that is not, to see motiond do without), or one writing to a test's recording
    /// (``VirtualDeviceWriter``).
    var makeDevice: (String, VirtualTouchscreenGeometry) throws(VirtualTouchscreenError) -> VirtualTouchscreen
    /// Wakes the withdrawals under way between frames (``followWithdrawals()``), on the
    /// engine's clock; nil leaves them to the frames.
    var scheduler: FrameScheduler?
    private var withdrawalTimer: (deadline: Double, cancel: () -> Void)?

    init(uinputPath: String = "/dev/uinput", metrics: DaemonMetrics) {
        self.metrics = metrics
        makeDevice = { (output, geometry) throws(VirtualTouchscreenError) in
            try VirtualTouchscreen(output: output, geometry: geometry, uinputPath: uinputPath)
        }
    }

    /// The outputs whose virtual touchscreen exists: the input grabs only the panels that
    /// name one of these.
    var available: Set<String> { Set(devices.keys) }

    /// Makes, keeps or removes the devices as `configuration` says: a device whose geometry
    /// changed is made anew (its fingers cancelled first), one no longer asked for goes.
    /// Returns what to say in the log, each line with whether it is a problem.
    func configure(_ configuration: Configuration, elements: [Element], time: Double) -> [SinkNote] {
        configure(configuration)
    }

    /// The daemon stops: every device is removed.
    func finish(reason: String) -> [SinkNote] {
        removeAll()
        return []
    }

    func configure(_ configuration: Configuration) -> [SinkNote] {
        self.configuration = configuration
        routes.removeAll()
        // What a device is made of is its geometry, which each device keeps: compared with the
        // new configuration's, it says which devices stay.
        let wanted = Dictionary(configuration.virtualTouchscreens.map { ($0.output, $0.geometry(on: configuration.screen)) },
                                uniquingKeysWith: { first, _ in first })
        let endings = Dictionary(configuration.virtualTouchscreens.map { ($0.output, $0.cancel) }, uniquingKeysWith: { first, _ in first })
        var notes: [SinkNote] = []
        for (output, device) in devices where wanted[output] != device.geometry {
            device.destroy()
            retired[output] = (retired[output] ?? VirtualTouchscreenCounts()).adding(device.counts)
            devices[output] = nil
            notes.append(SinkNote("virtual touchscreen \(output) removed"))
        }
        // Those that failed are tried again: a reload is how an operator says uinput is there now.
        failures.removeAll()
        for (output, geometry) in wanted.sorted(by: { $0.key < $1.key }) where devices[output] == nil {
            do {
                let device = try makeDevice(output, geometry)
                devices[output] = device
                device.ending = endings[output] ?? .withdraw
                notes.append(SinkNote("virtual touchscreen \(output) is \(device.node) (\(device.name))"))
            } catch {
                failures[output] = error
                notes.append(SinkNote("virtual touchscreen \(output) not made, so its panels are not grabbed and the apps read them raw: \(error.description)", problem: true))
            }
        }
        for (output, device) in devices { device.ending = endings[output] ?? .withdraw }
        return notes
    }

    func take(_ report: FrameReport, input: FrameOrigin?) {
        guard !devices.isEmpty else { return }
        let time = report.time
        defer { followWithdrawals() }
        advanceWithdrawals(to: time)
        // Fingers a gesture or a lock took, on whichever device shows them, before the frame's own.
        if !report.takenFingers.isEmpty {
            for device in devices.values { device.cancel(fingers: report.takenFingers, at: time) }
        }
        if !report.lockedFingers.isEmpty {
            for device in devices.values { device.cancel(fingers: report.lockedFingers, at: time) }
        }
        guard let input, let route = route(input.device) else { return }
        contacts.removeAll(keepingCapacity: true)
        for reported in report.contacts {
            contacts.append(VirtualContact(finger: reported.finger, phase: reported.contact.phase, position: reported.contact.position, forApps: reported.forApps))
        }
        if let seconds = route.device.show(contacts, at: time, stamp: input.time, readAt: input.readAt) {
            route.latency.recordNanoseconds(Int64((seconds * 1e9).rounded()))
        }
    }

    /// Removes every device.
    func removeAll() {
        withdrawalTimer?.cancel()
        withdrawalTimer = nil
        for device in devices.values { device.destroy() }
        devices.removeAll()
        routes.removeAll()
    }

    // MARK: Withdrawals

    /// Writes the withdrawals' frames due by `time` (a slide's step, a lift), on every device.
    private func advanceWithdrawals(to time: Double) {
        for device in devices.values where device.nextDeadline.map({ $0 <= time }) ?? false {
            device.advance(to: time)
        }
    }

    /// Sets the timer to the next withdrawal's frame, between the panels' frames: a finger
    /// withdrawn is lifted on time though no other finger moves. Without a scheduler (a
    /// test's daemon, a fuzzer's) they advance with the frames that come.
    private func followWithdrawals() {
        var next: Double?
        for device in devices.values {
            if let deadline = device.nextDeadline, deadline < next ?? .infinity { next = deadline }
        }
        if withdrawalTimer?.deadline == next { return }
        withdrawalTimer?.cancel()
        withdrawalTimer = nil
        guard let next, let scheduler else { return }
        let cancel = scheduler.schedule(at: next) { [weak self, unowned scheduler] in
            guard let self else { return }
            withdrawalTimer = nil
            advanceWithdrawals(to: Swift.max(next, scheduler.now))
            followWithdrawals()
        }
        withdrawalTimer = (next, cancel)
    }

    /// What each virtual touchscreen made did since motiond started, by output in order.
    var counts: [VirtualTouchscreenReport] {
        devices.sorted { $0.key < $1.key }.map { output, device in
            VirtualTouchscreenReport(output: output, node: device.node, counts: (retired[output] ?? VirtualTouchscreenCounts()).adding(device.counts))
        }
    }

    /// The `virtual_touchscreens` of `devices` and `stats`: each made with its node and counts,
    /// each not made with why.
    var json: JSONValue { VirtualTouchscreenReport.json(counts, failures: failureList) }

    /// Each output whose virtual touchscreen could not be made, with why, by output in order.
    var failureList: [(output: String, reason: String)] {
        failures.sorted { $0.key < $1.key }.map { ($0.key, $0.value.description) }
    }

    private func route(_ device: DeviceIdentity) -> Route? {
        if let known = routes[device.number] { return known }
        let found = configuration.match(device)?.settings.virtualTouchscreen.flatMap { output in
            devices[output].map { Route(device: $0, latency: metrics.virtualTouchscreenLatency(output: output)) }
        }
        routes[device.number] = .some(found)
        return found
    }
}

/// One virtual touchscreen and what it did, as `devices`, `stats`, health and the metrics
/// show it: a write uinput refused is a frame the apps never saw, and was invisible before.
public struct VirtualTouchscreenReport: Sendable, Equatable {
    public var output: String
    public var node: String
    public var counts: VirtualTouchscreenCounts

    public init(output: String, node: String, counts: VirtualTouchscreenCounts) {
        self.output = output
        self.node = node
        self.counts = counts
    }

    var json: JSONValue {
        .object([
            ("output", .string(output)), ("node", .string(node)),
            ("frames_written", .integer(Int64(counts.framesWritten))), ("write_failures", .integer(Int64(counts.writeFailures))),
            ("last_write_error", counts.lastWriteError.map { .string($0) } ?? .null),
            ("fingers_dropped", .integer(Int64(counts.fingersDropped))), ("fingers_cancelled", .integer(Int64(counts.fingersCancelled))),
            ("latency_p50", counts.latency.quantile(0.5).map { .number($0) } ?? .null),
            ("latency_p99", counts.latency.quantile(0.99).map { .number($0) } ?? .null),
        ])
    }

    /// What health says while the device's writes fail; nil while they go through.
    /// The `virtual_touchscreens` list of `devices`, `stats` and `health`: each made with its
    /// node and counts, then each not made with why.
    static func json(_ made: [VirtualTouchscreenReport], failures: [(output: String, reason: String)]) -> JSONValue {
        .array(made.map(\.json) + failures.map { .object([("output", .string($0.output)), ("error", .string($0.reason))]) })
    }

    var problem: HealthProblem? {
        guard counts.isFailing else { return nil }
        return HealthProblem(.virtualTouchscreenFailing, about: output, "the virtual touchscreen of \(output) (\(node)) cannot write: uinput refused \(counts.writeFailures) frames, the last with \(counts.lastWriteError ?? "no reason"), so the apps do not see its panels' fingers")
    }
}
