import MotionConfiguration
import MotionCore
import TouchInput

// How touch frames and devices look in JSON, for motionctl and the socket protocol.

extension JSONValue {
    /// A point as `{"x": …, "y": …}`.
    public static func point(_ point: Point) -> JSONValue {
        .object([("x", .number(point.x)), ("y", .number(point.y))])
    }

    /// A frame: `{"event": "frame", "t", "device", "contacts": [...]}`. Positions are screen
    /// pixels; `mm` is null when the device does not report its resolution.
    public static func frame(_ frame: TouchFrame, device: String) -> JSONValue {
        .object([
            ("event", "frame"),
            ("t", .number(frame.time)),
            ("device", .string(device)),
            ("contacts", .array(frame.contacts.map(contact))),
        ])
    }

    /// One contact of a frame.
    public static func contact(_ contact: TouchContact) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("slot", .integer(Int64(contact.slot))),
            ("id", .integer(Int64(contact.trackingID))),
            ("phase", .string(contact.phase.rawValue)),
            ("x", .number(contact.position.x)),
            ("y", .number(contact.position.y)),
            ("device_x", .integer(Int64(contact.deviceX))),
            ("device_y", .integer(Int64(contact.deviceY))),
            ("mm", contact.millimetres.map(point) ?? .null),
        ]
        if let pressure = contact.pressure { members.append(("pressure", .integer(Int64(pressure)))) }
        if let major = contact.touchMajor { members.append(("touch_major", .integer(Int64(major)))) }
        if let minor = contact.touchMinor { members.append(("touch_minor", .integer(Int64(minor)))) }
        return .object(members)
    }

    /// A rectangle of the screen as `{"x", "y", "width", "height"}`.
    public static func rect(_ rect: Rect) -> JSONValue {
        .object([("x", .number(rect.origin.x)), ("y", .number(rect.origin.y)),
                 ("width", .number(rect.size.width)), ("height", .number(rect.size.height))])
    }

    /// A device's contact filters as they apply to it: each threshold, null when off, and
    /// why a filter asked for is off.
    public static func filters(_ filters: ResolvedContactFilters) -> JSONValue {
        .object([
            ("stuck_after", filters.stuckAfter.map { .number($0) } ?? .null),
            ("palm_size", filters.palmUnits.map { .integer(Int64($0)) } ?? .null),
            ("palm_size_mm", filters.palmMillimetres.map { .number($0) } ?? .null),
            ("jump_mm", filters.jumpMillimetres.map { .number($0) } ?? .null),
            ("jump_px", filters.jumpPixels.map { .number($0.rounded()) } ?? .null),
            ("hysteresis", filters.hysteresisMargin.map { .object([("x", .integer(Int64($0.x))), ("y", .integer(Int64($0.y)))]) } ?? .null),
            ("phantom_taps", .bool(filters.phantoms.repeatingTaps)),
            ("wake_bursts", .bool(filters.phantoms.wakeBursts)),
            ("storm_contacts", filters.phantoms.stormContacts > 0 ? .integer(Int64(filters.phantoms.stormContacts)) : .null),
            ("storm_quiet", .number(filters.phantoms.stormQuiet)),
            ("infrared", .bool(filters.infrared)),
            ("dead_zones", .array(filters.phantoms.deadZones.map(JSONValue.rect))),
            ("notes", .array(filters.notes.map { .string($0) })),
            ("quirk", filters.quirk.map { .string($0) } ?? .null),
        ])
    }

    /// Whether the device's own size and its contacts' sizes are believed, and why: what
    /// the filters measure in.
    public static func geometry(_ geometry: PanelGeometry) -> JSONValue {
        func verdict(_ verdict: PanelGeometry.Verdict) -> JSONValue {
            .object([("verdict", .string(verdict.name)), ("reason", .string(verdict.reason))])
        }
        return .object([
            ("size", verdict(geometry.positions)),
            ("size_mm", geometry.size.map { .object([("width", .number($0.width)), ("height", .number($0.height))]) } ?? .null),
            ("touch_size", verdict(geometry.touchSize)),
            ("explanation", .array(geometry.explanation.map { .string($0) })),
        ])
    }

    /// How often each filter acted.
    public static func filtered(_ counts: ContactFilters.Counts) -> JSONValue {
        .object(ContactFilters.FilterCount.allCases.map { ($0.key, .integer(Int64(counts[$0]))) })
    }

    /// A device's description, as `motionctl devices --json` and the protocol's `devices` show it.
    public static func device(_ device: DeviceDescription, node: String) -> JSONValue {
        let kind: String
        switch device.kind {
        case .multitouchScreen: kind = "multitouch"
        case .singleTouchScreen: kind = "single-touch"
        case .refused: kind = "not-a-touchscreen"
        }
        var members: [(String, JSONValue)] = [
            ("node", .string(node)),
            ("name", .string(device.name)),
            ("bus", .string(DeviceText.bus(device.bus))),
            ("vendor", .string(DeviceText.hex(device.vendor))),
            ("product", .string(DeviceText.hex(device.product))),
            ("version", .string(DeviceText.hex(device.version))),
            ("kind", .string(kind)),
        ]
        if case .refused(let reason) = device.kind { members.append(("reason", .string(reason))) }
        members += [
            ("slots", device.kind.isTouchscreen ? .integer(Int64(device.isMultitouch ? device.slotCount : 1)) : .null),
            ("size_mm", device.physicalSize.map { .object([("width", .number($0.width)), ("height", .number($0.height))]) } ?? .null),
            ("axes", .array(device.axes.keys.sorted().map { code in
                let axis = device.axes[code]!
                return .object([
                    ("code", .integer(Int64(code))), ("name", .string(AbsoluteAxis.name(code))),
                    ("min", .integer(Int64(axis.minimum))), ("max", .integer(Int64(axis.maximum))),
                    ("fuzz", .integer(Int64(axis.fuzz))), ("flat", .integer(Int64(axis.flat))),
                    ("resolution", .integer(Int64(axis.resolution))),
                ])
            })),
        ]
        return .object(members)
    }
}

