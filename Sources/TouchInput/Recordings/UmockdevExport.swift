import TouchModel

/// Writes what umockdev needs to fake a recorded device for the real libevdev and libudev:
/// a `.umockdev` sysfs and udev description, a `.ioctl` file answering libevdev's set-up
/// ioctls, and an events file for `umockdev-run --evemu-events`.
///
/// With these, any public evemu recording becomes a touchscreen on a machine that has none:
///
///     umockdev-run --device D.umockdev --ioctl /dev/input/event50=D.ioctl \
///                  --evemu-events /dev/input/event50=D.events -- motionctl frames
///
/// The ioctl answers follow what was found to work (see the shared testing notes): umockdev
/// matches an answer on the ioctl's full number, which includes the buffer size, so each
/// answer is exactly as long as the buffer libevdev passes (for `EVIOCGMTSLOTS`, room for
/// 256 slots, not the device's count); and it does not tell `EVIOCGMTSLOTS` codes apart, so
/// one answer with every slot empty (−1) serves them all. That answer is also what a
/// `SYN_DROPPED` resync reads: a faked device has no finger down after a drop.
public struct UmockdevExport: Sendable {
    /// The device to fake.
    public let device: DeviceDescription
    /// N in `/dev/input/eventN`.
    public let eventNumber: Int

    /// Prepares an export of `device` as `/dev/input/event<eventNumber>`.
    public init(device: DeviceDescription, eventNumber: Int = 50) {
        self.device = device
        self.eventNumber = eventNumber
    }

    /// The device node.
    public var node: String { "/dev/input/event\(eventNumber)" }

    /// The sysfs path of the event device.
    public var syspath: String { "/sys/devices/virtual/input/input\(eventNumber)/event\(eventNumber)" }

    /// The `.umockdev` file: the event device and its `inputN` parent.
    public func deviceFile() -> String {
        let parent = "/devices/virtual/input/input\(eventNumber)"
        let minor = 64 + eventNumber
        let product = [device.bus, device.vendor, device.product, device.version].map { String($0, radix: 16) }.joined(separator: "/")
        var lines = [
            "P: \(parent)/event\(eventNumber)",
            "N: input/event\(eventNumber)",
            "E: DEVNAME=\(node)",
            "E: ID_INPUT=1",
            "E: ID_INPUT_TOUCHSCREEN=1",
            "E: MAJOR=13",
            "E: MINOR=\(minor)",
            "E: SUBSYSTEM=input",
            "A: dev=13:\(minor)",
            "",
            "P: \(parent)",
            "E: NAME=\(OutsideText.quoted(device.name))",
            "E: PRODUCT=\(product)",
            "E: PROP=\(Self.sysfsMask(device.properties))",
            "E: EV=\(Self.sysfsMask(Set(device.codes.keys).union([EventType.synchronization])))",
        ]
        for (type, name) in [(EventType.key, "KEY"), (EventType.absolute, "ABS"), (EventType.relative, "REL")] {
            if let codes = device.codes[type], !codes.isEmpty { lines.append("E: \(name)=\(Self.sysfsMask(codes))") }
        }
        lines += [
            "E: ID_INPUT=1",
            "E: ID_INPUT_TOUCHSCREEN=1",
            "E: SUBSYSTEM=input",
            "A: name=\(OutsideText.escaped(device.name))",
            "A: properties=\(Self.sysfsMask(device.properties))",
            "",
        ]
        return lines.joined(separator: "\n")
    }

