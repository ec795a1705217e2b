import ArgumentParser
import FoundationEssentials
import Glibc
import MotionConfiguration
import TouchInput
import TouchModel
import MotionWire

/// `motionctl devices`: the touchscreens this machine has, or why there are none.
struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List the touchscreens motiond reads, or (--local) the ones udev finds here.",
        discussion: """
            Touchscreens found but not used (not selected, not openable, or described by their \
            firmware in a way motiond cannot trust) are listed as skipped, with the reason; in \
            JSON as {"node", "skipped": reason}. When motiond does not answer on its socket, \
            this machine is scanned as with --local, and one line on standard error says so. \
            A scan exits with 1 when no touchscreen can be used, saying why.
            """
    )

    @OptionGroup var socket: SocketOption
    @Flag(help: "Scan the devices directly with udev and libevdev, without the daemon.") var local = false
    @Flag(help: "One JSON object per device instead of text.") var json = false
    @Flag(help: "With --local: also list input devices that are not touchscreens, with the reason.") var all = false

    func run() throws {
        if !local {
            switch socket.connectIfAnswering() {
            case .success(let connection): return try listFromDaemon(connection)
            case .failure(let error) where socket.isLocal:
                writeStandardError("motionctl: motiond does not answer at \(socket.path) (\(error)); scanning this machine instead\n")
            case .failure:
                _ = socket.connect()  // says why, and how to start motiond, and exits
            }
        }
        try scan()
    }

    /// What the daemon reads, and what it skipped.
    private func listFromDaemon(_ connection: DaemonConnection) throws {
        try talking {
            let result = try connection.request("devices")
            let devices = result["devices"]?.array ?? []
            if devices.isEmpty && !json { emit("motiond reads no touchscreen now (motionctl devices --local scans this machine)") }
            for device in devices {
                if json { emit(device.json.encoded); continue }
                emit("\(device["node"]?.string ?? "?")  \(OutsideText.quoted(device["name"]?.string ?? ""))  (\(device["kind"]?.string ?? ""), \(device["slots"]?.integer.map { "\($0) slots" } ?? ""), \(device["dropped"]?.integer ?? 0) drops\(device["grabbed"]?.bool == true ? ", grabbed" : ""))")
                if let output = device["output"], let x = output["x"]?.number, let y = output["y"]?.number,
                   let width = output["width"]?.number, let height = output["height"]?.number {
                    emit("  output \(DeviceText.rectangle(Rect(x: x, y: y, width: width, height: height))) on the screen")
                }
                if let path = device["path"]?.string { emit("  plugged in at \(OutsideText.quoted(path)) (udev's ID_PATH)") }
                if let output = device["virtual_touchscreen"]?.string {
                    emit("  the apps get its touches from the virtual touchscreen of \(output)" + (device["grabbed"]?.bool == true ? "" : ", which does not exist: they read it raw (motionctl status says why)"))
                }
                if let selected = device["selected_by"] {
                    let rule = { (rule: JSONInput?) in rule?["key"]?.string.map { "\($0) = \(OutsideText.quoted(rule?["value"]?.string ?? ""))" } }
                    emit("  [[device]] entry: " + (rule(selected["device"]) ?? "any device (no rule of the entry names it, or there are no entries)"))
                    emit("  [[calibration]]: " + (rule(selected["calibration"]).map { "the one selecting it by \($0)" } ?? "none selects it"))
                }
                if let quirk = device["filters"]?["quirk"]?.string { emit("  quirk \(OutsideText.quoted(quirk)) applies (motiond's data on panels that misdescribe themselves)") }
                for line in device["geometry"]?["explanation"]?.array ?? [] { emit("  \(line.string ?? "")") }
                if let filters = device["filters"] { emit("  filters: " + Self.describeFilters(filters)) }
                for note in device["filters"]?["notes"]?.array ?? [] { emit("    \(note.string ?? "")") }
                if let filtered = device["filtered"] {
                    let counts = ContactFilters.Counts(filtered: filtered)
                    emit("  cancelled so far: \(counts.stuck) stuck, \(counts.palms) palms, \(counts.jumps) jumps; \(counts.repaired) re-paired (positions the panel exchanged); \(counts.held) positions held by hysteresis\(counts.lastLifts > 0 ? "; \(counts.lastLifts) protocol A lifts supplied" : "")")
                    emit("  phantoms so far: \(counts.deadZone) in dead zones, \(counts.phantomTaps) phantom taps, \(counts.bursts) in bursts, \(counts.storms) storms (\(counts.stormContacts) contacts), \(counts.ghosts) ghosts, \(counts.flips) flips put back")
                }
                for phantom in device["phantom_taps"]?.array ?? [] {
                    emit("  a phantom taps at (\(compactNumber(phantom["x"]?.number ?? 0)), \(compactNumber(phantom["y"]?.number ?? 0))) every \(compactNumber(phantom["period"]?.number ?? 0)) s")
                }
                if let storm = device["storm"], let began = storm["began"]?.number {
                    let quiet = storm["quiet_until"]?.number.map { "quiet until \(compactNumber($0)) s" } ?? "quiet while the flood goes on"
                    emit("  last touch storm: \(storm["contacts"]?.integer ?? 0) flood contacts within a second, at \(compactNumber(began)) s on the monotonic clock; \(quiet)")
                }
            }
            for skipped in result["skipped"]?.array ?? [] {
                showSkipped(node: skipped["node"]?.string ?? "?", reason: skipped["reason"]?.string ?? "")
            }
            if !json { for device in result["virtual_touchscreens"]?.array ?? [] { emit(Self.describeVirtual(device)) } }
        }
    }

    /// A virtual touchscreen in a line: what it showed the apps, and what it could not.
    static func describeVirtual(_ device: JSONInput) -> String {
        let output = device["output"]?.string ?? "?"
        if let error = device["error"]?.string { return "virtual touchscreen \(output): not made: \(error)" }
        let count = { (key: String) in device[key]?.integer ?? 0 }
        let refused = count("write_failures") == 0 ? "none refused" : "\(count("write_failures")) refused by uinput (the last: \(device["last_write_error"]?.string ?? "?"))"
        return "virtual touchscreen \(output): \(device["node"]?.string ?? "?"), \(count("frames_written")) frames written, \(refused); \(count("fingers_dropped")) fingers dropped (no free slot), \(count("fingers_cancelled")) cancelled"
    }

    /// The touchscreens udev finds here, opened with libevdev.
    private func scan() throws {
        let discovery: DeviceDiscovery
        do { discovery = try DeviceDiscovery() } catch {
            fail("motionctl: \(error)")
        }
        let found = discovery.touchscreens()
        let touchscreens = Set(found.map(\.node))
        let paths = Dictionary(found.map { ($0.node, $0.path) }, uniquingKeysWith: { first, _ in first })
        let nodes = all ? discovery.eventNodes() : touchscreens.sorted()
        var usable = 0
        var problems: [DeviceError] = []
        for node in nodes {
            do {
                let device = try TouchDevice(node: node)
                usable += 1
                show(device.description, node: node, path: paths[node] ?? nil, clock: device.usesMonotonicClock)
            } catch {
                problems.append(error)
                showSkipped(node: node, reason: error.description)
            }
        }
        guard usable == 0 else { return }
        let reason: String
        if problems.contains(where: \.isPermissionDenied) {
            reason = "no touchscreen could be opened: permission denied. Input devices belong to the 'input' group: add the user to it (usermod -aG input USER, then log in again) or run as root"
        } else if !touchscreens.isEmpty {
            reason = "udev lists touchscreens, but none could be used (see above)"
        } else if discovery.eventNodes().isEmpty {
            reason = "no input devices at all: this machine has no touchscreen. To try motiond without one, replay a recording: motiond --replay FILE.evemu"
        } else {
            reason = "no touchscreen: \(discovery.eventNodes().count) input devices, none of which udev marks ID_INPUT_TOUCHSCREEN (motionctl devices --all shows them)"
        }
        writeStandardError("motionctl: \(reason)\n")
        throw ExitCode(ExitStatus.refused)
    }

    /// A device's filters as `devices` reports them, in words.
    static func describeFilters(_ filters: JSONInput) -> String {
        var parts: [String] = []
        if let after = filters["stuck_after"]?.number { parts.append("stuck after \(compactNumber(after)) s") } else { parts.append("no stuck filter") }
        if let units = filters["palm_size"]?.integer {
            parts.append("palms over " + (filters["palm_size_mm"]?.number.map { "\(compactNumber($0)) mm (\(units) units)" } ?? "\(units) units"))
        } else { parts.append("no palm size") }
        if let jump = filters["jump_mm"]?.number {
            parts.append("jumps over \(compactNumber(jump)) mm")
        } else if let jump = filters["jump_px"]?.number {
            parts.append("jumps over \(compactNumber(jump)) px")
        } else { parts.append("no jump filter") }
        if let x = filters["hysteresis"]?["x"]?.integer, let y = filters["hysteresis"]?["y"]?.integer {
            parts.append("hysteresis \(x) × \(y) units")
        } else { parts.append("no hysteresis") }
        parts.append(filters["phantom_taps"]?.bool == false ? "no phantom-tap filter" : "phantom taps")
        parts.append(filters["wake_bursts"]?.bool == false ? "no burst filter" : "bursts held back")
        if let contacts = filters["storm_contacts"]?.integer {
            parts.append("storms over \(contacts) flood contacts/s (quiet until \(compactNumber(filters["storm_quiet"]?.number ?? 0)) s without one)")
        } else { parts.append("no storm filter") }
        if filters["infrared"]?.bool == true { parts.append("infrared ghosts") }
        if let zones = filters["dead_zones"]?.array, !zones.isEmpty { parts.append("\(zones.count) dead zone\(zones.count == 1 ? "" : "s")") }
        return parts.joined(separator: ", ")
    }

    /// A device found but not used, the same way whether the daemon or a local scan says so.
    private func showSkipped(node: String, reason: String) {
        if json {
            emit(JSONValue.object([("node", .string(node)), ("skipped", .string(reason))]).encoded)
        } else {
            emit("\(node)  skipped: \(reason)")
        }
    }

    private func show(_ description: DeviceDescription, node: String, path: String?, clock: Bool) {
        if json {
            guard case .object(var members) = JSONValue.device(description, node: node) else { return }
            members.append(("path", path.map { .string($0) } ?? .null))
            emit(JSONValue.object(members).encoded)
            return
        }
        emit("\(node)  \(OutsideText.quoted(description.name))")
        if let path { emit("  plugged in at \(OutsideText.quoted(path)) (udev's ID_PATH: path = \(TOMLText.string(path)) selects it in motiond.toml)") }
        emit("  bus \(DeviceText.bus(description.bus)), vendor \(DeviceText.hex(description.vendor)), product \(DeviceText.hex(description.product)), version \(DeviceText.hex(description.version))")
        switch description.kind {
        case .multitouchScreen where description.isProtocolA:
            emit("  multitouch touchscreen, protocol A (no slots): read through libmtdev, up to \(ProtocolAConverter.maximumContacts) contacts")
        case .multitouchScreen: emit("  multitouch touchscreen, \(description.slotCount) slots")
        case .singleTouchScreen: emit("  single-touch touchscreen")
        case .refused(let reason): emit("  not used: \(reason)")
        }
        for code in description.axes.keys.sorted() {
            let axis = description.axes[code]!
            emit("  \(AbsoluteAxis.name(code).padded(toLength: 20)) \(axis.minimum) … \(axis.maximum)  fuzz \(axis.fuzz)  resolution \(axis.resolution)\(axis.resolution > 0 ? "/mm" : "")")
        }
        emit("  timestamps: \(clock ? "monotonic clock" : "wall clock (the kernel refused EVIOCSCLOCKID)")")
        if description.positionAxes != nil {
            // The defaults, with the quirk that applies to the panel, if any.
            let settings = Configuration().match(DeviceIdentity(number: 0, node: node, path: path, description: description))?.settings.filters ?? ContactFilterSettings()
            let filters = ResolvedContactFilters(settings, device: description)
            if let quirk = filters.quirk { emit("  quirk \(OutsideText.quoted(quirk)) applies (motiond's data on panels that misdescribe themselves)") }
            for line in filters.geometry.explanation { emit("  \(line)") }
            if let json = try? JSONInput(parsing: JSONValue.filters(filters).encoded[...]) {
                emit("  filters by default: " + Self.describeFilters(json))
            }
            for note in filters.notes { emit("    \(note)") }
        }
    }
}

/// Prints a message to standard error and exits with 1.
func fail(_ message: String) -> Never {
    writeStandardError(message + "\n")
    Glibc.exit(ExitStatus.refused)
}
