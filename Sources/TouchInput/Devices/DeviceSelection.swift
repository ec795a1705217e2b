import TouchModel

/// Which touchscreens to use, from configuration: by name glob, `vendor:product`, or node.
/// With no rules, every touchscreen is used.
public struct DeviceSelection: Hashable, Sendable {
    /// One way to pick a device.
    public enum Rule: Hashable, Sendable {
        /// The kernel's device name matches a glob (`*maXTouch*`; ``globMatches(_:_:)``).
        case name(String)
        /// The USB (or other bus) vendor and product ids.
        case ids(vendor: UInt16, product: UInt16)
        /// The event node, such as `/dev/input/event5`.
        case node(String)
    }

    /// The rules; a device is used when any matches.
    public var rules: [Rule]

    /// Selects devices matching any of `rules`; none means all.
    public init(_ rules: [Rule] = []) {
        self.rules = rules
    }

    /// Whether the device at `node` is selected.
    public func selects(node: String, device: DeviceDescription) -> Bool {
        rules.isEmpty || rules.contains { rule in
            switch rule {
            case .name(let pattern): return globMatches(Substring(pattern), Substring(device.name))
            case let .ids(vendor, product): return device.vendor == vendor && device.product == product
            case .node(let path): return path == node
            }
        }
    }

    /// Parses `VENDOR:PRODUCT` in hexadecimal, as lsusb prints it (`04f3:010c`).
    public static func parseIDs(_ text: String) -> Rule? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ (1...4).contains($0.count) }),
              let vendor = UInt16(parts[0], radix: 16), let product = UInt16(parts[1], radix: 16) else { return nil }
        return .ids(vendor: vendor, product: product)
    }
}
