import TouchModel
import CEvdev
// mtdev.h includes <linux/input.h> too, and Swift credits CMtdev with `input_event`.
import CMtdev
import Glibc

/// An open touchscreen: a `/dev/input/event*` node read through libevdev.
///
/// A device has identity (a file descriptor, libevdev's state, the slots of the fingers on
/// it), so it is a class. It is not thread-safe: read it from one thread.
public final class TouchDevice {
    /// The device node, such as `/dev/input/event5`.
    public let node: String
    /// What libevdev reports of the device.
    public let description: DeviceDescription
    /// Which device it is, from the input to the metrics: number 0 and no path until a
    /// ``TouchInputHub`` that opened it from udev numbers it and says where it is plugged in.
    public internal(set) var identity: DeviceIdentity
    /// udev's `ID_PATH`, where it is plugged in, when the hub opened it from udev.
    public var path: String? { identity.path }
    /// The descriptor to poll for input.
    public let fileDescriptor: Int32
    /// Whether the kernel stamps events with `CLOCK_MONOTONIC` (asked with `EVIOCSCLOCKID`);
    /// otherwise the timestamps are wall-clock time.
    public let usesMonotonicClock: Bool

    private var evdev: OpaquePointer?
    /// Where libevdev notes the tracking ids it drops (``feedReplacedIDs(into:events:)``).
    private let replacedIDs: UnsafeMutablePointer<motiond_replaced_ids>
    /// The device's slots, filters and mapping: how its events become frames, and what its
    /// readers ask of them (the mapping, the filters, the drops, the next deadline).
    public private(set) var assembler: TouchFrameAssembler
    private var event = input_event()

    /// Changes where the device's touches land and how its contacts are filtered; applies
    /// from the next frame, and the contacts down stay followed.
    public func configure(mapping: OutputMapping, filters: ContactFilterSettings) {
        assembler.configure(mapping: mapping, filters: filters)
    }

    /// What the filters did since the last call: the notices, and the counts when changed.
    public func takeFilterReport() -> ContactFilters.Report { assembler.takeFilterReport() }

    /// Now, on the clock the device's events are stamped with: the monotonic clock less
    /// how far the events' stamps were behind it when last read. That is the kernel's own
    /// clock for a live panel, and stays right for events whose stamps come from elsewhere
    /// (a wall clock where the kernel refused the monotonic one, or umockdev replaying a
    /// recording's stamps).
    public var now: Double { monotonicNow() - eventClockOffset }

    /// The monotonic clock minus the last event's stamp, when it was read.
    private var eventClockOffset = 0.0

    /// Cancels the contacts that stayed put until now, appending that frame to `events`.
    public func expire(into events: inout [TouchInputEvent]) {
        if let frame = assembler.expire(at: now) { hand(frame, to: &events) }
    }

    /// The device's stamps put on motiond's monotonic clock, for the frames it hands over.
    public private(set) var panelClock = PanelClock()

    /// Appends `frame` to `events`, stamped on motiond's clock (``PanelClock``): the filters
    /// before it work on the panel's own stamps, the springs after it on motiond's clock.
    private func hand(_ frame: TouchFrame, to events: inout [TouchInputEvent]) {
        var frame = frame
        let readAt = monotonicNow()
        frame.time = panelClock.time(of: frame.time, readAt: readAt)
        events.append(.frame(frame, from: identity, readAt: readAt))
    }

    /// Opens `node` and checks that it is a touchscreen.
    ///
    /// - Throws: ``DeviceError``: the node cannot be opened (with advice on permissions),
    ///   libevdev cannot read it, it is not a touchscreen (saying what it is instead), or its
    ///   description is one motiond cannot trust (saying which axis or mask, and why).
    public init(node: String, mapping: OutputMapping = OutputMapping()) throws(DeviceError) {
        let fd = Glibc.open(node, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw DeviceError.cannotOpen(node: node, errno: motiond_errno()) }
        var evdev: OpaquePointer?
        let status = libevdev_new_from_fd(fd, &evdev)
        guard status >= 0, let evdev else {
            Glibc.close(fd)
            throw DeviceError.libevdev(node: node, errno: -status)
        }
        let description = Self.describe(evdev)
        guard description.kind.isTouchscreen else {
            libevdev_free(evdev)
            Glibc.close(fd)
            if case .refused(let reason) = description.kind {
                throw DeviceError.notATouchscreen(node: node, name: description.name, reason: reason)
            }
            throw DeviceError.libevdev(node: node, errno: EINVAL)
        }
        do { try description.validate() } catch {
            libevdev_free(evdev)
            Glibc.close(fd)
            throw DeviceError.invalid(node: node, name: description.name, error)
        }
        self.node = node
        self.identity = DeviceIdentity(number: 0, node: node, description: description)
        self.fileDescriptor = fd
        self.evdev = evdev
        self.description = description
        self.usesMonotonicClock = libevdev_set_clock_id(evdev, CLOCK_MONOTONIC) == 0
        self.assembler = TouchFrameAssembler(description: description, mapping: mapping)
        self.replacedIDs = .allocate(capacity: 1)
        replacedIDs.initialize(to: motiond_replaced_ids())
        motiond_evdev_keep_replaced_ids(evdev, replacedIDs)
    }

