/// What a metric is, as Prometheus's text format says it (`# TYPE`).
public enum MetricKind: String, Sendable {
    case counter, gauge, histogram
}

/// One metric motiond exports: its name, what kind it is, its labels and its `# HELP` text.
public struct MetricDefinition: Sendable {
    public let name: String
    public let kind: MetricKind
    public let labels: [String]
    public let help: String
}

/// Every metric motiond exports, in one place: the `# HELP` lines come from here, and the
/// tests hold docs/operations.md and motiond(8) to it. Names follow Prometheus's practice
/// (`motiond_` prefix, base units, `_total` on counters); labels have few values each.
public enum MetricCatalog {
    // Input
    static let inputFrames = MetricDefinition(name: "motiond_input_frames_total", kind: .counter, labels: ["device"],
        help: "Touch frames read from each touchscreen (a replay's too) and processed.")
    static let inputFramesCoalesced = MetricDefinition(name: "motiond_input_frames_coalesced_total", kind: .counter, labels: [],
        help: "Touch frames left out because a newer frame of the same device was already waiting: the daemon was behind.")
    static let touches = MetricDefinition(name: "motiond_touches_total", kind: .counter, labels: ["device"],
        help: "Fingers that landed on each touchscreen.")
    static let inputEventsDropped = MetricDefinition(name: "motiond_input_events_dropped_total", kind: .counter, labels: ["device"],
        help: "Times the kernel dropped a touchscreen's events (SYN_DROPPED) and motiond resynchronized.")
    static let contactsFiltered = MetricDefinition(name: "motiond_contacts_filtered_total", kind: .counter, labels: ["device", "filter"],
        help: "Contacts the field filters cancelled, by filter: stuck, palm or jump.")
    static let contactsRepaired = MetricDefinition(name: "motiond_contacts_repaired_total", kind: .counter, labels: ["device"],
        help: "Contacts kept, under their own ids, after the panel exchanged their positions within one frame.")
    static let phantomContacts = MetricDefinition(name: "motiond_phantom_contacts_total", kind: .counter, labels: ["device", "filter"],
        help: "Contacts no finger made, never begun or cancelled, by filter: dead_zone, phantom_tap, burst, storm or ghost.")
    static let touchStorms = MetricDefinition(name: "motiond_touch_storms_total", kind: .counter, labels: ["device"],
        help: "Touch storms: times a panel flooded new contacts and was made quiet.")
    static let contactsUnflipped = MetricDefinition(name: "motiond_contacts_unflipped_total", kind: .counter, labels: ["device"],
        help: "Frames in which an infrared frame reported its two fingers at their ghost corners and they were put back.")
    static let positionsHeld = MetricDefinition(name: "motiond_positions_held_total", kind: .counter, labels: ["device"],
        help: "Contact positions the hysteresis filter held still.")
    static let devices = MetricDefinition(name: "motiond_devices", kind: .gauge, labels: [],
        help: "Touchscreens being read, a replayed recording included.")
    static let devicesSkipped = MetricDefinition(name: "motiond_devices_skipped", kind: .gauge, labels: ["reason"],
        help: "Touchscreens found but not read, by reason.")
    static let lastInput = MetricDefinition(name: "motiond_last_input_timestamp_seconds", kind: .gauge, labels: [],
        help: "When the last touch frame was processed, in seconds since the Unix epoch; 0 before the first.")
    static let lastTouch = MetricDefinition(name: "motiond_last_touch_timestamp_seconds", kind: .gauge, labels: [],
        help: "When a finger last landed, in seconds since the Unix epoch; 0 before the first.")

    // Clients and publishing
    static let clients = MetricDefinition(name: "motiond_clients", kind: .gauge, labels: ["transport"],
        help: "Clients connected, by transport: unix (the socket) or websocket.")
    static let connections = MetricDefinition(name: "motiond_client_connections_total", kind: .counter, labels: ["transport"],
        help: "Client connections accepted, by transport.")
    static let clientsDropped = MetricDefinition(name: "motiond_clients_dropped_total", kind: .counter, labels: ["transport"],
        help: "Clients disconnected for not reading what they were sent.")
    static let publishedFrames = MetricDefinition(name: "motiond_published_frames_total", kind: .counter, labels: [],
        help: "Frames (touch frames and spring steps) whose values went to at least one client.")
    static let publishedValues = MetricDefinition(name: "motiond_published_values_total", kind: .counter, labels: [],
        help: "Value lines sent to clients, each client's counted.")
    static let valuesCoalesced = MetricDefinition(name: "motiond_values_coalesced_total", kind: .counter, labels: [],
        help: "Values replaced by a newer value of the same stream while a slow client was behind.")
    static let publishLatency = MetricDefinition(name: "motiond_publish_latency_seconds", kind: .histogram, labels: [],
        help: "From a touch frame's kernel timestamp to its lines written to the clients.")

