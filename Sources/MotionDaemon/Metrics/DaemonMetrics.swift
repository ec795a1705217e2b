import CoreMetrics
import Prometheus
import TouchInput

/// The daemon's metrics (docs/operations.md), made through swift-metrics' API into a
/// Prometheus registry of the daemon's own.
///
/// The daemon counts once, in ``DaemonStatus`` (what `stats` shows too); the metrics read
/// those counts when a scraper asks, in ``collect(_:)``, adding to each counter what its
/// count grew by. Per frame only latencies are observed here, histograms no count can stand
/// for: the publication's (``published(latency:)``) and each virtual touchscreen's
/// (``virtualTouchscreenLatency(output:)``).
final class DaemonMetrics {
    let registry: PrometheusCollectorRegistry
    private let factory: CatalogMetricsFactory

    // Per frame
    private let latency: CoreMetrics.Timer
    private var virtualLatencies: [String: CoreMetrics.Timer] = [:]

    // When scraped
    private let lastReloadSuccessful: CoreMetrics.Gauge
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
        func gauge(_ metric: MetricDefinition, _ labels: [(String, String)] = []) -> CoreMetrics.Gauge {
            CoreMetrics.Gauge(label: metric.name, dimensions: labels, factory: factory)
        }
        latency = CoreMetrics.Timer(label: MetricCatalog.publishLatency.name, dimensions: [], factory: factory)
        lastReloadSuccessful = gauge(MetricCatalog.lastReloadSuccessful)
        lastReloadSuccessful.record(1)
        devices = gauge(MetricCatalog.devices)
        skipped = TouchInputHub.SkipReason.Kind.allCases.map { ($0, gauge(MetricCatalog.devicesSkipped, [("reason", $0.rawValue)])) }
        lastInput = gauge(MetricCatalog.lastInput)
        lastTouch = gauge(MetricCatalog.lastTouch)
        clients = Dictionary(uniqueKeysWithValues: ClientTransport.allCases.map { ($0, gauge(MetricCatalog.clients, [("transport", $0.rawValue)])) })
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

    /// A frame's or a spring step's lines went out to the clients; `latency`, for a touch
    /// frame, is from its timestamp until then.
    func published(latency seconds: Double?) {
        // A frame stamped by another clock (a kernel that refused the monotonic one) says nothing.
        if let seconds, seconds >= 0, seconds < 3600 { latency.recordNanoseconds(Int64(seconds * 1e9)) }
    }

    /// The histogram of motiond's own stage for `output`'s virtual touchscreen: made once per
    /// output and kept across reloads, as a counter is.
    func virtualTouchscreenLatency(output: String) -> CoreMetrics.Timer {
        if let known = virtualLatencies[output] { return known }
        let timer = CoreMetrics.Timer(label: MetricCatalog.virtualLatency.name, dimensions: [("output", output)], factory: factory)
        virtualLatencies[output] = timer
        return timer
    }

    // MARK: When scraped

    /// What the daemon knows at a scrape, for the metrics read then.
    struct Snapshot {
        /// The daemon's own counts.
        var status: DaemonStatus
        var devices: DeviceRegistry
        /// Clients connected, by transport.
        var clients: [ClientTransport: Int]
        /// Values coalesced over all clients, those gone included.
        var valuesCoalesced: Int
        /// When a frame was last processed and a finger last landed, in seconds since the Unix epoch.
        var lastInput: Double?
        var lastTouch: Double?
        var loopLag: Double?
        var tuio: [TUIOTargetCounts]
        var process: ProcessStatistics?
        /// The state file's writes that succeeded and failed; nil when none is kept.
        var stateWrites: (written: Int, failed: Int)? = nil
        /// The virtual touchscreens made, with what each did.
        var virtualTouchscreens: [VirtualTouchscreenReport] = []
    }

    func collect(_ snapshot: Snapshot) {
        collect(snapshot.status)
        devices.record(snapshot.devices.devices.count)
        for (kind, count) in snapshot.devices.skippedByKind {
            skipped.first { $0.kind == kind }?.gauge.record(count)
        }
        for (node, counted) in snapshot.devices.totalsByNode {
            let label = [("device", node)]
            totals.update(MetricCatalog.inputEventsDropped, label, to: counted.dropped, factory)
            for kind in ContactFilters.FilterCount.allCases {
                guard let (metric, labeled) = kind.metric else { continue }
                totals.update(metric, label + (labeled ? [("filter", kind.filter)] : []), to: counted.filtered[kind], factory)
            }
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
        for device in snapshot.virtualTouchscreens {
            let label = [("output", device.output)]
            totals.update(MetricCatalog.virtualFramesWritten, label, to: device.counts.framesWritten, factory)
            totals.update(MetricCatalog.virtualWriteFailures, label, to: device.counts.writeFailures, factory)
            totals.update(MetricCatalog.virtualFingers, label + [("outcome", "dropped")], to: device.counts.fingersDropped, factory)
            totals.update(MetricCatalog.virtualFingers, label + [("outcome", "cancelled")], to: device.counts.fingersCancelled, factory)
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

    /// The counts the daemon keeps in ``DaemonStatus``.
    private func collect(_ status: DaemonStatus) {
        for device in status.devices.counts {
            let label = [("device", device.node)]
            totals.update(MetricCatalog.inputFrames, label, to: device.frames, factory)
            totals.update(MetricCatalog.touches, label, to: device.touches, factory)
        }
        totals.update(MetricCatalog.publishedFrames, [], to: status.publishedFrames, factory)
        totals.update(MetricCatalog.publishedValues, [], to: status.publishedValues, factory)
        totals.update(MetricCatalog.inputFramesCoalesced, [], to: status.coalescedFrames, factory)
        for transport in ClientTransport.allCases {
            let label = [("transport", transport.rawValue)]
            totals.update(MetricCatalog.connections, label, to: status.connections[transport] ?? 0, factory)
            totals.update(MetricCatalog.clientsDropped, label, to: status.dropped[transport] ?? 0, factory)
        }
        totals.update(MetricCatalog.reloads, [], to: status.reloads, factory)
        totals.update(MetricCatalog.reloadFailures, [], to: status.reloadFailures, factory)
        lastReloadSuccessful.record(status.lastReloadError == nil ? 1 : 0)
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

/// Counters whose totals another part of motiond keeps (the daemon's in ``DaemonStatus``,
/// the devices' filters and the kernel's drops in ``DeviceRegistry``, TUIO's senders in
/// `TUIOTargets`): each scrape adds
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

extension ContactFilters.FilterCount {
    /// Where the metrics count it: the metric, and whether its `filter` label names the
    /// filter (``filter``), for a metric that counts several; nil for a count `/metrics`
    /// leaves to `stats`.
    var metric: (MetricDefinition, labeled: Bool)? {
        switch self {
        case .stuck, .palms, .jumps: (MetricCatalog.contactsFiltered, true)
        case .deadZone, .phantomTaps, .bursts, .stormContacts, .ghosts: (MetricCatalog.phantomContacts, true)
        case .repaired: (MetricCatalog.contactsRepaired, false)
        case .held: (MetricCatalog.positionsHeld, false)
        case .storms: (MetricCatalog.touchStorms, false)
        case .flips: (MetricCatalog.contactsUnflipped, false)
        case .lastLifts: nil
        }
    }
}