    deinit {
        close()
        replacedIDs.deallocate()
    }

    /// What happened when reading.
    public enum ReadOutcome: Equatable, Sendable {
        /// Everything available was read; poll and read again.
        case drained
        /// The device is gone (unplugged); its contacts were cancelled.
        case removed
        /// Reading failed for another reason than the device being gone (`errno`): it is
        /// let go as if unplugged, and the log says why.
        case failed(errno: Int32)
    }

    /// Reads every event available now and appends each complete frame to `frames`: the
    /// reader's buffer, so that a read allocates nothing once it has grown.
    ///
    /// Handles `SYN_DROPPED` by resyncing through libevdev: contacts that vanished during
    /// the gap are cancelled, new ones begin. When the device has gone, appends a last
    /// frame cancelling its contacts, closes it and returns ``ReadOutcome/removed``.
    ///
    /// `events`, when given, sees every event as read (after a drop, the state libevdev
    /// replays in its place, and `resynced` is called first): what `motionctl record` writes.
    public func read(into frames: inout [TouchInputEvent], events: ((InputEvent) -> Void)? = nil, resynced: (() -> Void)? = nil) -> ReadOutcome {
        guard let evdev else { return .removed }
        var flags = LIBEVDEV_READ_FLAG_NORMAL.rawValue
        var readAny = false
        while true {
            let status = libevdev_next_event(evdev, flags, &event)
            if replacedIDs.pointee.count > 0 { feedReplacedIDs(into: &frames, events: events) }
            if status == LIBEVDEV_READ_STATUS_SUCCESS.rawValue || status == LIBEVDEV_READ_STATUS_SYNC.rawValue {
                if status == LIBEVDEV_READ_STATUS_SYNC.rawValue && flags == LIBEVDEV_READ_FLAG_NORMAL.rawValue {
                    // This is the SYN_DROPPED itself: libevdev now replays the state.
                    assembler.beginResync()
                    resynced?()
                    flags = LIBEVDEV_READ_FLAG_SYNC.rawValue
                    continue
                }
                let input = InputEvent(
                    time: Double(event.time.tv_sec) + Double(event.time.tv_usec) / 1_000_000,
                    type: event.type, code: event.code, value: event.value)
                events?(input)
                readAny = true
                // What was due before this event is decided first, as a replay does, however
                // late the event is read (a busy reader).
                while let (expired, _) = assembler.expireDue(before: input.time) {
                    if let expired { hand(expired, to: &frames) }
                }
                if let frame = assembler.consume(input) { hand(frame, to: &frames) }
            } else if status == -EAGAIN {
                if flags == LIBEVDEV_READ_FLAG_SYNC.rawValue {
                    assembler.endResync()
                    flags = LIBEVDEV_READ_FLAG_NORMAL.rawValue
                    continue
                }
                if readAny { eventClockOffset = monotonicNow() - lastEventTime }
                return .drained
            } else {
                // -ENODEV when unplugged; any other error leaves the device unusable too.
                remove(into: &frames)
                return status == -ENODEV ? .removed : .failed(errno: -status)
            }
        }
    }

    /// Feeds the assembler the tracking ids libevdev dropped while reading, where they were:
    /// before the event it returned after them, in the slot its events addressed then.
    ///
    /// A slot's new tracking id with no −1 before it is a new contact by the kernel's slot
    /// protocol (the old one lifted), and a replay of the raw events reads it so; libevdev
    /// drops it as a kernel bug, which would leave the old contact jumping to the new one's
    /// place. Putting it back keeps one rule for live and replayed frames, and for what
    /// `motionctl record` writes (`events`).
    private func feedReplacedIDs(into frames: inout [TouchInputEvent], events: ((InputEvent) -> Void)?) {
        for index in 0..<replacedIDs.pointee.count {
            let value = motiond_replaced_id(replacedIDs, index)
            let input = InputEvent(time: lastEventTime, type: EventType.absolute, code: AbsoluteAxis.trackingID, value: value)
            events?(input)
            if let frame = assembler.consume(input) { hand(frame, to: &frames) }
        }
        replacedIDs.pointee.count = 0
    }

    /// Cancels the device's contacts (appending that frame to `events`) and closes it: for a device
    /// that udev says was removed, before a read notices, and for shutting down.
    ///
    /// The frame is stamped now on the device's clock: the monotonic clock, or, where the
    /// kernel refused it, the time of the device's last event.
    public func remove(into events: inout [TouchInputEvent]) {
        let time = usesMonotonicClock ? monotonicNow() : lastEventTime
        if let frame = assembler.cancelAll(at: time) { hand(frame, to: &events) }
        close()
    }

    /// Whether motiond holds the device for itself (`EVIOCGRAB`).
    public private(set) var isGrabbed = false

