import MotionConfiguration
import MotionCore
import TouchInput
import MotionWire

/// The touchscreens the daemon reads and those it found but skipped, with why: what
/// `devices` and `stats` report, so that a kiosk's operator sees without reading the log.
struct DeviceRegistry {
    struct Device {
        var identity: DeviceIdentity
        var description: DeviceDescription
        /// Events the kernel dropped so far (`SYN_DROPPED`).
        var dropped = 0
        /// Where its touches land, how they are filtered, whether it is grabbed.
        var setup: DeviceSetup
        /// How often each filter acted.
        var filtered = ContactFilters.Counts()
        /// The phantoms learned to tap the panel: where (screen pixels) and how often.
        var phantomTaps: [(place: Point, period: Double)] = []
        /// The latest storm: when it began, when its quiet ended (nil while the flood goes
        /// on), its flood contacts in a second.
        var storm: (began: Double, until: Double?, contacts: Int)?

        var node: String { identity.node }
        var totals: Totals { Totals(dropped: dropped, filtered: filtered) }
    }

    /// What a node's devices counted, the kernel's drops and the filters' actions: summed
    /// over the devices read from one node, one after another.
    struct Totals: Equatable {
        var dropped = 0
        var filtered = ContactFilters.Counts()

        static func += (sum: inout Totals, more: Totals) {
            sum.dropped += more.dropped
            sum.filtered = sum.filtered + more.filtered
        }
    }

    private(set) var devices: [Device] = []
    private(set) var skipped: [(node: String, reason: TouchInputHub.SkipReason)] = []
    /// What the devices that went had counted, by node: a device's own counts begin again
    /// when it is plugged in again, and the metrics' counters must not.
    private var totalsOfGone: [String: Totals] = [:]

    /// A touchscreen is read from now on.
    mutating func add(_ device: DeviceIdentity, description: DeviceDescription, setup: DeviceSetup) {
        remove(node: device.node)
        skipped.removeAll { $0.node == device.node }
        devices.append(Device(identity: device, description: description, setup: setup))
    }

    /// A reload changed where a device's touches land or how they are filtered.
    mutating func reconfigured(node: String, setup: DeviceSetup) {
        if let index = devices.firstIndex(where: { $0.node == node }) { devices[index].setup = setup }
    }

    /// A device's filters acted; `counts` so far.
    mutating func filtered(node: String, counts: ContactFilters.Counts) {
        if let index = devices.firstIndex(where: { $0.node == node }) { devices[index].filtered = counts }
    }

    /// A device's filter acted as `notice` says: a phantom learned and a storm are kept for
    /// `devices` and health (the log has every notice).
    mutating func noticed(node: String, _ notice: ContactFilters.Notice) {
        guard let index = devices.firstIndex(where: { $0.node == node }) else { return }
        switch notice.kind {
        case .phantomTap(let period, learned: true):
            if devices[index].phantomTaps.count == Self.phantomsShown { devices[index].phantomTaps.removeFirst() }
            devices[index].phantomTaps.append((notice.position, period))
        case .storm(let contacts, _):
            devices[index].storm = (notice.time, nil, contacts)
        case .calm:
            devices[index].storm?.until = notice.time
        default:
            break
        }
    }

    /// The most learned phantoms `devices` lists for a device.
    static let phantomsShown = 8

    /// The devices quiet after a storm: node, how long since it began at `time`, its flood
    /// contacts in a second.
    func quiet(at time: Double) -> [(node: String, since: Double, contacts: Int)] {
        devices.compactMap { device in
            guard let storm = device.storm, storm.until == nil else { return nil }
            return (device.node, Swift.max(0, time - storm.began), storm.contacts)
        }
    }

    /// The filters' counts of each device, by node, for `stats`.
    var filteredByDevice: JSONValue {
        .object(devices.map { ($0.node, .filtered($0.filtered)) })
    }

    /// Each device's sizes, believed or not, for `stats`.
    var geometryByDevice: JSONValue {
        .object(devices.map { device in
            (device.node, .object([("size", .string(device.setup.filters.geometry.positions.name)),
                                   ("touch_size", .string(device.setup.filters.geometry.touchSize.name))]))
        })
    }