/// Words for device ids, shared by the JSON and the text output.
public enum DeviceText {
    /// `0x04f3`.
    public static func hex(_ value: UInt16) -> String {
        let text = String(value, radix: 16)
        return "0x" + String(repeating: "0", count: 4 - text.count) + text
    }

    /// A rectangle of the screen as `motiond.toml` writes an output: `[1920, 0, 1920, 1080]`.
    public static func rectangle(_ rect: Rect) -> String {
        "[" + [rect.origin.x, rect.origin.y, rect.size.width, rect.size.height].map(compactNumber).joined(separator: ", ") + "]"
    }

    /// The bus by name where it is a common one (`usb`, `i2c`, `spi`…), else in hex.
    public static func bus(_ bus: UInt16) -> String {
        switch bus {
        case 0x03: return "usb"
        case 0x05: return "bluetooth"
        case 0x06: return "virtual"
        case 0x11: return "i8042"
        case 0x18: return "i2c"
        case 0x19: return "host"
        case 0x1c: return "spi"
        default: return hex(bus)
        }
    }
}

extension JSONValue {
    /// A published value: a point as `{x, y}`, a size as `{width, height}`, a number, a string;
    /// the fingers as `screen.contacts`' `[{"id", "x", "y", "device", "predicted"?}, …]`.
    public static func published(_ value: PublishedValue) -> JSONValue {
        switch value {
        case .point(let point): return .point(point)
        case .size(let size): return .object([("width", .number(size.width)), ("height", .number(size.height))])
        case .number(let number): return .number(number)
        case .text(let text): return .string(text)
        case .bool(let flag): return .bool(flag)
        case .spring(let spring):
            return .object([("tension", .number(spring.tension)), ("friction", .number(spring.friction)), ("mass", .number(spring.mass))])
        case .contacts(let fingers):
            return .array(fingers.map { finger in
                var members: [(String, JSONValue)] = [("id", .integer(Int64(finger.id))), ("x", .number(finger.position.x)),
                                                      ("y", .number(finger.position.y)), ("device", .string(finger.device))]
                if let predicted = finger.predicted { members.append(("predicted", .point(predicted))) }
                return .object(members)
            })
        }
    }

