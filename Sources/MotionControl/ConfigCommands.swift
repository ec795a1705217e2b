import ArgumentParser
import FoundationEssentials
import MotionConfiguration
import MotionCore
import TouchInput
import MotionWire

/// `motionctl config`: configuration files.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Check motiond configuration files, and print how to map their virtual touchscreens.",
        subcommands: [ConfigCheckCommand.self, ConfigMappingCommand.self]
    )
}

/// `motionctl config check FILE`.
struct ConfigCheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate a configuration file and print what it defines, or where it is wrong.",
        discussion: """
            The drop-ins in conf.d/*.toml beside the file are read after it, in name order, \
            as motiond reads them: tables merged key by key, [[element]], [[device]] and \
            [[tuio]] appended. Exits with 1 and FILE:LINE: reason when a file is refused.
            """
    )

    @Argument(help: "The configuration file.") var file: String

    func run() throws {
        let configuration = try loadConfiguration(file)
        emit("\(file): OK")
        for dropIn in configuration.files.dropFirst() { emit("  with drop-in \(dropIn)") }
        let daemon = configuration.daemon
        emit("daemon: socket \(daemon.socket), \(compactNumber(daemon.frameRate)) frames/s"
            + (daemon.socketGroup.map { ", socket group \($0)" } ?? "")
            + (daemon.controlGroups.isEmpty ? "" : ", control groups \(daemon.controlGroups.joined(separator: ", "))"))
        if let web = configuration.websocket {
            let origins = web.allowedOrigins.map { $0.joined(separator: ", ") } ?? "the listener's own (\(web.origins(boundPort: web.listen.port).joined(separator: ", ")))"
            emit("websocket: http://\(web.listen)/ (live page, /motiond.js) and ws://\(web.listen)/ws"
                + (web.allowRemote ? ", reachable from other machines" : ", this machine only"))
            emit("  origins allowed: \(origins)")
            emit("  hosts answered: \((["its address", "localhost"] + web.allowedHosts).joined(separator: ", "))")
            emit("  control: " + (web.controlTokenFile.map { "with the token in \($0)" } ?? "none (no control_token_file): WebSocket clients are read-only"))
        } else {
            emit("websocket: none")
        }
        if configuration.tuio.isEmpty { emit("tuio: none") }
        for tuio in configuration.tuio { emit("tuio: " + describe(tuio)) }
        emit("screen: \(compactNumber(configuration.screen.width)) × \(compactNumber(configuration.screen.height)) px, idle after \(compactNumber(configuration.idleAfter)) s without a touch")
        if configuration.prediction > 0 {
            emit("touch prediction: elements moved by fingers are also published \(compactNumber(configuration.prediction * 1000)) ms ahead (ID.predicted_position…)")
        }
        if configuration.devices.isEmpty {
            emit("devices: every touchscreen, mapped to the whole screen, output \(DeviceText.rectangle(configuration.outputRect(for: nil)))")
        } else {
            emit("devices:")
            for device in configuration.devices { emit("  " + describe(device, output: configuration.outputRect(for: device))) }
        }
        let changed = gestureChanges(configuration.gestures)
        if configuration.virtualTouchscreens.isEmpty { emit("virtual touchscreens: none (the apps read the panels themselves)") }
        for virtual in configuration.virtualTouchscreens {
            let area = DeviceText.rectangle(virtual.geometry(on: configuration.screen).area)
            let panels = configuration.devices.filter { $0.virtualTouchscreen == virtual.output }.count
            emit("virtual touchscreen: \(VirtualTouchscreen.namePrefix) \(virtual.output), area \(area)"
                + (virtual.sizeMillimetres.map { ", \(compactNumber($0.width)) × \(compactNumber($0.height)) mm" } ?? ", size unknown")
                + (virtual.transform == .normal ? "" : ", output turned \(virtual.transform.rawValue) (the device's axes are its unturned mode's)")
                + (virtual.cancel == .withdraw ? ", touches taken away withdrawn" : ", touches taken away cancelled (for a compositor that passes cancels on)")
                + "; carries the panels of \(panels) [[device]] entr\(panels == 1 ? "y" : "ies"), grabbed once it exists")
        }
        if let line = Self.mappingAdvice(virtualTouchscreens: configuration.virtualTouchscreens.count, file: file) { emit(line) }
        emit("sizes: a panel's own is believed where plausible for a touchscreen, else the filters measure in pixels (motionctl devices says which); \(configuration.quirks.count) quirk\(configuration.quirks.count == 1 ? "" : "s") shipped with motiond for panels that misdescribe themselves")
        emit("gestures: " + (changed.isEmpty ? "default thresholds" : changed.joined(separator: ", ")))
        emit("elements:")
        for element in configuration.elements {
            emit("  \(element.id): centre (\(compactNumber(element.center.x)), \(compactNumber(element.center.y))), size \(compactNumber(element.size.width)) × \(compactNumber(element.size.height)), z \(element.z)"
                + (element.rotation != 0 ? ", rotation \(element.rotation) rad" : "") + (element.scale != 1 ? ", scale \(element.scale)" : ""))
            for interaction in element.interactions { emit("    " + describe(interaction)) }
            if let after = element.resetAfter { emit("    springs home after \(compactNumber(after)) s idle") }
            if !element.claimsTouches { emit("    its touches also reach the apps on a virtual touchscreen (claim_touches = false)") }
        }
        if configuration.elements.isEmpty { emit("  none: touches are read, but nothing moves") }
    }

    /// What to tell about mapping the virtual touchscreens onto their outputs. motionctl
    /// cannot see the compositor's configuration: with two or more devices the compositor must
    /// be told which is which, or it spreads each over every output (cage) or drops its touch
    /// (weston), so that is a warning; with one, only a multi-output kiosk needs it.
    static func mappingAdvice(virtualTouchscreens count: Int, file: String) -> String? {
        switch count {
        case 0: return nil
        case 1: return "mapping: with more than one output, tell the compositor which one the virtual touchscreen is on: motionctl config mapping \(file) prints how"
        default: return "warning: \(count) virtual touchscreens: the compositor must be told each one's output, or it spreads their touches over every output (cage) or drops them (weston); motionctl config mapping \(file) prints the udev rules and sway lines"
        }
    }

    private func describe(_ tuio: TUIOSettings) -> String {
        var what: [String] = []
        if tuio.contacts { what.append("contacts as \(tuio.version == .v1_1 ? "/tuio/2Dcur" : "/tuio2/ptr")") }
        switch tuio.elements {
        case .all: what.append("every element as \(tuio.version == .v1_1 ? "/tuio/2Dobj" : "/tuio2/tok")")
        case .matching(let patterns) where !patterns.isEmpty:
            what.append("elements \(patterns.joined(separator: ", ")) as \(tuio.version == .v1_1 ? "/tuio/2Dobj" : "/tuio2/tok")")
        case .matching: break
        }
        if tuio.predicted && !tuio.elements.isEmpty { what.append("elements where touch prediction says they will be") }
        return "TUIO \(tuio.version.rawValue) over UDP to \(tuio.target), source \"\(tuio.source)\": " + what.joined(separator: "; ")
            + (tuio.target.isLoopback ? "" : " (another machine: motiond.service allows only loopback unless IPAddressAllow= is widened; see docs/kiosk.md)")
    }

    private func describe(_ device: DeviceSettings, output: Rect) -> String {
        let rules = device.selection.rules.map { rule -> String in
            switch rule {
            case .name(let glob): return "name \(OutsideText.quoted(glob))"
            case let .ids(vendor, product): return "ids \(DeviceText.hex(vendor)):\(DeviceText.hex(product))"
            case .node(let node): return node
            case .path(let path): return "plugged in at \(OutsideText.quoted(path))"
            }
        }
        var parts = [rules.isEmpty ? "every touchscreen" : rules.joined(separator: " or ")]
        parts.append("output \(DeviceText.rectangle(output))" + (device.output == nil ? " (the whole screen)" : ""))
        if device.grab { parts.append("grabbed: nothing else receives its events") }
        if device.rotation != .none { parts.append("rotated \(device.rotation.rawValue)°") }
        if device.flipHorizontal { parts.append("flipped horizontally") }
        if device.flipVertical { parts.append("flipped vertically") }
        if let matrix = device.calibration { parts.append("calibration " + matrix.map(compactNumber).joined(separator: " ")) }
        let panel = device.filters.panel
        if let resolution = panel.resolution { parts.append("believed at \(compactNumber(resolution.x)) × \(compactNumber(resolution.y)) units/mm") }
        if let size = panel.size { parts.append("believed \(compactNumber(size.width)) × \(compactNumber(size.height)) mm") }
        if let touch = panel.touchResolution { parts.append("contact sizes at \(compactNumber(touch)) units/mm") }
        return parts.joined(separator: ", ")
    }

    private func describe(_ interaction: InteractionSettings) -> String {
        func spring(_ s: SpringConfiguration) -> String {
            formatted("spring tension %.1f, friction %.1f", s.tension, s.friction) + (s.mass != 1 ? " mass \(compactNumber(s.mass))" : "")
        }
        func destination(_ d: DestinationSettings) -> String {
            switch d {
            case .point(let p): return "(\(compactNumber(p.x)), \(compactNumber(p.y)))"
            case .element(let id): return "\(id)'s position"
            }
        }
        switch interaction {
        case let .draggable(bounds, maxLength, s):
            return "draggable" + (bounds.map { ", kept in \(compactNumber($0.origin.x)), \(compactNumber($0.origin.y)), \(compactNumber($0.size.width)) × \(compactNumber($0.size.height)) (rubber band \(compactNumber(maxLength)) px, \(spring(s)))" } ?? "")
        case let .tossable(d, snaps, s):
            return "tossable to " + (d.map(destination) ?? "the nearest of \(snaps.keys.sorted().joined(separator: ", "))") + ", \(spring(s))"
        case let .attach(d, s): return "attach to \(destination(d)), \(spring(s))"
        case .rotatable: return "rotatable"
        case let .scalable(minimum, maximum, s):
            return "scalable" + (minimum.map { " from \(compactNumber($0))" } ?? "") + (maximum.map { " to \(compactNumber($0))" } ?? "") + (minimum ?? maximum != nil ? ", \(spring(s))" : "")
        case .directlyManipulable: return "directly manipulable (drag, rotate, scale)"
        case .setPositionOnTap(let target): return "set position on tap (moves its \(target == .position ? "position" : target.rawValue + " destination"))"
        case let .changeDirection(velocity, axis): return "change direction past \(compactNumber(velocity)) px/s, \(axis.rawValue)"
        }
    }

    private func gestureChanges(_ g: GestureThresholds) -> [String] {
        let d = GestureThresholds()
        var changes: [String] = []
        func note(_ name: String, _ value: Double, _ base: Double) { if value != base { changes.append("\(name) \(compactNumber(value))") } }
        func note(_ name: String, _ value: PanelDistance, _ base: PanelDistance) {
            note("\(name)_mm", value.millimetres, base.millimetres)
            note("\(name)_px", value.pixels, base.pixels)
        }
        note("drag_slop", g.dragSlop, d.dragSlop)
        note("tap_slop", g.tapSlop, d.tapSlop)
        note("tap_max_duration", g.tapMaximumDuration, d.tapMaximumDuration)
        note("multiple_tap_interval", g.multipleTapInterval, d.multipleTapInterval)
        note("pinch_slop_mm", g.pinchSlop.millimetres, d.pinchSlop.millimetres)
        note("minimum_span_mm", g.minimumSpan.millimetres, d.minimumSpan.millimetres)
        note("rotation_slop_degrees", g.rotationSlop * 180 / .pi, d.rotationSlop * 180 / .pi)
        note("velocity_window", g.velocityWindow, d.velocityWindow)
        return changes
    }
}