    /// The device read from `node`, if any.
    func device(_ node: String) -> Device? { devices.first { $0.node == node } }

    /// A touchscreen went; what it counted stays in ``totalsByNode``.
    mutating func remove(node: String) {
        guard let index = devices.firstIndex(where: { $0.node == node }) else { return }
        let device = devices.remove(at: index)
        totalsOfGone[node, default: Totals()] += device.totals
    }

    /// What each node's devices counted since the daemon started, those that went included:
    /// totals that never go down, for the metrics' counters.
    var totalsByNode: [String: Totals] {
        var totals = totalsOfGone
        for device in devices { totals[device.node, default: Totals()] += device.totals }
        return totals
    }

    /// A touchscreen is not read, for `reason`, until it is used or goes.
    mutating func skip(node: String, reason: TouchInputHub.SkipReason) {
        skipped.removeAll { $0.node == node }
        skipped.append((node, reason))
    }

    /// A skipped touchscreen went.
    mutating func removeSkipped(node: String) {
        skipped.removeAll { $0.node == node }
    }

    /// The kernel dropped a device's events; `total` so far.
    mutating func dropped(node: String, total: Int) {
        if let index = devices.firstIndex(where: { $0.node == node }) { devices[index].dropped = total }
    }

    /// The skipped touchscreens by kind of reason, for metrics: every kind, most of them 0.
    var skippedByKind: [(kind: TouchInputHub.SkipReason.Kind, count: Int)] {
        TouchInputHub.SkipReason.Kind.allCases.map { kind in (kind, skipped.count { $0.reason.kind == kind }) }
    }

    /// Events the kernel dropped since the daemon started, over every device, those that went
    /// included (as the metric counts them): a reader asking after an unplug hears of them.
    var droppedEvents: Int { totalsByNode.values.reduce(0) { $0 + $1.dropped } }

    /// The `devices` reply; `configuration` says which of its rules picked each device (after
    /// a reload, the rules that would pick it now).
    func json(configuration: Configuration) -> JSONValue {
        .object([
            ("devices", .array(devices.map { device in
                var json = JSONValue.device(device.description, node: device.node)
                if case .object(var members) = json {
                    members.append(("dropped", .integer(Int64(device.dropped))))
                    let setup = device.setup
                    members.append(("grabbed", .bool(setup.grabbed)))
                    members.append(("output", .rect(setup.output)))
                    members.append(("geometry", .geometry(setup.filters.geometry)))
                    members.append(("filters", .filters(setup.filters)))
                    members.append(("mapping", .object([
                        ("rotation", .integer(Int64(setup.mapping.rotation.rawValue))),
                        ("flip_horizontal", .bool(setup.mapping.flipHorizontal)), ("flip_vertical", .bool(setup.mapping.flipVertical)),
                        ("calibration", .array(setup.mapping.calibration.map { .number($0) })),
                    ])))
                    members.append(("filtered", .filtered(device.filtered)))
                    members.append(("phantom_taps", .array(device.phantomTaps.map { phantom in
                        .object([("x", .number(phantom.place.x.rounded())), ("y", .number(phantom.place.y.rounded())),
                                 ("period", .number((phantom.period * 1000).rounded() / 1000))])
                    })))
                    members.append(("storm", device.storm.map { storm in
                        .object([("began", .number(storm.began)), ("quiet_until", storm.until.map { .number($0) } ?? .null), ("contacts", .integer(Int64(storm.contacts)))])
                    } ?? .null))
                    let match = configuration.match(device.identity)
                    let rule = { (rule: DeviceSelection.Rule?) in rule.map { JSONValue.object([("key", .string($0.key)), ("value", .string($0.value))]) } ?? .null }
                    members.append(("path", device.identity.path.map { .string($0) } ?? .null))
                    members.append(("selected_by", .object([("device", rule(match?.entryRule)), ("calibration", rule(match?.calibrationRule))])))
                    // The output whose virtual touchscreen shows the apps this device's touches.
                    members.append(("virtual_touchscreen", match?.settings.virtualTouchscreen.map { .string($0) } ?? .null))
                    json = .object(members)
                }
                return json
            })),
            ("skipped", .array(skipped.map { .object([("node", .string($0.node)), ("reason", .string($0.reason.description))]) })),
        ])
    }
}
