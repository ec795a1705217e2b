import Foundation
import MotionCore
import NIOCore
import DaemonTestSupport
import Testing
import TouchInput
@testable import MotionConfiguration
@testable import MotionServer
@testable import MotionTUIO
import MotionWire
@testable import MotionDaemon

/// The samples of a Prometheus text exposition, by series (`name{labels}` as written).
/// The end-to-end test reads the same text with a real Prometheus parser; this is enough to
/// look up a value here.
private func samples(_ text: [UInt8]) -> [String: Double] {
    var samples: [String: Double] = [:]
    for line in String(decoding: text, as: UTF8.self).split(separator: "\n") where !line.hasPrefix("#") {
        guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
        samples[String(line[..<space])] = value
    }
    return samples
}

/// An output that says it is a WebSocket, and can be marked as dropped for being slow.
private final class WebSocketLikeOutput: ClientOutput {
    var coalesced = 0
    var isKeepingUp = true
    var wasDropped = false
    var transport: ClientTransport { .websocket }
    func send(_ line: ArraySlice<UInt8>, coalescing stream: StreamID?) {}
    func flush() {}
    func close(saying line: ArraySlice<UInt8>?) {}
}

private let node = "/dev/input/event7"
/// The panel `addTestPanel` adds at `node`.
private let panel = DeviceIdentity(number: 0, node: node, name: "Panel")

/// One finger down at `time`, moved `moves` times 10 ms apart, then lifted: each frame
/// processed `latency` after its timestamp, as live input is (`setNow` sets the clock).
private func touch(_ daemon: Daemon, at time: Double, moves: Int = 5, latency: Double = 0.003, setNow: (Double) -> Void) {
    let phases = [TouchPhase.began] + Array(repeating: .moved, count: moves) + [.ended]
    for (index, phase) in phases.enumerated() {
        let frame = TouchFrame(time: time + Double(index) * 0.01, contacts: [
            panelTouch(1, phase, deviceX: Int32(100 + 10 * index), deviceY: 200),
        ])
        setNow(frame.time + latency)
        daemon.process(frame, from: panel)
    }
}

private func touch(_ daemon: Daemon, _ clock: ManualFrameClock, at time: Double, moves: Int = 5) {
    touch(daemon, at: time, moves: moves) { clock.now = $0 }
}

/// A daemon on the clock the service uses, its time set by hand: as live, a frame's time
/// holds while the engine runs it, and the time after is when its lines were written.
private func timedDaemon() throws -> (Daemon, HandScheduler) {
    let scheduler = HandScheduler(now: 100)
    let (example, _) = try makeDaemon()
    return (Daemon(configuration: example.configuration, clock: TimedFrameClock(rate: 120, scheduler: scheduler), controlPolicy: { _ in true }), scheduler)
}

