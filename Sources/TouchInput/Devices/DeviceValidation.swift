// A device description comes from outside: from a panel's firmware through the kernel and
// libevdev, or from a recording someone attached to a bug report. Everything downstream (the
// slots the assembler allocates, the mapping's divisions) trusts it, so it is checked here,
// once, for live devices and recordings alike.

/// One thing wrong with a device description: the part at fault and why.
public struct DeviceProblem: Error, Hashable, Sendable, CustomStringConvertible {
    /// The part of a description a problem is in; in an evemu header, the kind of line.
    public enum Part: Hashable, Sendable {
        /// An axis (an `A:` line; `EVIOCGABS` on a live device).
        case axis(UInt16)
        /// The codes of an event type, or with type 0 the event types (a `B:` line).
        case codes(type: UInt16)
        /// The `INPUT_PROP_*` properties (the `P:` line).
        case properties
    }

    /// Where the problem is.
    public var part: Part
    /// What is wrong, with the values at fault.
    public var reason: String

    /// Creates a problem.
    public init(_ part: Part, _ reason: String) {
        self.part = part
        self.reason = reason
    }

    public var description: String {
        switch part {
        case .axis(let code): return "\(AbsoluteAxis.name(code)): \(reason)"
        case .codes(let type) where type == EventType.synchronization: return "event types: \(reason)"
        case .codes(let type): return "event type 0x\(String(type, radix: 16)) codes: \(reason)"
        case .properties: return "properties: \(reason)"
        }
    }
}

/// A description motiond refuses to read a device by, with every problem found.
public struct InvalidDeviceDescription: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong, in the order ``DeviceDescription/problems`` finds it; never empty.
    public var problems: [DeviceProblem]

    public var description: String {
        "its description is invalid: " + problems.map(\.description).joined(separator: "; ")
    }
}

extension DeviceDescription {
    /// The most multitouch slots motiond reads. Touchscreens have ten or so; the kernel's
    /// drivers allocate their slots up front, so a count far beyond this is a firmware bug,
    /// and trusting it would allocate without bound (2³¹ slots is 128 GB of state).
    public static let maximumSlotCount = 64

    /// Checks the description before anything relies on it.
    ///
    /// - Throws: ``InvalidDeviceDescription`` with every problem found.
    public func validate() throws(InvalidDeviceDescription) {
        let problems = self.problems
        if !problems.isEmpty { throw InvalidDeviceDescription(problems: problems) }
    }

    /// Everything wrong with the description, properties first, then event types and codes,
    /// then axes by code; empty when it can be read.
    ///
    /// A description is refused when it holds what the kernel can never report (properties,
    /// types or codes beyond the kernel's maxima), or axes motiond cannot compute with: a
    /// maximum below the minimum, a negative resolution, position axes with no span (every
    /// position would be the same point), or slots that do not start at 0 or number more than
    /// ``maximumSlotCount``, or an axis the device sends without its range (a recording
    /// missing an `A:` line).
    public var problems: [DeviceProblem] {
        var problems: [DeviceProblem] = []
        if let property = properties.filter({ $0 >= InputProperty.count }).min() {
            problems.append(DeviceProblem(.properties, "property 0x\(String(property, radix: 16)) is beyond INPUT_PROP_MAX (0x\(String(InputProperty.count - 1, radix: 16)))"))
        }
        for type in codes.keys.sorted() {
            guard type <= EventType.max else {
                problems.append(DeviceProblem(.codes(type: EventType.synchronization), "event type 0x\(String(type, radix: 16)) is beyond EV_MAX (0x\(String(EventType.max, radix: 16)))"))
                continue
            }
            let maximum = EventType.maximumCode(of: type)
            if let code = codes[type]?.filter({ $0 > maximum }).min() {
                problems.append(DeviceProblem(.codes(type: type), "code 0x\(String(code, radix: 16)) is beyond the type's maximum (0x\(String(maximum, radix: 16)))"))
            }
        }
        let positionCodes = isMultitouch ? [AbsoluteAxis.positionX, AbsoluteAxis.positionY] : [AbsoluteAxis.x, AbsoluteAxis.y]
        for code in Set(axes.keys).union(codes[EventType.absolute] ?? []).sorted() {
            guard let axis = axes[code] else {
                problems.append(DeviceProblem(.axis(code), "the device sends it, but its range is not described"))
                continue
            }
            if let reason = Self.problem(axis: code, axis, isPosition: positionCodes.contains(code)) {
                problems.append(DeviceProblem(.axis(code), reason))
            }
        }
        return problems
    }

    /// What is wrong with one axis, or nil. Ranges are compared, never subtracted, so that
    /// extreme values cannot overflow here.
    private static func problem(axis code: UInt16, _ axis: AxisInfo, isPosition: Bool) -> String? {
        if code > AbsoluteAxis.max {
            return "axis 0x\(String(code, radix: 16)) is beyond ABS_MAX (0x\(String(AbsoluteAxis.max, radix: 16)))"
        }
        if axis.maximum < axis.minimum {
            return "maximum \(axis.maximum) is below minimum \(axis.minimum)"
        }
        if axis.resolution < 0 {
            return "resolution \(axis.resolution) is negative"
        }
        if isPosition && axis.maximum == axis.minimum {
            return "minimum and maximum are both \(axis.minimum): a position axis with no span puts every touch on one point"
        }
        if code == AbsoluteAxis.slot {
            if axis.minimum != 0 { return "minimum \(axis.minimum) is not 0: slots are numbered from 0" }
            let count = Int(axis.maximum) + 1
            if count > maximumSlotCount { return "\(count) slots; motiond reads at most \(maximumSlotCount) (touchscreens have ten or so)" }
        }
        return nil
    }
}
