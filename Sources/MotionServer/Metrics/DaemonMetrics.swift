import CoreMetrics
import Prometheus
import TouchInput

/// The daemon's metrics (docs/operations.md), made through swift-metrics' API into a
/// Prometheus registry of the daemon's own.
///
/// Two kinds of work, kept apart: what happens per frame costs an increment or a histogram
/// observation (``frame(_:touches:)``, ``published(values:latency:)``); everything
/// else (gauges, and totals other parts of motiond already count) is read when a scraper
/// asks, in ``collect(_:)``.
final class DaemonMetrics {
    let registry: PrometheusCollectorRegistry
    private let factory: CatalogMetricsFactory

    // Per frame
    typealias DeviceCounters = (frames: CoreMetrics.Counter, touches: CoreMetrics.Counter)
    /// By node, the `device` label, made when the device comes (so a scraper sees 0 before
    /// its first touch); and by the device's number, for the frame path.
    private var countersByNode: [String: DeviceCounters] = [:]
    private var countersByNumber: [Int: DeviceCounters] = [:]
    private let publishedFrames: CoreMetrics.Counter
    private let publishedValues: CoreMetrics.Counter
    private let latency: CoreMetrics.Timer

    // As it happens
    private let framesCoalesced: CoreMetrics.Counter
    private let connections: [ClientTransport: CoreMetrics.Counter]
    private let dropped: [ClientTransport: CoreMetrics.Counter]
    private let reloads: CoreMetrics.Counter
    private let reloadFailures: CoreMetrics.Counter
    private let lastReloadSuccessful: CoreMetrics.Gauge

    // When scraped
    private let devices: CoreMetrics.Gauge
    private let skipped: [(kind: TouchInputHub.SkipReason.Kind, gauge: CoreMetrics.Gauge)]
    private let lastInput: CoreMetrics.Gauge
    private let lastTouch: CoreMetrics.Gauge
    private let clients: [ClientTransport: CoreMetrics.Gauge]
    private let loopLag: CoreMetrics.Gauge
    private var totals = CountedElsewhere()
    private let cpu: FloatingPointCounter
    private var cpuCounted = 0.0
    private let residentMemory, virtualMemory, startTime, openFDs, maxFDs: CoreMetrics.Gauge

    init(version: String) {
        let registry = PrometheusCollectorRegistry()
        let factory = CatalogMetricsFactory(registry: registry)
        self.registry = registry
        self.factory = factory
        func counter(_ metric: MetricDefinition, _ labels: [(String, String)] = []) -> CoreMetrics.Counter {
            CoreMetrics.Counter(label: metric.name, dimensions: labels, factory: factory)
        }
        func gauge(_ metric: MetricDefinition, _ labels: [(String, String)] = []) -> CoreMetrics.Gauge {
            CoreMetrics.Gauge(label: metric.name, dimensions: labels, factory: factory)
        }
        func byTransport<T>(_ make: (ClientTransport) -> T) -> [ClientTransport: T] {
            Dictionary(uniqueKeysWithValues: ClientTransport.allCases.map { ($0, make($0)) })
        }
        publishedFrames = counter(MetricCatalog.publishedFrames)
        publishedValues = counter(MetricCatalog.publishedValues)
        latency = CoreMetrics.Timer(label: MetricCatalog.publishLatency.name, dimensions: [], factory: factory)
        framesCoalesced = counter(MetricCatalog.inputFramesCoalesced)
        connections = byTransport { counter(MetricCatalog.connections, [("transport", $0.rawValue)]) }
        dropped = byTransport { counter(MetricCatalog.clientsDropped, [("transport", $0.rawValue)]) }
        reloads = counter(MetricCatalog.reloads)
        reloadFailures = counter(MetricCatalog.reloadFailures)
        lastReloadSuccessful = gauge(MetricCatalog.lastReloadSuccessful)
        lastReloadSuccessful.record(1)
        devices = gauge(MetricCatalog.devices)
        skipped = TouchInputHub.SkipReason.Kind.allCases.map { ($0, gauge(MetricCatalog.devicesSkipped, [("reason", $0.rawValue)])) }
        lastInput = gauge(MetricCatalog.lastInput)
        lastTouch = gauge(MetricCatalog.lastTouch)
        clients = byTransport { gauge(MetricCatalog.clients, [("transport", $0.rawValue)]) }
        loopLag = gauge(MetricCatalog.loopLag)
        gauge(MetricCatalog.buildInfo, [("version", version)]).record(1)
        cpu = FloatingPointCounter(label: MetricCatalog.cpu.name, dimensions: [], factory: factory)
        residentMemory = gauge(MetricCatalog.residentMemory)
        virtualMemory = gauge(MetricCatalog.virtualMemory)
        startTime = gauge(MetricCatalog.startTime)
        openFDs = gauge(MetricCatalog.openFDs)
        maxFDs = gauge(MetricCatalog.maxFDs)
    }

    // MARK: Per frame

    /// A frame of `device`, with `touches` fingers that landed in it.
    func frame(_ device: DeviceIdentity, touches: Int) {
        let counters = countersByNumber[device.number] ?? numbered(device)
        counters.frames.increment()
        if touches > 0 { counters.touches.increment(by: touches) }
    }

    /// The counters of a device whose frames come before the device was added (a test's): by
    /// its node, or its number when it has none.
    private func numbered(_ device: DeviceIdentity) -> DeviceCounters {
        let counters = counters(label: device.node.isEmpty ? "device \(device.number)" : device.node)
        countersByNumber[device.number] = counters
        return counters
    }

    /// A touchscreen came: its counters start at 0, or go on from where they were.
    func deviceAdded(_ device: DeviceIdentity) {
        countersByNumber[device.number] = counters(label: device.node)
    }

