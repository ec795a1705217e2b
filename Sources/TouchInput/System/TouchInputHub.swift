import TouchModel
import Glibc

/// Every selected touchscreen, found at start and as it is plugged in, read through one
/// `poll`: the input side of motiond.
///
/// The hub watches udev first and enumerates second, so a device plugged in during start-up
/// is not missed. A device that is unplugged has its contacts cancelled and the rest carries
/// on; when it comes back, it is opened again.
public final class TouchInputHub {
    private let discovery: DeviceDiscovery
    private var monitor: HotplugMonitor?
    private let configure: (DeviceIdentity, _ udevCalibration: [Double]?) -> Result<DeviceUse, SkipReason>
    private var pollDescriptors: [pollfd] = []
    private var udevNodes: [String: TouchscreenNode] = [:]
    private var skippedNodes: Set<String> = []
    /// The number each node's device was given (``DeviceIdentity/number``): kept when it
    /// goes, so a device plugged in again at its node has its number again.
    private var numbers: [String: Int] = [:]

    /// How a touchscreen is used: where it maps, and whether motiond takes it for itself.
    public struct DeviceUse {
        public var mapping: OutputMapping
        /// Grab the device (`EVIOCGRAB`), so that no other reader receives its events.
        public var grab: Bool
        /// The contact filters.
        public var filters: ContactFilterSettings

        public init(mapping: OutputMapping, grab: Bool = false, filters: ContactFilterSettings = ContactFilterSettings()) {
            self.mapping = mapping
            self.grab = grab
            self.filters = filters
        }
    }

    /// Why a touchscreen is not used: in words for people, and as a ``Kind`` for a metric's
    /// label, which must have few values.
    public struct SkipReason: Error, CustomStringConvertible, Sendable {
        /// What kind of reason, named as a metric label's value.
        public enum Kind: String, CaseIterable, Sendable {
            /// No `[[device]]` entry of the configuration selects it.
            case notSelected = "not_selected"
            case permissionDenied = "permission_denied"
            /// It could not be opened or read for another reason.
            case cannotOpen = "cannot_open"
            case notATouchscreen = "not_a_touchscreen"
            /// Its firmware describes axes motiond cannot compute with.
            case invalidDescription = "invalid_description"
            /// `grab = true`, and another program holds it.
            case cannotGrab = "cannot_grab"
            /// A virtual touchscreen a motiond made (``VirtualTouchscreen``): the apps read it,
            /// and motiond reading it would read its own output back.
            case virtualTouchscreen = "virtual_touchscreen"
        }

        public var description: String
        public var kind: Kind

        public init(_ description: String, kind: Kind) {
            self.description = description
            self.kind = kind
        }

        /// Why a device that could not be used is skipped.
        public init(_ error: DeviceError) {
            self.init(error.description, kind: error.skipKind)
        }
    }

    /// A descriptor that wakes ``poll(timeout:)`` when readable (another thread's pipe);
    /// what was written to it is read and discarded.
    public var wakeDescriptor: Int32?

    /// The devices being read, by node.
    public private(set) var devices: [String: TouchDevice] = [:]

    /// Creates a hub that reads the touchscreens `selection` picks in device units (with
    /// udev's calibration matrix, if any), filtered by `filters`: a reader of raw input.
    public convenience init(selection: DeviceSelection = DeviceSelection(), filters: ContactFilterSettings = ContactFilterSettings()) throws(DiscoveryError) {
        try self.init { device, udevCalibration in
            selection.selects(device)
                ? .success(DeviceUse(mapping: OutputMapping(calibration: udevCalibration ?? OutputMapping.identityCalibration), filters: filters))
                : .failure(SkipReason("\(OutsideText.quoted(device.name)) is not selected by the configuration", kind: .notSelected))
        }
    }