@Suite("Metrics")
struct MetricsTests {
    @Test("a touch's frames are counted per device, its landing as a touch, and each published frame's latency lands in its bucket")
    func frameCounters() throws {
        let (daemon, scheduler) = try timedDaemon()
        addTestPanel(to: daemon, node: node)
        let client = RecordingOutput()
        daemon.receive(#"{"id":1,"op":"subscribe","streams":["*"]}"#, from: daemon.connect(client, credentials: nil))
        touch(daemon, at: 200) { scheduler.now = $0 }
        let values = samples(daemon.metricsExposition())
        #expect(values["motiond_input_frames_total{device=\"\(node)\"}"] == 7)
        #expect(values["motiond_touches_total{device=\"\(node)\"}"] == 1)
        // Every frame changed screen.contacts, so each was published, 3 ms after its stamp.
        #expect(values["motiond_publish_latency_seconds_count"] == 7)
        #expect(values["motiond_publish_latency_seconds_bucket{le=\"0.0025\"}"] == 0)
        #expect(values["motiond_publish_latency_seconds_bucket{le=\"0.005\"}"] == 7)
        #expect(abs((values["motiond_publish_latency_seconds_sum"] ?? 0) - 0.021) < 1e-6)
        #expect((values["motiond_published_frames_total"] ?? 0) >= 7)
        #expect((values["motiond_published_values_total"] ?? 0) >= 7)

        touch(daemon, at: 300, moves: 2) { scheduler.now = $0 }
        let later = samples(daemon.metricsExposition())
        #expect(later["motiond_input_frames_total{device=\"\(node)\"}"] == 11)
        #expect(later["motiond_touches_total{device=\"\(node)\"}"] == 2)
    }

    @Test("frames nobody subscribed to are counted, but no latency is observed: nothing was written")
    func unpublished() throws {
        let (daemon, clock) = try makeDaemon()
        touch(daemon, clock, at: 200)
        let values = samples(daemon.metricsExposition())
        #expect(values["motiond_input_frames_total{device=\"\(node)\"}"] == 7)
        #expect(values["motiond_publish_latency_seconds_count"] == 0)
        #expect(values["motiond_published_frames_total"] == 0)
    }

    @Test("a frame stamped by another clock (a kernel that kept the wall clock) is not observed as a latency of years")
    func foreignTimestamps() throws {
        let (daemon, scheduler) = try timedDaemon()
        daemon.receive(#"{"id":1,"op":"subscribe","streams":["*"]}"#, from: daemon.connect(RecordingOutput(), credentials: nil))
        touch(daemon, at: 1_700_000_200, latency: -1_700_000_000) { scheduler.now = $0 }
        let values = samples(daemon.metricsExposition())
        #expect(values["motiond_publish_latency_seconds_count"] == 0)
        #expect(values["motiond_input_frames_total{device=\"\(node)\"}"] == 7)
    }

    @Test("clients by transport, connections, clients dropped for being slow, and values coalesced, theirs included after they went")
    func clients() throws {
        let (daemon, _) = try makeDaemon()
        let socketClient = daemon.connect(RecordingOutput(), credentials: nil)
        let slow = WebSocketLikeOutput()
        let page = daemon.connect(slow, credentials: nil)
        _ = daemon.connect(WebSocketLikeOutput(), credentials: nil)
        var values = samples(daemon.metricsExposition())
        #expect(values["motiond_clients{transport=\"unix\"}"] == 1)
        #expect(values["motiond_clients{transport=\"websocket\"}"] == 2)
        #expect(values["motiond_client_connections_total{transport=\"websocket\"}"] == 2)

        slow.coalesced = 5
        slow.wasDropped = true
        daemon.disconnect(page)
        daemon.disconnect(socketClient)
        values = samples(daemon.metricsExposition())
        #expect(values["motiond_clients{transport=\"unix\"}"] == 0)
        #expect(values["motiond_clients{transport=\"websocket\"}"] == 1)
        #expect(values["motiond_clients_dropped_total{transport=\"websocket\"}"] == 1)
        #expect(values["motiond_clients_dropped_total{transport=\"unix\"}"] == 0)
        #expect(values["motiond_values_coalesced_total"] == 5)
        #expect(values["motiond_client_connections_total{transport=\"unix\"}"] == 1)
    }

    @Test("reloads taken and refused are counted, and the last one's outcome is a gauge")
    func reloads() throws {
        let (daemon, _) = try makeDaemon()
        #expect(samples(daemon.metricsExposition())["motiond_config_last_reload_successful"] == 1)
        daemon.reload(daemon.configuration)
        daemon.reloadFailed("motiond.toml:3: a reason")
        var values = samples(daemon.metricsExposition())
        #expect(values["motiond_config_reloads_total"] == 1)
        #expect(values["motiond_config_reload_failures_total"] == 1)
        #expect(values["motiond_config_last_reload_successful"] == 0)
        daemon.reload(daemon.configuration)
        values = samples(daemon.metricsExposition())
        #expect(values["motiond_config_reloads_total"] == 2)
        #expect(values["motiond_config_last_reload_successful"] == 1)
    }

    @Test("devices read and skipped by reason; the filters' and the kernel's counts, which begin again when a device is plugged in again")
    func devices() throws {
        let (daemon, _) = try makeDaemon()
        addTestPanel(to: daemon, node: node)
        daemon.input(.skipped(node: "/dev/input/event9", reason: .init("its x axis has no span", kind: .invalidDescription)))
        daemon.input(.skipped(node: "/dev/input/event10", reason: .init("not selected", kind: .notSelected)))
        var counts = ContactFilters.Counts()
        counts.stuck = 2
        counts.held = 40
        counts.repaired = 6
        daemon.input(.filterCounts(panel, counts))
        daemon.input(.eventsDropped(panel, total: 3))
        var values = samples(daemon.metricsExposition())
        #expect(values["motiond_devices"] == 1)
        // Its counters are there from the start, at 0: a rate over them is 0, not missing.
        #expect(values["motiond_input_frames_total{device=\"\(node)\"}"] == 0)
        #expect(values["motiond_devices_skipped{reason=\"invalid_description\"}"] == 1)
        #expect(values["motiond_devices_skipped{reason=\"not_selected\"}"] == 1)
        #expect(values["motiond_devices_skipped{reason=\"permission_denied\"}"] == 0)
        #expect(values["motiond_contacts_filtered_total{device=\"\(node)\",filter=\"stuck\"}"] == 2)
        #expect(values["motiond_contacts_filtered_total{device=\"\(node)\",filter=\"palm\"}"] == 0)
        #expect(values["motiond_positions_held_total{device=\"\(node)\"}"] == 40)
        #expect(values["motiond_contacts_repaired_total{device=\"\(node)\"}"] == 6)
        #expect(values["motiond_input_events_dropped_total{device=\"\(node)\"}"] == 3)

        // Unplugged and plugged in again: its own counts start from nothing; the counters go on.
        daemon.input(.removed(panel))
        addTestPanel(to: daemon, node: node)
        counts = ContactFilters.Counts()
        counts.stuck = 1
        daemon.input(.filterCounts(panel, counts))
        values = samples(daemon.metricsExposition())
        #expect(values["motiond_contacts_filtered_total{device=\"\(node)\",filter=\"stuck\"}"] == 3)
    }

    @Test("a device's counts reach its counters whatever the timing of scrapes, unplugs and replugs on one node")
    func replugs() throws {
        let (daemon, _) = try makeDaemon()
        func counts(stuck: Int, held: Int) -> ContactFilters.Counts {
            var counts = ContactFilters.Counts()
            counts.stuck = stuck
            counts.held = held
            return counts
        }
        func scrape() -> (stuck: Double?, held: Double?, dropped: Double?) {
            let values = samples(daemon.metricsExposition())
            return (values["motiond_contacts_filtered_total{device=\"\(node)\",filter=\"stuck\"}"],
                    values["motiond_positions_held_total{device=\"\(node)\"}"],
                    values["motiond_input_events_dropped_total{device=\"\(node)\"}"])
        }
        addTestPanel(to: daemon, node: node)
        daemon.input(.filterCounts(panel, counts(stuck: 2, held: 10)))
        daemon.input(.eventsDropped(panel, total: 1))
        var scraped = scrape()
        #expect(scraped.stuck == 2 && scraped.held == 10 && scraped.dropped == 1)

        // It counts on after that scrape, goes, and a panel on the same node counts past
        // what was scraped before the next scrape: 4 + 5 stuck, 30 + 12 held, 3 + 2 drops.
        daemon.input(.filterCounts(panel, counts(stuck: 4, held: 30)))
        daemon.input(.eventsDropped(panel, total: 3))
        daemon.input(.removed(panel))
        addTestPanel(to: daemon, node: node)
        daemon.input(.filterCounts(panel, counts(stuck: 5, held: 12)))
        daemon.input(.eventsDropped(panel, total: 2))
        scraped = scrape()
        #expect(scraped.stuck == 9 && scraped.held == 42 && scraped.dropped == 5, "\(scraped)")

        // Gone with counts no scrape saw, and not back: they are counted all the same.
        daemon.input(.filterCounts(panel, counts(stuck: 6, held: 13)))
        daemon.input(.removed(panel))
        scraped = scrape()
        #expect(scraped.stuck == 10 && scraped.held == 43 && scraped.dropped == 5, "\(scraped)")
        // `stats` counts the drops since the daemon started as the metric does, those of
        // devices that went included: a reader asking after an unplug hears of them.
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        daemon.receive(#"{"id": 1, "op": "stats"}"#, from: session)
        #expect(try output.take().last?["result"]?["dropped_events"]?.integer == 5)

        // Added again without a word of its going (the input side opened the node anew).
        addTestPanel(to: daemon, node: node)
        daemon.input(.filterCounts(panel, counts(stuck: 1, held: 0)))
        addTestPanel(to: daemon, node: node)
        daemon.input(.filterCounts(panel, counts(stuck: 2, held: 0)))
        #expect(scrape().stuck == 13)
    }

    @Test("two [[tuio]] with one target: its counter is the datagrams it received, however often it is scraped, reloads included")
    func tuioTargetTwice() throws {
        let receiver = try UDPReceiver()
        let configuration = try Configuration.parse("""
            [[element]]
            id = "card"
            center = [960, 540]
            size = [400, 300]
            [element.draggable]

            [[tuio]]
            target = "127.0.0.1:\(receiver.port)"

            [[tuio]]
            target = "127.0.0.1:\(receiver.port)"
            elements = "*"
            contacts = false
            source = "motiond-elements"
            """, file: "metrics.toml")
        let clock = ManualFrameClock(now: 100)
        let daemon = Daemon(configuration: configuration, clock: clock, tuio: TUIOTargets(), controlPolicy: { _ in true })
        daemon.configureSinks()  // started, as DaemonService starts it
        addTestPanel(to: daemon, node: node)
        let series = "motiond_tuio_datagrams_total{target=\"127.0.0.1:\(receiver.port)\"}"
        var received = 0
        /// The counter, once the receiver has read as many datagrams (within 5 s), and what it read.
        func counted() -> (counter: Double?, received: Int) {
            let counter = samples(daemon.metricsExposition())[series]
            received += receiver.drain(until: Int(counter ?? 0) - received, seconds: 5)
            return (counter, received)
        }
        touch(daemon, clock, at: 200)
        let first = counted()
        #expect(first.counter.map(Int.init) == first.received && first.received > 2, "\(first)")
        // Scrapes without traffic do not move it.
        for _ in 0..<3 { #expect(counted().counter == first.counter) }

        // A reload starts each target's own count again; a longer touch passes the old one.
        daemon.reload(configuration)
        touch(daemon, clock, at: 300, moves: 20)
        let afterReload = counted()
        #expect(afterReload.counter.map(Int.init) == afterReload.received && afterReload.received > 2 * first.received, "\(afterReload)")

        // A reload without [[tuio]]: the target's goodbyes are counted, and nothing after.
        daemon.reload(try Configuration.parse("", file: "metrics.toml"))
        touch(daemon, clock, at: 400)
        let ended = counted()
        #expect(ended.counter.map(Int.init) == ended.received && ended.received > afterReload.received, "\(ended)")
    }

    @Test("the text names only the catalog's metrics, each with its type and help, and with a device, a TUIO target and a state file it has all of them")
    func catalog() throws {
        let clock = ManualFrameClock(now: 100)
        let configuration = try Configuration.parse("""
            [[element]]
            id = "card"
            center = [960, 540]
            size = [400, 300]
            [element.draggable]

            [[tuio]]
            target = "127.0.0.1:9"
            elements = "*"
            """, file: "metrics.toml")
        let daemon = Daemon(configuration: configuration, clock: clock, tuio: TUIOTargets(), controlPolicy: { _ in true })
        daemon.configureSinks()  // started, as DaemonService starts it
        // And a state file, whose writes are counted only where one is kept.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("motiond-metrics-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try daemon.keepScene(in: StateFile(path: directory.appendingPathComponent("scene.json").path), interval: 1,
                             scheduler: HandScheduler(now: 100), writer: ImmediateStateWriter())
        addTestPanel(to: daemon, node: node)
        touch(daemon, clock, at: 200)
        let text = String(decoding: daemon.metricsExposition(), as: UTF8.self)
        var typed: [String: String] = [:], helped: Set<String> = []
        for line in text.split(separator: "\n") {
            let words = line.split(separator: " ", maxSplits: 3)
            if words.first == "#", words.count >= 4, words[1] == "TYPE" { typed[String(words[2])] = String(words[3]) }
            if words.first == "#", words.count >= 4, words[1] == "HELP" { helped.insert(String(words[2])) }
        }
        for (name, type) in typed {
            let definition = try #require(MetricCatalog.definition(named: name), "\(name) is not in the catalog")
            #expect(definition.kind.rawValue == type, "\(name)")
            #expect(helped.contains(name), "\(name) has no HELP")
        }
        // A virtual touchscreen's needs uinput, which a test machine may not have: those are
        // checked in VirtualTouchscreenCountsTests.
        for definition in MetricCatalog.all where !definition.name.hasPrefix("motiond_virtual_") {
            #expect(typed[definition.name] != nil, "\(definition.name) is missing")
        }
        let values = samples(Array(text.utf8))
        #expect((values["motiond_tuio_datagrams_total{target=\"127.0.0.1:9\"}"] ?? 0) > 0)
        #expect(values["motiond_build_info{version=\"\(MotiondVersion.string)\"}"] == 1)
        #expect((values["process_resident_memory_bytes"] ?? 0) > 1_048_576)
        #expect((values["process_open_fds"] ?? 0) > 0)
    }

    @Test("the last input and the last touch are Unix times, taken back from the daemon's monotonic clock")
    func lastTouch() throws {
        let (daemon, clock) = try makeDaemon()
        var values = samples(daemon.metricsExposition())
        #expect(values["motiond_last_touch_timestamp_seconds"] == 0)
        touch(daemon, clock, at: 200, moves: 1)   // landed at 200.003, last frame at 200.023
        clock.now = 260.023
        let before = Date().timeIntervalSince1970
        values = samples(daemon.metricsExposition())
        let after = Date().timeIntervalSince1970
        let touched = try #require(values["motiond_last_touch_timestamp_seconds"])
        let input = try #require(values["motiond_last_input_timestamp_seconds"])
        #expect(touched >= before - 60.02 - 0.001 && touched <= after - 60.02 + 0.001)
        #expect(input >= before - 60 - 0.001 && input <= after - 60 + 0.001)
    }

    @Test("/proc/self/stat is read from its last parenthesis, whatever the command's name holds")
    func procStat() throws {
        let stat = "4242 (motiond (a) b) S 1 4242 4242 0 -1 4194560 1200 0 0 0 250 50 0 0 20 0 3 0 1000 123456789 2048 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n"
        let statistics = try #require(ProcessStatistics.parse(stat: stat, bootTime: 1_700_000_000, ticksPerSecond: 100, pageSize: 4096))
        #expect(statistics.cpuSeconds == 3)
        #expect(statistics.startTime == 1_700_000_010)
        #expect(statistics.virtualBytes == 123_456_789)
        #expect(statistics.residentBytes == 2048 * 4096)
        #expect(ProcessStatistics.parse(stat: "4242 (truncated) S 1 2", bootTime: 0, ticksPerSecond: 100, pageSize: 4096) == nil)

        let now = try #require(ProcessStatistics.current())
        #expect(now.residentBytes > 0 && now.cpuSeconds > 0)
        // This test process started within the last hour (the boot time comes from the
        // clocks, which /proc/stat's btime agrees with to the second).
        #expect(now.startTime <= Date().timeIntervalSince1970 && now.startTime > Date().timeIntervalSince1970 - 3600, "\(now.startTime)")
        #expect((now.openFileDescriptors ?? 0) > 0 && (now.maximumFileDescriptors ?? 0) >= (now.openFileDescriptors ?? 0))
    }
}

@Suite("Health")
struct HealthTests {
    @Test("without a touchscreen motiond is unhealthy and says why, naming the skipped ones and their reasons")
    func noTouchscreen() throws {
        let (daemon, _) = try makeDaemon()
        var report = daemon.health()
        #expect(!report.isHealthy)
        #expect(report.problems == [HealthProblem(.noTouchscreen, "no touchscreen is being read")])
        daemon.input(.skipped(node: "/dev/input/event9", reason: .init("/dev/input/event9 (Panel) is not used: its x axis has no span", kind: .invalidDescription)))
        report = daemon.health()
        #expect(report.problems.first?.kind == .noTouchscreen, "\(report.problems)")
        #expect(report.problems.first?.message.contains("1 skipped: /dev/input/event9: /dev/input/event9 (Panel) is not used: its x axis has no span") == true, "\(report.problems)")
        #expect(report.json.encoded.contains(#""status":"unhealthy""#))
    }

    @Test("a touchscreen read makes it healthy, until the event loop runs more than half a second late")
    func loopLag() throws {
        let (daemon, clock) = try makeDaemon()
        addTestPanel(to: daemon)
        #expect(daemon.health().isHealthy)
        #expect(daemon.health().json.encoded.contains(#""loop_lag":null"#))
        daemon.loopLagMeasured(0.002)
        #expect(daemon.health().isHealthy)
        daemon.loopLagMeasured(0.8)
        let report = daemon.health()
        #expect(report.problems == [HealthProblem(.loopBehind, "the event loop runs 0.8 s late (more than 0.5 s): the daemon is behind")])
        daemon.loopLagMeasured(0.001)
        #expect(daemon.health().isHealthy)

        // Seconds since the last input and touch, on the daemon's clock.
        #expect(daemon.health().sinceTouch == nil)
        touch(daemon, clock, at: 200, moves: 1)
        clock.now = 210.003
        let after = daemon.health()
        #expect(abs((after.sinceTouch ?? 0) - 10) < 1e-9 && abs((after.sinceInput ?? 0) - 9.98) < 1e-9)
        #expect(after.json.encoded.contains(#""since_touch":10,"#))
    }

    @Test("a touch storm makes health name the panel until its quiet is over; devices shows the storm and the phantoms learned; the phantom filters' counters count")
    func stormsAndPhantoms() throws {
        let (daemon, clock) = try makeDaemon()
        addTestPanel(to: daemon, node: node)
        clock.now = 100
        daemon.input(.filtered(panel, ContactFilters.Notice(kind: .storm(contacts: 212, quiet: 5), trackingID: -1, position: Point(x: 0, y: 0), time: 100)))
        daemon.input(.filtered(panel, ContactFilters.Notice(kind: .phantomTap(period: 12.864, learned: true), trackingID: 3,
                                                            position: Point(x: 640.4, y: 300), time: 100)))
        clock.now = 102
        let report = daemon.health()
        #expect(report.problems.map(\.kind) == [.touchStorm] && report.problems.first?.about == node, "\(report.problems)")
        #expect(report.problems.first?.message == "\(node) flooded 212 contacts within a second that lifted within 70 ms (a touch storm) 2 s ago: it is quiet until the flood stops (storm_quiet); a sensor that keeps storming needs a reset or a look")
        #expect(report.json.encoded.contains(#""storms":[{"node":"\#(node)","since":2,"contacts":212}]"#), "\(report.json.encoded)")
        // The quiet lasts as long as the flood: until the panel tells it is over.
        clock.now = 110
        #expect(!daemon.health().isHealthy)
        daemon.input(.filtered(panel, ContactFilters.Notice(kind: .calm(after: 0.5), trackingID: -1, position: Point(x: 0, y: 0), time: 105)))
        #expect(daemon.health().isHealthy)

        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        _ = try output.take()
        daemon.receive(#"{"id":1,"op":"devices"}"#, from: session)
        let device = try #require(try output.take().first?["result"]?["devices"]?.array?.first)
        #expect(device["storm"]?["contacts"]?.integer == 212 && device["storm"]?["quiet_until"]?.number == 105)
        #expect(device["phantom_taps"]?.array?.first?["x"]?.number == 640 && device["phantom_taps"]?.array?.first?["period"]?.number == 12.864)
        // The test's panel has every filter off: so says its entry.
        #expect(device["filters"]?["storm_contacts"]?.integer == nil && device["filters"]?["phantom_taps"]?.bool == false)

        var counts = ContactFilters.Counts()
        counts.phantomTaps = 3
        counts.storms = 1
        counts.stormContacts = 40
        counts.flips = 2
        daemon.input(.filterCounts(panel, counts))
        let values = samples(daemon.metricsExposition())
        #expect(values["motiond_phantom_contacts_total{device=\"\(node)\",filter=\"phantom_tap\"}"] == 3)
        #expect(values["motiond_phantom_contacts_total{device=\"\(node)\",filter=\"storm\"}"] == 40)
        #expect(values["motiond_phantom_contacts_total{device=\"\(node)\",filter=\"ghost\"}"] == 0)
        #expect(values["motiond_touch_storms_total{device=\"\(node)\"}"] == 1)
        #expect(values["motiond_contacts_unflipped_total{device=\"\(node)\"}"] == 2)
    }

    @Test("the health and metrics ops answer over the protocol, to a client without control")
    func ops() throws {
        let (daemon, _) = try makeDaemon(control: false)
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        _ = try output.take()
        daemon.receive(#"{"id":1,"op":"health"}"#, from: session)
        daemon.receive(#"{"id":2,"op":"metrics"}"#, from: session)
        let replies = try output.take()
        #expect(replies.first?["result"]?["status"]?.string == "unhealthy")
        #expect(replies.last?["result"]?["text"]?.string?.contains("# TYPE motiond_devices gauge\nmotiond_devices 0") == true)
    }
}

@Suite("Metrics and health over HTTP")
struct MonitoringEndpointTests {
    @Test("GET /metrics is Prometheus's text format; GET /healthz is 503 with the reason until a touchscreen is read, then 200")
    func endpoints() throws {
        let web = try WebConnection()
        let metrics = try web.response(to: WebConnection.get("/metrics"))
        #expect(metrics.hasPrefix("HTTP/1.1 200 OK"), "\(metrics.prefix(200))")
        #expect(metrics.contains("Content-Type: text/plain; version=0.0.4; charset=utf-8"))
        #expect(metrics.contains("# TYPE motiond_input_frames_coalesced_total counter"))

        let sick = try web.response(to: WebConnection.get("/healthz"))
        #expect(sick.hasPrefix("HTTP/1.1 503 Service Unavailable"), "\(sick.prefix(200))")
        #expect(sick.contains("Content-Type: application/json"))
        #expect(sick.contains(#""problems":["no touchscreen is being read"]"#))

        addTestPanel(to: web.daemon)
        let well = try web.response(to: WebConnection.get("/healthz"))
        #expect(well.hasPrefix("HTTP/1.1 200 OK") && well.contains(#""status":"ok""#), "\(well.prefix(300))")

        let head = try web.response(to: "HEAD /metrics HTTP/1.1\r\nHost: 127.0.0.1:8765\r\n\r\n")
        #expect(head.hasPrefix("HTTP/1.1 200 OK") && !head.contains("# TYPE"))
        let post = try web.response(to: "POST /healthz HTTP/1.1\r\nHost: 127.0.0.1:8765\r\nContent-Length: 0\r\n\r\n")
        #expect(post.hasPrefix("HTTP/1.1 405"))
    }

    @Test("a page on another host name (DNS rebinding) reads neither")
    func rebinding() throws {
        let web = try WebConnection()
        for path in ["/metrics", "/healthz"] {
            let response = try web.response(to: WebConnection.get(path, host: "attacker.example:8765"))
            #expect(response.hasPrefix("HTTP/1.1 421"), "\(path): \(response.prefix(100))")
            #expect(!response.contains("motiond_"))
        }
    }
}