    /// Takes the device for motiond alone, or gives it back: while grabbed, no other reader
    /// (the compositor, the browser) receives its events. Fails with the kernel's reason,
    /// `EBUSY` when another program holds it.
    public func setGrabbed(_ grab: Bool) throws(DeviceError) {
        guard let evdev, grab != isGrabbed else { return }
        let status = libevdev_grab(evdev, grab ? LIBEVDEV_GRAB : LIBEVDEV_UNGRAB)
        guard status == 0 else { throw DeviceError.cannotGrab(node: node, errno: -status) }
        isGrabbed = grab
    }

    /// Closes the device (which also ends a grab). Reading afterwards reports it removed.
    public func close() {
        guard let evdev else { return }
        if isGrabbed { _ = libevdev_grab(evdev, LIBEVDEV_UNGRAB) }
        isGrabbed = false
        libevdev_free(evdev)
        Glibc.close(fileDescriptor)
        self.evdev = nil
    }

    /// Whether the device is still open.
    public var isOpen: Bool { evdev != nil }

    private var lastEventTime: Double {
        Double(event.time.tv_sec) + Double(event.time.tv_usec) / 1_000_000
    }

    /// Reads libevdev's view of the device into a ``DeviceDescription``.
    private static func describe(_ evdev: OpaquePointer) -> DeviceDescription {
        var device = DeviceDescription(name: libevdev_get_name(evdev).map { String(cString: $0) } ?? "")
        device.bus = UInt16(truncatingIfNeeded: libevdev_get_id_bustype(evdev))
        device.vendor = UInt16(truncatingIfNeeded: libevdev_get_id_vendor(evdev))
        device.product = UInt16(truncatingIfNeeded: libevdev_get_id_product(evdev))
        device.version = UInt16(truncatingIfNeeded: libevdev_get_id_version(evdev))
        for property in 0..<UInt32(InputProperty.count) where libevdev_has_property(evdev, property) == 1 {
            device.properties.insert(UInt16(property))
        }
        for type in 1...UInt32(EventType.max) where libevdev_has_event_type(evdev, type) == 1 {
            let maximum = libevdev_event_type_get_max(type)
            guard maximum >= 0 else { continue }
            var codes: Set<UInt16> = []
            for code in 0...UInt32(maximum) where libevdev_has_event_code(evdev, type, code) == 1 {
                codes.insert(UInt16(code))
                if type == UInt32(EventType.absolute), let info = libevdev_get_abs_info(evdev, code)?.pointee {
                    device.axes[UInt16(code)] = AxisInfo(
                        value: info.value, minimum: info.minimum, maximum: info.maximum,
                        fuzz: info.fuzz, flat: info.flat, resolution: info.resolution)
                }
            }
            device.codes[UInt16(type)] = codes
        }
        return device
    }
}

/// Why a device node could not be used.
public enum DeviceError: Error, Equatable, CustomStringConvertible {
    case cannotOpen(node: String, errno: Int32)
    case libevdev(node: String, errno: Int32)
    case notATouchscreen(node: String, name: String, reason: String)
    /// A touchscreen whose firmware describes it in a way motiond cannot compute with.
    case invalid(node: String, name: String, InvalidDeviceDescription)
    /// `grab = true`, and the kernel refused the grab.
    case cannotGrab(node: String, errno: Int32)

    /// Whether the problem is permission to open the node.
    public var isPermissionDenied: Bool {
        if case .cannotOpen(_, let code) = self { return code == EACCES || code == EPERM }
        return false
    }

    /// The kind of reason, for a metric's label.
    public var skipKind: TouchInputHub.SkipReason.Kind {
        switch self {
        case .cannotOpen where isPermissionDenied: return .permissionDenied
        case .cannotOpen, .libevdev: return .cannotOpen
        case .notATouchscreen: return .notATouchscreen
        case .invalid: return .invalidDescription
        case .cannotGrab: return .cannotGrab
        }
    }

    public var description: String {
        switch self {
        case let .cannotOpen(node, code) where code == EACCES || code == EPERM:
            return "cannot open \(node): permission denied; input devices belong to the 'input' group: add the user to it (usermod -aG input USER, then log in again) or run motiond as its systemd service, which has it"
        case let .cannotOpen(node, code):
            return "cannot open \(node): \(String(cString: strerror(code)))"
        case let .libevdev(node, code):
            return "libevdev cannot read \(node): \(String(cString: strerror(code)))"
        case let .notATouchscreen(node, name, reason):
            return "\(node) (\(name)) is not used: it is \(reason)"
        case let .invalid(node, name, error):
            return "\(node) (\(name)) is not used: \(error)"
        case let .cannotGrab(node, code) where code == EBUSY:
            return "cannot grab \(node) (grab = true): another program holds it for itself; motiond does not read it ungrabbed, so its touches do not reach two readers"
        case let .cannotGrab(node, code):
            return "cannot grab \(node) (grab = true): \(String(cString: strerror(code)))"
        }
    }
}