    /// Creates a hub that asks `configure` whether to use each touchscreen, and how: given
    /// the device (with the number the hub gave it) and udev's `LIBINPUT_CALIBRATION_MATRIX`
    /// for it, if a rule sets one.
    public init(configure: @escaping (DeviceIdentity, _ udevCalibration: [Double]?) -> Result<DeviceUse, SkipReason>) throws(DiscoveryError) {
        self.discovery = try DeviceDiscovery()
        self.configure = configure
    }

    /// What the hub reports, in order, from the call that returned it: its own buffer, lent
    /// to the caller until the next call (as libinput's events are read after
    /// `libinput_dispatch`), so that reading input allocates nothing once it has grown.
    private var events: [TouchInputEvent] = []

    /// Applies `configure` again to the open devices (after a configuration reload): new
    /// mappings apply from the next frame; a device no longer selected is closed. Returns
    /// what that changed (lent until the next call).
    public func reconfigure() -> [TouchInputEvent] {
        events.removeAll(keepingCapacity: true)
        for (node, device) in devices {
            guard let udev = udevNodes[node] else { continue }
            let use = configure(device.identity, udev.calibration).flatMap { use in
                // A grab taken or given back as the new configuration says.
                Result { () throws(DeviceError) in try device.setGrabbed(use.grab) }.map { use }.mapError { SkipReason($0) }
            }
            switch use {
            case .success(let use):
                device.configure(mapping: use.mapping, filters: use.filters)
                events.append(.reconfigured(device.identity, DeviceSetup(device)))
            case .failure(let reason):
                devices[node] = nil
                device.remove(into: &events)
                events.append(.removed(device.identity, why: .deselected))
                skip(node, reason)
            }
        }
        return events
    }

    /// Starts watching for hotplug and opens the touchscreens present now; returns what it
    /// found (lent until the next call).
    public func start() throws(DiscoveryError) -> [TouchInputEvent] {
        events.removeAll(keepingCapacity: true)
        monitor = try discovery.monitor()
        for node in discovery.touchscreens() {
            open(node)
        }
        return events
    }

    /// Waits up to `timeout` milliseconds (−1: forever) for input or hotplug, and returns
    /// what is ready (lent until the next call): empty when the wait timed out or a signal
    /// interrupted it.
    ///
    /// It wakes earlier when a contact down would be stuck (``ContactFilters``): a finger
    /// that does not move sends nothing, so only a timer can cancel it.
    public func poll(timeout: Int32) -> [TouchInputEvent] {
        events.removeAll(keepingCapacity: true)
        let wait = earliest(timeout)
        listDescriptors()
        let ready = Glibc.poll(&pollDescriptors, nfds_t(pollDescriptors.count), wait)
        if ready > 0 {
            for descriptor in pollDescriptors where descriptor.revents != 0 {
                if descriptor.fd == monitor?.fileDescriptor {
                    handleHotplug()
                } else if descriptor.fd == wakeDescriptor {
                    var bytes = [UInt8](repeating: 0, count: 64)
                    _ = Glibc.read(descriptor.fd, &bytes, bytes.count)
                } else if let device = devices.values.first(where: { $0.fileDescriptor == descriptor.fd }) {
                    read(device)
                }
            }
        }
        for device in devices.values where device.assembler.nextDeadline.map({ $0 <= device.now }) == true {
            device.expire(into: &events)
            reportFilters(device)
        }
        return events
    }

    /// `timeout`, or sooner when a device's contact would be stuck sooner.
    private func earliest(_ timeout: Int32) -> Int32 {
        var timeout = timeout
        for device in devices.values {
            guard let deadline = device.assembler.nextDeadline else { continue }
            let wait = Int32(clamping: Int64(((deadline - device.now) * 1000).rounded(.up)))
            timeout = timeout < 0 ? Swift.max(wait, 0) : Swift.min(timeout, Swift.max(wait, 0))
        }
        return timeout
    }