    private func counters(label node: String) -> DeviceCounters {
        if let counters = countersByNode[node] { return counters }
        let label = [("device", node)]
        let counters = (CoreMetrics.Counter(label: MetricCatalog.inputFrames.name, dimensions: label, factory: factory),
                        CoreMetrics.Counter(label: MetricCatalog.touches.name, dimensions: label, factory: factory))
        countersByNode[node] = counters
        return counters
    }

    /// A frame's or a spring step's `values` lines went out to the clients; `latency`, for a
    /// touch frame, is from its timestamp until then.
    func published(values: Int, latency seconds: Double?) {
        publishedFrames.increment()
        publishedValues.increment(by: values)
        // A frame stamped by another clock (a kernel that refused the monotonic one) says nothing.
        if let seconds, seconds >= 0, seconds < 3600 { latency.recordNanoseconds(Int64(seconds * 1e9)) }
    }

    // MARK: As it happens

    func framesCoalesced(_ count: Int) { framesCoalesced.increment(by: count) }
    func connected(_ transport: ClientTransport) { connections[transport]?.increment() }
    func dropped(_ transport: ClientTransport) { dropped[transport]?.increment() }

    func reloaded(successfully: Bool) {
        (successfully ? reloads : reloadFailures).increment()
        lastReloadSuccessful.record(successfully ? 1 : 0)
    }

    // MARK: When scraped

    /// What the daemon knows at a scrape, for the metrics read then.
    struct Snapshot {
        var devices: DeviceRegistry
        /// Clients connected, by transport.
        var clients: [ClientTransport: Int]
        /// Values coalesced over all clients, those gone included.
        var valuesCoalesced: Int
        /// When a frame was last processed and a finger last landed, in seconds since the Unix epoch.
        var lastInput: Double?
        var lastTouch: Double?
        var loopLag: Double?
        var tuio: [SceneOutputStatistics]
        var process: ProcessStatistics?
        /// The state file's writes that succeeded and failed; nil when none is kept.
        var stateWrites: (written: Int, failed: Int)? = nil
    }

    func collect(_ snapshot: Snapshot) {
        devices.record(snapshot.devices.devices.count)
        for (kind, count) in snapshot.devices.skippedByKind {
            skipped.first { $0.kind == kind }?.gauge.record(count)
        }
        for (node, counted) in snapshot.devices.totalsByNode {
            let label = [("device", node)]
            totals.update(MetricCatalog.inputEventsDropped, label, to: counted.dropped, factory)
            let filtered = counted.filtered
            for (filter, count) in [("stuck", filtered.stuck), ("palm", filtered.palms), ("jump", filtered.jumps)] {
                totals.update(MetricCatalog.contactsFiltered, label + [("filter", filter)], to: count, factory)
            }
            totals.update(MetricCatalog.contactsRepaired, label, to: filtered.repaired, factory)
            totals.update(MetricCatalog.positionsHeld, label, to: filtered.held, factory)
        }
        for transport in ClientTransport.allCases { clients[transport]?.record(snapshot.clients[transport] ?? 0) }
        totals.update(MetricCatalog.valuesCoalesced, [], to: snapshot.valuesCoalesced, factory)
        lastInput.record(snapshot.lastInput ?? 0)
        lastTouch.record(snapshot.lastTouch ?? 0)
        loopLag.record(snapshot.loopLag ?? 0)
        if let writes = snapshot.stateWrites {
            totals.update(MetricCatalog.stateWrites, [], to: writes.written, factory)
            totals.update(MetricCatalog.stateWriteFailures, [], to: writes.failed, factory)
        }
        for target in snapshot.tuio {
            totals.update(MetricCatalog.tuioDatagrams, [("target", target.target)], to: target.datagrams, factory)
            totals.update(MetricCatalog.tuioErrors, [("target", target.target)], to: target.failures, factory)
        }
        if let process = snapshot.process {
            if process.cpuSeconds > cpuCounted {
                cpu.increment(by: process.cpuSeconds - cpuCounted)
                cpuCounted = process.cpuSeconds
            }
            residentMemory.record(process.residentBytes)
            virtualMemory.record(process.virtualBytes)
            startTime.record(process.startTime)
            if let count = process.openFileDescriptors { openFDs.record(count) }
            if let count = process.maximumFileDescriptors { maxFDs.record(count) }
        }
    }

    /// The metrics in Prometheus's text format (version 0.0.4).
    func exposition() -> [UInt8] {
        var text: [UInt8] = []
        text.reserveCapacity(8192)
        registry.emit(into: &text)
        return text
    }

    /// Prometheus's media type for the text format.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"
}

/// Counters whose totals another part of motiond keeps (the devices' filters and the
/// kernel's drops in ``DeviceRegistry``, TUIO's senders in `TUIOTargets`): each scrape adds
/// what a total grew by. Their keepers make the totals whole over the daemon's life (what a
/// device counted before it went, what a target was sent before a reload, two `[[tuio]]`
/// with one target as one), so that a counter is what happened, whenever the scrapes come.
struct CountedElsewhere {
    private var counters: [String: (counter: CoreMetrics.Counter, counted: Int)] = [:]

    mutating func update(_ metric: MetricDefinition, _ labels: [(String, String)], to total: Int, _ factory: CatalogMetricsFactory) {
        let key = metric.name + labels.map { "\u{0}\($0.0)=\($0.1)" }.joined()
        var entry = counters[key] ?? (CoreMetrics.Counter(label: metric.name, dimensions: labels, factory: factory), 0)
        if total > entry.counted {
            entry.counter.increment(by: total - entry.counted)
            entry.counted = total
        }
        counters[key] = entry
    }
}
