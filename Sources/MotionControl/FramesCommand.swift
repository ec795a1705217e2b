import ArgumentParser
import FoundationEssentials
import Glibc
import MotionConfiguration
import MotionCore
import TouchInput
import MotionWire

/// `motionctl frames`: the touch frames motiond sees, live from the touchscreens or from a
/// recording. The tool to reach for when a panel reports something odd.
struct FramesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "frames",
        abstract: "Print touch frames, live from the touchscreens or replayed from an evemu recording.",
        discussion: """
            Live, devices are found through udev and read with libevdev; devices plugged in \
            or out are reported as they come and go. From a recording, frames are computed as \
            fast as possible (or with the recording's timing, --realtime), with times from 0. \
            Frames are shown after the contact filters (stuck contacts, palms, jumps, \
            hysteresis; a contact they cancel shows as cancelled), with their default settings \
            or, with --config, the settings and mapping of the device's [[device]] entry; \
            --raw shows what the device sent, before them.
            """
    )

    @Argument(help: "A recording (evemu, or libinput record YAML) to replay instead of reading the touchscreens.") var recording: String?
    @OptionGroup var device: RecordingDeviceOption
    @Flag(help: "One JSON object per line.") var json = false
    @Option(help: "Stop after this many frames.") var count: Int?
    @Option(help: "Live: give up after this many seconds (exit code 1).") var timeout: Double?
    @Flag(help: "Replay with the recording's timing.") var realtime = false
    @Flag(help: "What the device sent, before the contact filters.") var raw = false
    @Option(help: "A recording: map and filter its device as this configuration's [[device]] entry does (default: device units, default filters).")
    var config: String?
    @Option(help: ArgumentHelp("Live: read only devices whose name matches this glob (repeatable).", valueName: "glob"))
    var name: [String] = []
    @Option(help: ArgumentHelp("Live: read only devices with these ids, like 04f3:010c (repeatable).", valueName: "vendor:product"))
    var ids: [String] = []
    @Option(help: ArgumentHelp("Live: read only this device node (repeatable).", valueName: "path"))
    var node: [String] = []

    /// The devices chosen by --name, --ids and --node; none chosen means all.
    var selection: DeviceSelection {
        DeviceSelection(name.map { .name($0) } + ids.compactMap(DeviceSelection.parseIDs) + node.map { .node($0) })
    }

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        if let timeout, !(timeout > 0) { throw ValidationError("--timeout must be a positive number of seconds") }
        if recording == nil && (realtime || device.index != nil || config != nil) { throw ValidationError("--realtime, --device and --config go with a recording") }
        if recording != nil && !(name.isEmpty && ids.isEmpty && node.isEmpty) {
            throw ValidationError("--name, --ids and --node choose live devices; a recording is one device already")
        }
        for text in ids where DeviceSelection.parseIDs(text) == nil {
            throw ValidationError("--ids takes VENDOR:PRODUCT in hexadecimal, like 04f3:010c; '\(text)' is not")
        }
    }

    func run() throws {
        if let recording { try replay(recording) } else { try live() }
    }

    private func replay(_ path: String) throws {
        var replay = try config.map { try loadReplay(path, device: device, mappedBy: loadConfiguration($0), named: $0) } ?? loadReplay(path, device: device)
        if raw { replay = try RecordingReplay(replay.recording, mapping: replay.mapping, filters: .off) }
        let frames = replay.frames()
        let start = monotonicNow()
        for frame in frames.prefix(count ?? Int.max) {
            if realtime {
                let wait = start + frame.time - monotonicNow()
                if wait > 0 { sleep(seconds: wait) }
            }
            show(frame, device: path)
        }
    }

    private func live() throws {
        let hub: TouchInputHub
        do {
            hub = try TouchInputHub(selection: selection, filters: raw ? ContactFilterSettings.off : ContactFilterSettings())
        } catch { fail("motionctl: \(error)") }
        var frames = 0
        var done = false
        let deadline = timeout.map { monotonicNow() + $0 }
        let handle: (TouchInputEvent) -> Void = { event in
            switch event {
            case let .added(device, _, _):
                self.showDevice("added", node: device.node, name: device.name)
            case .removed(let device, _):
                self.showDevice("removed", node: device.node, name: nil)
            case let .skipped(node, reason):
                self.showDevice("skipped", node: node, name: nil, reason: reason.description)
            case .skippedRemoved, .reconfigured, .filterCounts:
                break  // Nothing a reader of frames needs.
            case let .filtered(device, notice):
                let node = device.node
                if self.json {
                    var members: [(String, JSONValue)] = [
                        ("event", "filtered"), ("device", .string(node)), ("filter", .string(notice.kind.filter)),
                        ("id", .integer(Int64(notice.trackingID))), ("t", .number(notice.time)), ("x", .number(notice.position.x)), ("y", .number(notice.position.y)),
                        ("from_landing", .bool(notice.kind == .palm(fromLanding: true) || notice.kind == .markedPalm(fromLanding: true))),
                    ]
                    if case .repaired(let other) = notice.kind { members.append(("in_slot_of", .integer(Int64(other)))) }
                    emit(JSONValue.object(members).encoded)
                } else {
                    emit("\(node): \(notice.text)")
                }
            case let .eventsDropped(device, total):
                let node = device.node
                if self.json {
                    emit(JSONValue.object([("event", "dropped"), ("device", .string(node)), ("total", .integer(Int64(total)))]).encoded)
                } else {
                    emit("events dropped by the kernel on \(node) (\(total) so far); resynced")
                }
            case let .frame(frame, device, _):
                guard !done else { return }
                self.show(frame, device: device.node)
                frames += 1
                if let count = self.count, frames >= count { done = true }
            }
        }
        do { try hub.start().forEach(handle) } catch { fail("motionctl: \(error)") }
        while !done {
            var wait: Int32 = -1
            if let deadline {
                let remaining = deadline - monotonicNow()
                if remaining <= 0 {
                    fail("motionctl: timed out after \(timeout!) s with \(frames) frame\(frames == 1 ? "" : "s")")
                }
                wait = Int32((remaining * 1000).rounded(.up))
            }
            hub.poll(timeout: wait).forEach(handle)
        }
    }

    private func show(_ frame: TouchFrame, device: String) {
        if json {
            emit(JSONValue.frame(frame, device: device).encoded)
            return
        }
        let contacts = frame.contacts.map { contact in
            "[\(contact.slot)] #\(contact.trackingID) \(contact.phase.rawValue) " + formatted("(%.1f, %.1f)", contact.position.x, contact.position.y)
        }
        emit(formatted("%12.6f  ", frame.time) + contacts.joined(separator: "  "))
    }

    private func showDevice(_ action: String, node: String, name: String?, reason: String? = nil) {
        if json {
            var members: [(String, JSONValue)] = [("event", "device"), ("action", .string(action)), ("node", .string(node))]
            if let name { members.append(("name", .string(name))) }
            if let reason { members.append(("reason", .string(reason))) }
            emit(JSONValue.object(members).encoded)
        } else {
            emit("device \(action): \(node)\(name.map { " (\(OutsideText.quoted($0)))" } ?? "")\(reason.map { ": \($0)" } ?? "")")
        }
    }
}