/// Loads a configuration, or exits with 1 and FILE:LINE: reason.
func loadConfiguration(_ file: String) throws -> Configuration {
    do {
        return try Configuration.load(file: file)
    } catch {
        fail(error.description)
    }
}


/// Reads a recording for replay and maps and filters its device as `configuration` does on
/// the daemon (its `[[device]]` entry: output, rotation, calibration, contact filters), or
/// exits saying why.
/// `name` is the configuration's file, for the message when no entry selects the device.
func loadReplay(_ recording: String, device: RecordingDeviceOption, mappedBy configuration: Configuration, named name: String?) throws -> RecordingReplay {
    let parsed = try loadRecording(recording, device: device)
    guard let device = parsed.device else { fail("motionctl: \(recording): \(ReplayError.noDeviceHeader)") }
    guard let match = configuration.match(.recording(recording, description: device)) else {
        fail("motionctl: no [[device]] entry in \(name ?? "the configuration") selects the recorded device \(OutsideText.quoted(device.name)) (\(DeviceText.hex(device.vendor)):\(DeviceText.hex(device.product)))")
    }
    do {
        return try RecordingReplay(parsed, mapping: match.mapping, filters: match.filters)
    } catch {
        fail("motionctl: \(recording): \(error)")
    }
}

/// `motionctl simulate`: the whole engine offline on a recording.
struct SimulateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Run the whole engine on a recording and print every published update.",
        discussion: """
            The recorded device is mapped as the configuration says, contacts land on \
            elements by hit testing, recognizers and interactions run, and springs tick at \
            the configured frame rate until everything is at rest. Same input, same output, \
            byte for byte. Without --config, the built-in default (one full-screen element, \
            directly manipulable) is used.

            Attract mode runs too: screen.idle turns true [screen] idle_after seconds after \
            the last touch, and elements with reset_after spring home. With --until T the \
            simulation goes on to T seconds from the recording's start (frames after T are \
            left out) whether anything moves or not, so an idle reset after the recording \
            shows.
            """
    )

    @Option(help: "The configuration file.") var config: String?
    @Argument(help: "A recording: evemu, or libinput record YAML.") var recording: String
    @OptionGroup var device: RecordingDeviceOption
    @Flag(help: "One JSON object per line: {\"t\", \"stream\", \"value\"}.") var json = false
    @Flag(help: ArgumentHelp("Print the gestures' state events too (began, ended, cancelled, recognized), after each frame's values as a client hears them; with --json as {\"t\", \"stream\", \"state\"}.")) var events = false
    @Option(help: ArgumentHelp("Run until T seconds from the recording's start, past its end.", valueName: "T")) var until: Double?

    func validate() throws {
        if let until, !(until >= 0 && until <= 86_400 * 365) {
            throw ValidationError("--until is seconds from the recording's start, from 0 to a year; not \(until)")
        }
    }

    func run() throws {
        let configuration = try config.map(loadConfiguration) ?? .builtInDefault
        let replay = try loadReplay(recording, device: device, mappedBy: configuration, named: config)
        let clock = ManualFrameClock(now: 0)
        let engine = configuration.makeEngine(clock: clock)
        var frames = replay.frames()
        if let until { frames.removeAll { $0.time > until } }
        let outcome = Simulation(frameRate: configuration.daemon.frameRate).run(frames, through: engine, clock: clock, until: until)
        for report in outcome.reports {
            for update in report.values {
                if json {
                    emit(JSONValue.update(update).encoded)
                } else {
                    emit(formatted("%10.4f  ", update.time) + update.stream.padded(toLength: 24) + "  " + text(update.value))
                }
            }
            guard events else { continue }
            for event in report.events {
                guard let (time, stream, state) = Self.heard(event) else { continue }
                if json {
                    emit(JSONValue.object([("t", .number(time)), ("stream", .string(stream)), ("state", .string(state))]).encoded)
                } else {
                    emit(formatted("%10.4f  ", time) + stream.padded(toLength: 24) + "  " + state)
                }
            }
        }
        if !outcome.settled && until == nil {
            writeStandardError("motionctl: still moving \(Int(Simulation().settleLimit)) s after the recording ended\n")
            throw ExitCode(ExitStatus.refused)
        }
    }

    /// The time and state of an event a subscriber hears as a `state` line: a gesture's
    /// `changed` is carried by the values instead, and `possible` or `failed` by nothing.
    static func heard(_ event: FrameEvent) -> (time: Double, stream: String, state: String)? {
        let gesture: RecognizedGesture, stream: String
        switch event {
        case .gesture(_, let name, _, let recognized): (stream, gesture) = (name, recognized)
        case .screenGesture(_, let name, let screen): (stream, gesture) = (name, screen.gesture)
        }
        guard [.began, .ended, .cancelled, .recognized].contains(gesture.state) else { return nil }
        return (gesture.time, stream, gesture.state.rawValue)
    }

    private func text(_ value: PublishedValue) -> String {
        switch value {
        case .point(let p): return formatted("(%.3f, %.3f)", p.x, p.y)
        case .size(let s): return formatted("%.3f × %.3f", s.width, s.height)
        case .number(let n): return formatted("%.6f", n)
        case .text(let t): return t
        case .bool(let b): return b ? "true" : "false"
        case .spring(let s): return formatted("tension %.1f, friction %.1f, mass %g", s.tension, s.friction, s.mass)
        case .contacts(let fingers): return "\(fingers.count) fingers"
        }
    }
}
