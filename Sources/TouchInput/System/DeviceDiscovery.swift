import CUdev
import Glibc

/// A touchscreen node as udev knows it.
public struct TouchscreenNode: Hashable, Sendable {
    /// The device node, such as `/dev/input/event5`.
    public var node: String
    /// The sysfs path, which identifies the device across add and remove.
    public var syspath: String
    /// `LIBINPUT_CALIBRATION_MATRIX`, when a udev rule or hwdb entry sets one.
    public var calibration: [Double]?
    /// udev's `ID_PATH`: where the device is plugged in (`pci-0000:00:14.0-usb-0:2:1.0`),
    /// which tells two panels of the same model apart and stays the same across boots.
    public var path: String?

    /// Creates a node description.
    public init(node: String, syspath: String, calibration: [Double]? = nil, path: String? = nil) {
        self.node = node
        self.syspath = syspath
        self.calibration = calibration
        self.path = path
    }
}

/// Finds touchscreens with libudev: `subsystem=input`, `ID_INPUT_TOUCHSCREEN=1`, with an
/// event node.
public final class DeviceDiscovery {
    private let udev: OpaquePointer

    /// Connects to libudev.
    public init() throws(DiscoveryError) {
        guard let udev = udev_new() else { throw .udevUnavailable }
        self.udev = udev
    }

    deinit { udev_unref(udev) }

    /// The touchscreens present now, sorted by node.
    public func touchscreens() -> [TouchscreenNode] {
        enumerate(touchscreensOnly: true).compactMap(\.touchscreen).sorted { $0.node < $1.node }
    }

    /// Every input event node, touchscreen or not: to explain why none was found.
    public func eventNodes() -> [String] {
        enumerate(touchscreensOnly: false).map(\.node).sorted()
    }

    /// Starts watching for input devices being added and removed.
    public func monitor() throws(DiscoveryError) -> HotplugMonitor {
        try HotplugMonitor(udev: udev)
    }

    private func enumerate(touchscreensOnly: Bool) -> [UdevDevice] {
        guard let enumerate = udev_enumerate_new(udev) else { return [] }
        defer { udev_enumerate_unref(enumerate) }
        udev_enumerate_add_match_subsystem(enumerate, "input")
        if touchscreensOnly { udev_enumerate_add_match_property(enumerate, "ID_INPUT_TOUCHSCREEN", "1") }
        udev_enumerate_scan_devices(enumerate)
        var found: [UdevDevice] = []
        var entry = udev_enumerate_get_list_entry(enumerate)
        while let current = entry {
            if let path = udev_list_entry_get_name(current),
               let device = udev_device_new_from_syspath(udev, path) {
                if let described = UdevDevice(device) { found.append(described) }
                udev_device_unref(device)
            }
            entry = udev_list_entry_get_next(current)
        }
        return found
    }
}

/// What udev says about one input device, read once.
struct UdevDevice {
    var node: String
    var syspath: String
    var isTouchscreen: Bool
    var calibration: [Double]?
    var path: String?

    /// Nil for devices without an event node (the parent `inputN` devices, `mouseN`…).
    init?(_ device: OpaquePointer) {
        guard let node = udev_device_get_devnode(device).map({ String(cString: $0) }),
              node.hasPrefix("/dev/input/event") else { return nil }
        self.node = node
        self.syspath = udev_device_get_syspath(device).map { String(cString: $0) } ?? ""
        self.isTouchscreen = udev_device_get_property_value(device, "ID_INPUT_TOUCHSCREEN").map { String(cString: $0) } == "1"
        self.calibration = udev_device_get_property_value(device, "LIBINPUT_CALIBRATION_MATRIX")
            .flatMap { OutputMapping.parseCalibration(String(cString: $0)) }
        self.path = udev_device_get_property_value(device, "ID_PATH").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
    }

    var touchscreen: TouchscreenNode? {
        isTouchscreen ? TouchscreenNode(node: node, syspath: syspath, calibration: calibration, path: path) : nil
    }
}

/// A udev monitor for input devices: poll ``fileDescriptor``, then call ``receive()``.
public final class HotplugMonitor {
    private let monitor: OpaquePointer

    /// The descriptor that becomes readable when a device is added or removed.
    public let fileDescriptor: Int32

    init(udev: OpaquePointer) throws(DiscoveryError) {
        guard let monitor = udev_monitor_new_from_netlink(udev, "udev") else { throw .monitorUnavailable }
        udev_monitor_filter_add_match_subsystem_devtype(monitor, "input", nil)
        guard udev_monitor_enable_receiving(monitor) >= 0 else {
            udev_monitor_unref(monitor)
            throw .monitorUnavailable
        }
        self.monitor = monitor
        self.fileDescriptor = udev_monitor_get_fd(monitor)
    }

    deinit { udev_monitor_unref(monitor) }

    /// A device added or removed.
    public enum Event: Hashable, Sendable {
        /// A touchscreen appeared.
        case added(TouchscreenNode)
        /// An input event node went away (touchscreen or not: its node says which).
        case removed(node: String, syspath: String)
    }

    /// The next pending event about an input event node, or nil when none is pending.
    /// Events about other input devices (keyboards, `inputN` parents) are skipped.
    public func receive() -> Event? {
        while let device = udev_monitor_receive_device(monitor) {
            defer { udev_device_unref(device) }
            guard let described = UdevDevice(device) else { continue }
            let action = udev_device_get_action(device).map { String(cString: $0) } ?? ""
            switch action {
            case "add" where described.isTouchscreen:
                return .added(described.touchscreen!)
            case "remove":
                return .removed(node: described.node, syspath: described.syspath)
            default:
                continue
            }
        }
        return nil
    }
}

/// Why libudev could not be used.
public enum DiscoveryError: Error, CustomStringConvertible {
    case udevUnavailable
    case monitorUnavailable

    public var description: String {
        switch self {
        case .udevUnavailable: return "libudev could not be initialised"
        case .monitorUnavailable: return "cannot watch udev for hotplug (no netlink socket; is /run/udev there?)"
        }
    }
}
