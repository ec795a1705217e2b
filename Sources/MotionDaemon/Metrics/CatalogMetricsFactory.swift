import CoreMetrics
import Prometheus

/// swift-metrics' factory for motiond's own registry: swift-prometheus's metrics, each with
/// its `# HELP` line and buckets from the ``MetricCatalog`` (swift-prometheus's own factory
/// writes no help). The daemon makes its metrics through swift-metrics' API with this
/// factory, not through the process-wide `MetricsSystem`: each daemon (several in a test
/// process) has a registry of its own.
struct CatalogMetricsFactory: MetricsFactory {
    let registry: PrometheusCollectorRegistry

    /// The metric named `label`, with its help.
    private func named(_ label: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: label, unitName: "", helpText: MetricCatalog.definition(named: label)?.help ?? "")
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        registry.makeCounter(descriptor: named(label), labels: dimensions)
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        registry.makeCounter(descriptor: named(label), labels: dimensions)
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard aggregate else { return registry.makeGauge(descriptor: named(label), labels: dimensions) }
        return registry.makeValueHistogram(descriptor: named(label), labels: dimensions, buckets: MetricCatalog.buckets(named: label))
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        registry.makeGauge(descriptor: named(label), labels: dimensions)
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        let buckets = MetricCatalog.buckets(named: label).map { Duration.nanoseconds(Int64(($0 * 1e9).rounded())) }
        return registry.makeDurationHistogram(descriptor: named(label), labels: dimensions, buckets: buckets)
    }

    func destroyCounter(_ handler: any CounterHandler) {
        if let counter = handler as? Prometheus.Counter { registry.unregisterCounter(counter) }
    }

    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {
        if let counter = handler as? Prometheus.Counter { registry.unregisterCounter(counter) }
    }

    func destroyRecorder(_ handler: any RecorderHandler) {
        if let gauge = handler as? Prometheus.Gauge { registry.unregisterGauge(gauge) }
        if let histogram = handler as? ValueHistogram { registry.unregisterValueHistogram(histogram) }
    }

    func destroyMeter(_ handler: any MeterHandler) {
        if let gauge = handler as? Prometheus.Gauge { registry.unregisterGauge(gauge) }
    }

    func destroyTimer(_ handler: any TimerHandler) {
        if let histogram = handler as? DurationHistogram { registry.unregisterDurationHistogram(histogram) }
    }
}
