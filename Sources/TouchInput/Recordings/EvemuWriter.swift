import TouchModel

/// Writes evemu recordings, as `evemu-record` does: a header describing the device, then one
/// `E:` line per event. What it writes reads back through ``EvemuRecording/init(parsing:validatingDevice:)``
/// into the same description and events, so a recording made by `motionctl record` replays
/// through `gestures`, `simulate` and `motiond --replay` exactly.
public enum EvemuWriter {
    /// The header: version, the device's name, ids, properties, event codes and axes.
    /// `comment` lines (without `#`) go after the version, for where and how it was recorded.
    public static func header(_ device: DeviceDescription, comments: [String] = []) -> String {
        var lines = ["# EVEMU 1.3"] + comments.map { "# " + $0 }
        // The name as the firmware gave it, but on its line: evemu's format has no escapes, so
        // a name with a newline (a hostile descriptor) would add lines of its own.
        lines.append("# Input device name: \(OutsideText.quoted(device.name))")
        lines.append("N: \(OutsideText.escaped(device.name))")
        lines.append("I: " + [device.bus, device.vendor, device.product, device.version].map(hex4).joined(separator: " "))
        lines += maskLines("P:", bits: device.properties, bytes: 8)
        let types = Set(device.codes.keys).union([EventType.synchronization])
        lines += maskLines("B: 00", bits: types, bytes: EventType.maskBytes(upTo: EventType.max))
        for type in device.codes.keys.sorted() where type != EventType.synchronization {
            let bytes = EventType.maskBytes(upTo: EventType.maximumCode(of: type))
            lines += maskLines("B: " + hex2(UInt8(truncatingIfNeeded: type)), bits: device.codes[type]!, bytes: bytes)
        }
        for code in device.axes.keys.sorted() {
            let axis = device.axes[code]!
            lines.append("A: \(hex2(UInt8(truncatingIfNeeded: code))) \(axis.minimum) \(axis.maximum) \(axis.fuzz) \(axis.flat) \(axis.resolution)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// One event's line, its time in seconds after `start` (negative offsets, from a clock
    /// that stepped back, are written as 0 so the file stays readable).
    public static func line(_ event: InputEvent, since start: Double) -> String {
        "E: \(time(event.time - start)) \(hex4(event.type)) \(hex4(event.code)) \(event.value)\(comment(event).map { "\t# " + $0 } ?? "")"
    }

    /// A whole recording: the header and every event, times from the first event.
    public static func text(_ recording: EvemuRecording, comments: [String] = []) -> String {
        var text = recording.device.map { header($0, comments: comments) } ?? "# EVEMU 1.3\n"
        for event in recording.events { text += line(event, since: recording.startTime) + "\n" }
        return text
    }

    /// Seconds as evemu writes them: whole seconds, a dot, six digits of microseconds.
    /// Offsets that are not finite, negative or beyond 10¹¹ s are written as 0.
    public static func time(_ seconds: Double) -> String {
        let offset = (seconds * 1_000_000).rounded()
        return time(microseconds: offset >= 0 && offset <= 1e17 ? Int64(offset) : 0)
    }

    /// Microseconds (zero or more) as evemu writes seconds.
    static func time(microseconds micros: Int64) -> String {
        let fraction = String(micros % 1_000_000)
        return "\(micros / 1_000_000)." + String(repeating: "0", count: 6 - fraction.count) + fraction
    }

    /// What a reader of the file wants named: the axes and the end of each frame.
    private static func comment(_ event: InputEvent) -> String? {
        switch event.type {
        case EventType.absolute: return "EV_ABS / " + AbsoluteAxis.name(event.code)
        case EventType.synchronization where event.code == SynchronizationCode.report: return "------------ SYN_REPORT ------------"
        case EventType.key where event.code == KeyCode.touch: return "EV_KEY / BTN_TOUCH"
        default: return nil
        }
    }

    /// A bit mask in lines of at most eight bytes, each line starting with `prefix`.
    private static func maskLines(_ prefix: String, bits: Set<UInt16>, bytes: Int) -> [String] {
        let mask = EventType.mask(bits, bytes: bytes)
        return stride(from: 0, to: mask.count, by: 8).map { start in
            prefix + " " + mask[start..<Swift.min(start + 8, mask.count)].map(hex2).joined(separator: " ")
        }
    }

    static func hex2(_ byte: UInt8) -> String {
        let text = String(byte, radix: 16)
        return text.count == 1 ? "0" + text : text
    }

    static func hex4(_ value: UInt16) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: 4 - text.count) + text
    }
}
