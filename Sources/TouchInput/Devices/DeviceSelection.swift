import TouchModel

/// Which touchscreens to use, from configuration: by where it is plugged in, node,
/// `vendor:product` or name glob. With no rules, every touchscreen is used.
public struct DeviceSelection: Hashable, Sendable {
    /// One way to pick a device, from the one that tells devices apart best to the one that
    /// tells them apart least (``specificity``).
    public enum Rule: Hashable, Sendable {
        /// udev's `ID_PATH`, where the device is plugged in (`pci-0000:00:14.0-usb-0:2:1.0`):
        /// the same across boots, and different for two panels of the same model. Matched
        /// exactly; a device udev gives no path (a replayed recording) never matches.
        case path(String)
        /// The event node, such as `/dev/input/event5`.
        case node(String)
        /// The USB (or other bus) vendor and product ids.
        case ids(vendor: UInt16, product: UInt16)
        /// The kernel's device name matches a glob (`*maXTouch*`; ``globMatches(_:_:)``).
        case name(String)

        /// How narrowly the rule picks a device: a path names one socket, a node one device
        /// until the next boot, ids a model, a name glob perhaps many models.
        public var specificity: Int {
            switch self {
            case .path: return 3
            case .node: return 2
            case .ids: return 1
            case .name: return 0
            }
        }

        /// The rule as the configuration writes it: `path = "…"`, `ids = "04f3:010c"`…, for
        /// `devices` to say which rule picked a device.
        public var key: String {
            switch self {
            case .path: return "path"
            case .node: return "node"
            case .ids: return "ids"
            case .name: return "name"
            }
        }

        /// The rule's value as the configuration writes it.
        public var value: String {
            switch self {
            case .path(let path): return path
            case .node(let node): return node
            case let .ids(vendor, product): return Self.hex4(vendor) + ":" + Self.hex4(product)
            case .name(let pattern): return pattern
            }
        }

        /// Whether the rule picks `device`.
        public func matches(_ device: DeviceIdentity) -> Bool {
            switch self {
            case .path(let wanted): return device.path == wanted
            case .node(let wanted): return wanted == device.node
            case let .ids(vendor, product): return device.vendor == vendor && device.product == product
            case .name(let pattern): return globMatches(Substring(pattern), Substring(device.name))
            }
        }

        private static func hex4(_ value: UInt16) -> String {
            let text = String(value, radix: 16)
            return String(repeating: "0", count: 4 - text.count) + text
        }
    }

    /// The rules; a device is used when any matches.
    public var rules: [Rule]

    /// Selects devices matching any of `rules`; none means all.
    public init(_ rules: [Rule] = []) {
        self.rules = rules
    }

    /// Whether `device` is selected.
    public func selects(_ device: DeviceIdentity) -> Bool {
        rules.isEmpty || match(device) != nil
    }

    /// The most specific of the rules that pick `device`, or nil when none does (also when
    /// there are no rules, which select every device without matching it).
    public func match(_ device: DeviceIdentity) -> Rule? {
        rules.filter { $0.matches(device) }.max { $0.specificity < $1.specificity }
    }

    /// Parses `VENDOR:PRODUCT` in hexadecimal, as lsusb prints it (`04f3:010c`).
    public static func parseIDs(_ text: String) -> Rule? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ (1...4).contains($0.count) }),
              let vendor = UInt16(parts[0], radix: 16), let product = UInt16(parts[1], radix: 16) else { return nil }
        return .ids(vendor: vendor, product: product)
    }
}