    // Virtual touchscreens
    static let virtualFramesWritten = MetricDefinition(name: "motiond_virtual_frames_written_total", kind: .counter, labels: ["output"],
        help: "Frames of fingers written to each output's virtual touchscreen, for the apps.")
    static let virtualWriteFailures = MetricDefinition(name: "motiond_virtual_write_failures_total", kind: .counter, labels: ["output"],
        help: "Frames uinput refused to write to each output's virtual touchscreen: touches the apps never saw.")
    static let virtualFingers = MetricDefinition(name: "motiond_virtual_fingers_total", kind: .counter, labels: ["output", "outcome"],
        help: "Fingers a virtual touchscreen did not show the apps to their end, by outcome: dropped (no slot was free) or cancelled (a gesture, a lock or a reload took them).")
    static let virtualLatency = MetricDefinition(name: "motiond_virtual_touchscreen_latency_seconds", kind: .histogram, labels: ["output"],
        help: "motiond's own stage for each panel frame written to an output's virtual touchscreen: from reading the panel's event that completed it to the uinput write's return.")

    // The daemon
    static let reloads = MetricDefinition(name: "motiond_config_reloads_total", kind: .counter, labels: [],
        help: "Configuration reloads taken (SIGHUP or the reload op).")
    static let reloadFailures = MetricDefinition(name: "motiond_config_reload_failures_total", kind: .counter, labels: [],
        help: "Configuration reloads refused; the previous configuration stayed.")
    static let lastReloadSuccessful = MetricDefinition(name: "motiond_config_last_reload_successful", kind: .gauge, labels: [],
        help: "1 if the last configuration load was taken, 0 if it was refused.")
    static let stateWrites = MetricDefinition(name: "motiond_state_writes_total", kind: .counter, labels: [],
        help: "Writes of the state file that kept the scene; absent when no state file is kept.")
    static let stateWriteFailures = MetricDefinition(name: "motiond_state_write_failures_total", kind: .counter, labels: [],
        help: "Writes of the state file that failed (a full disk, say); the file kept the last scene written.")
    static let loopLag = MetricDefinition(name: "motiond_event_loop_lag_seconds", kind: .gauge, labels: [],
        help: "How late the event loop ran its last timer check: how far behind the daemon is.")
    static let tuioDatagrams = MetricDefinition(name: "motiond_tuio_datagrams_total", kind: .counter, labels: ["target"],
        help: "TUIO datagrams sent to each [[tuio]] target.")
    static let tuioErrors = MetricDefinition(name: "motiond_tuio_send_errors_total", kind: .counter, labels: ["target"],
        help: "TUIO datagrams the kernel refused to send to each target.")
    static let buildInfo = MetricDefinition(name: "motiond_build_info", kind: .gauge, labels: ["version"],
        help: "Always 1; the version label says which motiond runs.")

    // The process, as Prometheus's client libraries export it
    static let cpu = MetricDefinition(name: "process_cpu_seconds_total", kind: .counter, labels: [],
        help: "Total user and system CPU time spent in seconds.")
    static let residentMemory = MetricDefinition(name: "process_resident_memory_bytes", kind: .gauge, labels: [],
        help: "Resident memory size in bytes.")
    static let virtualMemory = MetricDefinition(name: "process_virtual_memory_bytes", kind: .gauge, labels: [],
        help: "Virtual memory size in bytes.")
    static let startTime = MetricDefinition(name: "process_start_time_seconds", kind: .gauge, labels: [],
        help: "Start time of the process since unix epoch in seconds.")
    static let openFDs = MetricDefinition(name: "process_open_fds", kind: .gauge, labels: [],
        help: "Number of open file descriptors.")
    static let maxFDs = MetricDefinition(name: "process_max_fds", kind: .gauge, labels: [],
        help: "Maximum number of open file descriptors.")

    /// All of them, in the order docs/operations.md lists them.
    public static let all: [MetricDefinition] = [
        inputFrames, inputFramesCoalesced, touches, inputEventsDropped, contactsFiltered, contactsRepaired, phantomContacts, touchStorms, contactsUnflipped, positionsHeld, devices, devicesSkipped,
        lastInput, lastTouch,
        clients, connections, clientsDropped, publishedFrames, publishedValues, valuesCoalesced, publishLatency,
        virtualFramesWritten, virtualWriteFailures, virtualFingers, virtualLatency,
        reloads, reloadFailures, lastReloadSuccessful, stateWrites, stateWriteFailures, loopLag, tuioDatagrams, tuioErrors, buildInfo,
        cpu, residentMemory, virtualMemory, startTime, openFDs, maxFDs,
    ]

    /// The publish latency's buckets, in seconds: live input is published within a
    /// millisecond or so; the upper buckets catch a daemon that is behind.
    static let latencyBuckets: [Double] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1]

    /// The virtual touchscreens' latency buckets, in seconds: motiond's own stage takes tens
    /// to hundreds of microseconds on a kiosk; the top ones catch a daemon that is behind.
    static let virtualLatencyBuckets: [Double] = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05]

    /// The buckets of the histogram named `name`.
    static func buckets(named name: String) -> [Double] {
        name == virtualLatency.name ? virtualLatencyBuckets : latencyBuckets
    }

    static func definition(named name: String) -> MetricDefinition? { all.first { $0.name == name } }
}