    /// An update as `motionctl simulate --json` prints it: `{"t", "stream", "value"}`.
    public static func update(_ update: PublishedUpdate) -> JSONValue {
        .object([("t", .number(update.time)), ("stream", .string(update.stream)), ("value", .published(update.value))])
    }
}

extension ContactFilters.Notice {
    /// The log's line: what was cancelled, never begun or re-paired, where, and why.
    public var text: String {
        let place = "(\(compactNumber(position.x.rounded())), \(compactNumber(position.y.rounded())))"
        switch kind {
        case .stuck: return "contact \(trackingID) at \(place) stayed put for stuck_after and was cancelled; it is ignored until it lifts"
        case .palm(fromLanding: true): return "contact \(trackingID) at \(place) landed larger than a palm (palm_size): it is ignored from landing until it lifts, and never began"
        case .palm: return "contact \(trackingID) at \(place) is larger than a palm (palm_size) and was cancelled; it is ignored until it lifts"
        case .markedPalm(fromLanding: true): return "contact \(trackingID) at \(place) landed marked a palm by the panel (MT_TOOL_PALM): it is ignored until it lifts, and never began"
        case .markedPalm: return "contact \(trackingID) at \(place) was marked a palm by the panel (MT_TOOL_PALM) and was cancelled; it is ignored until it lifts"
        case .jump: return "contact \(trackingID) jumped to \(place) farther than jump_mm within one frame; it was cancelled and begun again there"
        case .repaired(let other):
            return "contact \(trackingID)'s finger was reported at \(place) in contact \(other)'s slot: the panel exchanged their positions within one frame; contact \(trackingID) was re-paired with its finger and carries on"
        case .deadZone: return "contact \(trackingID) landed at \(place) in a dead zone (dead_zones): it is ignored until it lifts, and never began"
        case .phantomTap(let period, learned: true):
            return "a phantom taps at \(place) every \(compactNumber((period * 1000).rounded() / 1000)) s (three short touches there, evenly apart): from its next tap on, a touch there when one is due waits until it outlasts a phantom's (phantom_taps)"
        case .phantomTap(let period, learned: false):
            return "contact \(trackingID) at \(place) was the phantom's tap (every \(compactNumber((period * 1000).rounded() / 1000)) s): it lifted before it outlasted one, and never began"
        case .burst: return "contact \(trackingID) at \(place) landed in a burst (together with others at an edge, or as the idle panel woke) and lifted before it moved or lasted \(compactNumber(PhantomTouchSettings.burstProof)) s: it never began (wake_bursts)"
        case .calm(let after):
            return "the touch storm is over: no flood contact for \(compactNumber(after)) s (storm_quiet), the panel takes touches again"
        case .storm(let contacts, let quiet):
            return "touch storm: \(contacts) contacts within a second lifted within 70 ms where they landed, as a flooding sensor's do (storm_contacts): every contact down cancelled, the panel quiet until it sends none for \(compactNumber(quiet)) s"
        case .ghost: return "contact \(trackingID) at \(place) was a ghost corner of the two fingers down (an infrared frame): it never began"
        case .flip: return "the infrared frame reported its two fingers at their ghost corners, near \(place): they were put back where they were"
        }
    }
}

extension ContactFilters.Counts {
    /// The counts a `filtered` object holds (``JSONValue/filtered(_:)``), as motionctl reads
    /// them back: a count the object lacks (an older motiond's) is 0.
    public init(filtered json: JSONInput?) {
        self.init()
        for kind in ContactFilters.FilterCount.allCases { self[kind] = json?[kind.key]?.integer ?? 0 }
    }
}