/// Which device of a recording to use: what every command taking a recording accepts.
struct RecordingDeviceOption: ParsableArguments {
    @Option(name: .customLong("device"), help: ArgumentHelp(
        "Of a libinput record file holding several devices, the one to use, from 0 (default: the first touchscreen).", valueName: "n"))
    var index: Int?

    func validate() throws {
        if let index, index < 0 { throw ValidationError("--device counts from 0") }
    }
}

/// Reads and parses a recording, evemu or libinput record YAML, or exits with a message
/// naming the file, line and problem (an invalid device description too, unless
/// `validatingDevice` is false).
func loadRecording(_ path: String, device: RecordingDeviceOption? = nil, validatingDevice: Bool = true) throws -> EvemuRecording {
    let text: String
    do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
        throw ValidationError("cannot read \(path): \(reason(error))")
    }
    do {
        return try EvemuRecording(reading: text, device: device?.index, validatingDevice: validatingDevice)
    } catch {
        fail("motionctl: \(path):\(error.line): \(error.message)")
    }
}

/// Reads a recording of a touchscreen for replay, or exits saying why it cannot be replayed.
func loadReplay(_ path: String, device: RecordingDeviceOption) throws -> RecordingReplay {
    do {
        return try RecordingReplay(loadRecording(path, device: device))
    } catch let error as ReplayError {
        fail("motionctl: \(path): \(error)")
    }
}

/// Sleeps `seconds` (a replay's wait for its next frame), on through signals, as Foundation's
/// `Thread.sleep(forTimeInterval:)` did.
private func sleep(seconds: Double) {
    let whole = seconds.rounded(.down)
    var request = timespec(tv_sec: Int(Swift.min(whole, Double(Int32.max))), tv_nsec: Int((seconds - whole) * 1e9))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
}