    /// Lists the descriptors to poll: udev's, the wake pipe's, each device's.
    private func listDescriptors() {
        pollDescriptors.removeAll(keepingCapacity: true)
        if let monitor { pollDescriptors.append(pollfd(fd: monitor.fileDescriptor, events: Int16(POLLIN), revents: 0)) }
        if let wakeDescriptor { pollDescriptors.append(pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0)) }
        for device in devices.values {
            pollDescriptors.append(pollfd(fd: device.fileDescriptor, events: Int16(POLLIN), revents: 0))
        }
    }

    /// Closes every device, cancelling the contacts that were down; returns those last
    /// frames and removals (lent until the next call).
    public func stop() -> [TouchInputEvent] {
        events.removeAll(keepingCapacity: true)
        for device in devices.values {
            device.remove(into: &events)
            events.append(.removed(device.identity, why: .stopped))
        }
        devices = [:]
        monitor = nil
        return events
    }

    private func read(_ device: TouchDevice) {
        let drops = device.assembler.droppedReports
        let outcome = device.read(into: &events)
        if device.assembler.droppedReports > drops { events.append(.eventsDropped(device.identity, total: device.assembler.droppedReports)) }
        reportFilters(device)
        switch outcome {
        case .drained: break
        case .removed, .failed:
            devices[device.node] = nil
            if case .failed(let errno) = outcome {
                events.append(.removed(device.identity, why: .failed(errno: errno)))
            } else {
                events.append(.removed(device.identity))
            }
        }
    }

    /// Reports what the device's filters did since the last report.
    private func reportFilters(_ device: TouchDevice) {
        let report = device.takeFilterReport()
        for notice in report.notices { events.append(.filtered(device.identity, notice)) }
        if let counts = report.counts { events.append(.filterCounts(device.identity, counts)) }
    }

    private func handleHotplug() {
        while let event = monitor?.receive() {
            switch event {
            case .added(let node):
                open(node)
            case .removed(let node, _):
                if skippedNodes.remove(node) != nil { events.append(.skippedRemoved(node: node)) }
                guard let device = devices.removeValue(forKey: node) else { continue }
                // Read what the device still had to say, and what its filters decided of it
                // (a palm ignored from landing gives no frame), then cancel what is left down.
                // Cancelling decides too: a palm still within its verdict window is one now.
                _ = device.read(into: &events)
                device.remove(into: &events)
                reportFilters(device)
                events.append(.removed(device.identity))
            }
        }
    }

    private func open(_ node: TouchscreenNode) {
        guard devices[node.node] == nil else { return }
        do throws(DeviceError) {
            let device = try TouchDevice(node: node.node)
            let description = device.description
            if VirtualTouchscreen.isVirtual(vendor: description.vendor, product: description.product, name: description.name) {
                return skip(node.node, SkipReason("\(OutsideText.quoted(description.name)) is a motiond virtual touchscreen, for the apps", kind: .virtualTouchscreen))
            }
            device.identity = DeviceIdentity(number: number(of: node.node), node: node.node, path: node.path, description: description)
            switch configure(device.identity, node.calibration) {
            case .failure(let reason):
                skip(node.node, reason)
                return
            case .success(let use):
                device.configure(mapping: use.mapping, filters: use.filters)
                try device.setGrabbed(use.grab)
            }
            devices[node.node] = device
            udevNodes[node.node] = node
            skippedNodes.remove(node.node)
            events.append(.added(device.identity, device.description, DeviceSetup(device)))
        } catch {
            skip(node.node, SkipReason(error))
        }
    }

    /// The number of the device read from `node`: its own if the node had one, else the next.
    private func number(of node: String) -> Int {
        if let number = numbers[node] { return number }
        numbers[node] = numbers.count
        return numbers.count - 1
    }

    private func skip(_ node: String, _ reason: SkipReason) {
        skippedNodes.insert(node)
        events.append(.skipped(node: node, reason: reason))
    }
}