    /// The `.ioctl` file: every ioctl libevdev's initialisation makes.
    public func ioctlFile() -> String {
        var lines = ["@DEV \(node)"]
        func answer(_ name: String, _ result: Int, _ bytes: [UInt8]) {
            lines.append("\(name) \(result) \(bytes.map { Self.hex($0) }.joined())")
        }
        let types = Set(device.codes.keys).union([EventType.synchronization])
        answer("EVIOCGBIT(0)", 8, EventType.mask(types, bytes: 8))
        var name = Array(device.name.utf8.prefix(254))
        let nameLength = name.count + 1
        name += [UInt8](repeating: 0, count: 255 - name.count)
        answer("EVIOCGNAME(0)", nameLength, name)
        answer("EVIOCGID", 0, [device.bus, device.vendor, device.product, device.version].flatMap { Self.littleEndian(UInt32($0), bytes: 2) })
        answer("EVIOCGVERSION", 0, Self.littleEndian(0x010001, bytes: 4))
        answer("EVIOCGPROP(0)", 8, EventType.mask(device.properties, bytes: 8))
        // A bit mask for every type, present or not (libevdev asks for each), as long as the
        // kernel's: KEY_MAX needs 96 bytes, FF_MAX 16, the others 8.
        let maskSizes: [(type: UInt16, bytes: Int)] = [(1, 96), (2, 8), (3, 8), (4, 8), (5, 8), (0x11, 8), (0x12, 8), (0x14, 8), (0x15, 16)]
        for (type, bytes) in maskSizes {
            answer("EVIOCGBIT(\(type))", bytes, EventType.mask(device.codes[type] ?? [], bytes: bytes))
        }
        // Every axis the device declares, described or not (libevdev asks for each).
        let axisCodes = device.axes.keys.sorted() + (device.codes[EventType.absolute] ?? []).filter { device.axes[$0] == nil }.sorted()
        for code in axisCodes {
            let axis = device.axes[code] ?? AxisInfo(minimum: 0, maximum: 0)
            let initial = code == AbsoluteAxis.trackingID ? -1 : Swift.max(axis.minimum, Swift.min(axis.value, axis.maximum))
            let values = [initial, axis.minimum, axis.maximum, axis.fuzz, axis.flat, axis.resolution]
            // umockdev names the ioctl for axis 0 without a number.
            answer(code == 0 ? "EVIOCGABS" : "EVIOCGABS(\(code))", 0, values.flatMap { Self.littleEndian(UInt32(bitPattern: $0), bytes: 4) })
        }
        answer("EVIOCGKEY(0)", 96, [UInt8](repeating: 0, count: 96))
        answer("EVIOCGLED(0)", 8, [UInt8](repeating: 0, count: 8))
        answer("EVIOCGSW(0)", 8, [UInt8](repeating: 0, count: 8))
        if device.axes[AbsoluteAxis.slot] != nil {
            // libevdev asks with room for its 256-slot maximum, whatever the device's count.
            let values = [Int32(AbsoluteAxis.trackingID)] + [Int32](repeating: -1, count: Self.libevdevSlotCapacity)
            answer("EVIOCGMTSLOTS(0)", 0, values.flatMap { Self.littleEndian(UInt32(bitPattern: $0), bytes: 4) })
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// An events file for `--evemu-events`, with times from `leadIn` seconds.
    ///
    /// umockdev stamps events replayed before the reader has opened the device with wrong
    /// times (seen: up to the first 0.1 s); the lead-in leaves the reader time to start, so
    /// every event keeps its recorded spacing. The contents arrive either way. umockdev plays
    /// events in file order, so an event stamped before the one ahead of it (a corrupt
    /// recording) keeps that one's time rather than a negative offset.
    public static func eventsFile(_ events: [InputEvent], leadIn: Double = 0.5) -> String {
        let start = (events.first?.time ?? 0) - leadIn
        var lines = ["# EVEMU 1.3"]
        var previous: Int64 = 0
        for event in events {
            // Parsed times are at most 2³² s (4·10¹⁵ µs); anything else (NaN, infinities
            // from events made in code) keeps the previous time instead of trapping.
            let offset = ((event.time - start) * 1_000_000).rounded()
            let micros = offset >= Double(previous) && offset <= 1e17 ? Int64(offset) : previous
            previous = micros
            lines.append("E: \(EvemuWriter.time(microseconds: micros)) \(EvemuWriter.hex4(event.type)) \(EvemuWriter.hex4(event.code)) \(event.value)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The slots libevdev's `EVIOCGMTSLOTS` buffer holds (seen: a 1028-byte request).
    static let libevdevSlotCapacity = 256

    // MARK: Encoding

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xf)]])
    }

    private static func littleEndian(_ value: UInt32, bytes: Int) -> [UInt8] {
        (0..<bytes).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    /// A bit mask as sysfs prints it: 64-bit words in hexadecimal, most significant first.
    private static func sysfsMask(_ bits: Set<UInt16>) -> String {
        guard let highest = bits.max() else { return "0" }
        var words = [UInt64](repeating: 0, count: Int(highest) / 64 + 1)
        for bit in bits { words[Int(bit) / 64] |= 1 << UInt64(bit % 64) }
        return words.reversed().map { String($0, radix: 16) }.joined(separator: " ")
    }
}
