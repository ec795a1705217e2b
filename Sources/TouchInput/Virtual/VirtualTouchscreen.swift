import CEvdev
// mtdev.h includes <linux/input.h> too, and Swift credits CMtdev with `input_event`.
import CMtdev
import Glibc
import TouchModel

/// A touchscreen motiond makes through uinput, showing the apps the fingers of the panels it
/// carries as motiond sees them (``VirtualTouchEncoder``): calibrated, mapped, filtered.
///
/// It is what a compositor takes for a touchscreen (udev's `input_id` tags it
/// `ID_INPUT_TOUCHSCREEN`): `BTN_TOUCH`, `ABS_X`/`ABS_Y` and the multitouch axes,
/// `INPUT_PROP_DIRECT`, and no mouse button, which would tag it a mouse too. It is one
/// object because it is one kernel device: made once, written to, and destroyed, which
/// removes it from every reader. Should motiond die, the kernel destroys it as it closes
/// motiond's descriptor.
public final class VirtualTouchscreen {
    /// The ids every motiond virtual touchscreen has, on the virtual bus: what a udev rule or
    /// a compositor's configuration can match, and how motiond knows its own devices when
    /// udev announces them.
    public static let vendor: UInt16 = 0x6d6f
    public static let product: UInt16 = 0x7464
    /// Names start so: the kernel keeps 80 bytes of a name.
    public static let namePrefix = "motiond virtual touchscreen"

    /// Whether a device is one motiond made.
    public static func isVirtual(vendor: UInt16, product: UInt16, name: String) -> Bool {
        vendor == Self.vendor && product == Self.product && name.hasPrefix(namePrefix)
    }

    /// The device's name, `motiond virtual touchscreen OUTPUT`.
    public let name: String
    /// Its event node, `/dev/input/eventN`, and its place in sysfs.
    public let node: String
    public let syspath: String
    public let geometry: VirtualTouchscreenGeometry
    private var encoder: VirtualTouchEncoder
    /// The kernel's device; nil for one that writes to a test's descriptor.
    private var uinput: OpaquePointer?
    private let descriptor: Int32
    /// Until ``destroy()``.
    private var isOpen = true
    /// A frame's events, and the same as the kernel's structs: kept between frames so that
    /// writing one allocates nothing.
    private var events: [InputEvent] = []
    private var raw: [input_event] = []

    /// Frames written, and writes the kernel refused (the last one's errno).
    public private(set) var framesWritten = 0
    public private(set) var writeFailures = 0
    public private(set) var lastWriteErrno: Int32 = 0
    /// Whether the last write was refused: the apps see nothing of the fingers until one
    /// goes through again.
    public private(set) var isFailing = false

    /// Makes the device for `output` (a connector's name such as `HDMI-A-1`, which names it),
    /// covering `geometry`. Fails with the reason: no uinput, no permission, a kernel too old
    /// to give the device its resolution.
    public init(output: String, geometry: VirtualTouchscreenGeometry, slotCount: Int = VirtualTouchEncoder.defaultSlotCount,
                uinputPath: String = "/dev/uinput") throws(VirtualTouchscreenError) {
        let descriptor = open(uinputPath, O_RDWR | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { throw .cannotOpen(path: uinputPath, errno: errno) }
        let version = motiond_uinput_version(descriptor)
        guard version >= 5 else {
            Glibc.close(descriptor)
            throw version < 0 ? .notUinput(path: uinputPath, errno: -version) : .tooOld(version: Int(version))
        }
        let name = String(String("\(Self.namePrefix) \(output)").utf8.prefix(79)) ?? Self.namePrefix
        let template = Self.template(name: name, geometry: geometry, slotCount: slotCount)
        defer { libevdev_free(template) }
        // The phys goes to uinput itself, before the device is made: libevdev's template
        // carries one, but libevdev does not pass it on. The kernel copies the string.
        let phys = motiond_uinput_set_phys(descriptor, Self.phys(output: output))
        guard phys == 0 else {
            Glibc.close(descriptor)
            throw .cannotCreate(errno: -phys)
        }
        var uinput: OpaquePointer?
        let status = libevdev_uinput_create_from_device(template, descriptor, &uinput)
        guard status == 0, let uinput else {
            Glibc.close(descriptor)
            throw .cannotCreate(errno: -status)
        }
        self.name = name
        self.descriptor = descriptor
        self.uinput = uinput
        self.geometry = geometry
        self.node = libevdev_uinput_get_devnode(uinput).map { String(cString: $0) } ?? ""
        self.syspath = libevdev_uinput_get_syspath(uinput).map { String(cString: $0) } ?? ""
        self.encoder = VirtualTouchEncoder(geometry: geometry, slotCount: slotCount)
        events.reserveCapacity(16 * slotCount)
        raw.reserveCapacity(16 * slotCount)
    }

    /// A device that is none of the kernel's: what it shows goes to `descriptor` (a pipe's
    /// end, which it closes when destroyed) as the kernel's structs, for a test to read what
    /// the apps would see without uinput.
    package init(output: String, geometry: VirtualTouchscreenGeometry, slotCount: Int = VirtualTouchEncoder.defaultSlotCount,
                 writingTo descriptor: Int32) {
        self.name = "\(Self.namePrefix) \(output)"
        self.descriptor = descriptor
        self.geometry = geometry
        self.node = ""
        self.syspath = ""
        self.encoder = VirtualTouchEncoder(geometry: geometry, slotCount: slotCount)
    }

    deinit { destroy() }

    /// The device's phys, `motiond/OUTPUT`: where udev rules and `libinput list-devices` say it
    /// is plugged in. The kernel keeps 1,024 bytes of it.
    static func phys(output: String) -> String {
        String("motiond/\(output)".utf8.prefix(1023)) ?? "motiond"
    }

    /// The device as libevdev is to make it (its phys is set apart: ``phys(output:)``).
    private static func template(name: String, geometry: VirtualTouchscreenGeometry, slotCount: Int) -> OpaquePointer {
        let device = libevdev_new()!
        libevdev_set_name(device, name)
        libevdev_set_id_bustype(device, 0x06)  // BUS_VIRTUAL
        libevdev_set_id_vendor(device, Int32(vendor))
        libevdev_set_id_product(device, Int32(product))
        libevdev_set_id_version(device, 1)
        libevdev_enable_property(device, UInt32(InputProperty.direct))
        libevdev_enable_event_code(device, UInt32(EventType.key), UInt32(KeyCode.touch), nil)
        let maximum = geometry.maximum, resolution = geometry.resolution
        func axis(_ code: UInt16, _ maximum: Int32, _ resolution: Int32 = 0) {
            // Fuzz 0: the kernel would drop small moves, and libinput would add hysteresis.
            var info = input_absinfo(value: 0, minimum: 0, maximum: maximum, fuzz: 0, flat: 0, resolution: resolution)
            libevdev_enable_event_code(device, UInt32(EventType.absolute), UInt32(code), &info)
        }
        axis(AbsoluteAxis.x, maximum.x, resolution.x)
        axis(AbsoluteAxis.y, maximum.y, resolution.y)
        axis(AbsoluteAxis.slot, Int32(slotCount - 1))
        axis(AbsoluteAxis.positionX, maximum.x, resolution.x)
        axis(AbsoluteAxis.positionY, maximum.y, resolution.y)
        axis(AbsoluteAxis.toolType, 2)  // MT_TOOL_FINGER, PEN, PALM: the palm cancels
        axis(AbsoluteAxis.trackingID, Int32(UInt16.max))
        return device
    }

    /// Shows one frame's fingers: nothing is written when the frame changes nothing shown.
    public func show(_ contacts: [VirtualContact]) {
        events.removeAll(keepingCapacity: true)
        encoder.encode(contacts, into: &events)
        write()
    }

    /// Cancels the fingers among `fingers` that are shown (a gesture took them).
    public func cancel(fingers: [Int]) {
        events.removeAll(keepingCapacity: true)
        encoder.cancel(fingers: fingers, into: &events)
        write()
    }

    /// Cancels every finger shown (a lock, a reload, a stop): the apps see no lift.
    public func cancelAll() {
        events.removeAll(keepingCapacity: true)
        encoder.cancelAll(into: &events)
        write()
    }

    /// Whether a finger is shown.
    public var isTouching: Bool { encoder.isTouching }
    /// Fingers not shown because every slot was taken; fingers shown and cancelled.
    public var fingersDropped: Int { encoder.fingersDropped }
    public var fingersCancelled: Int { encoder.fingersCancelled }

    /// What the device did since it was made, for `devices`, `stats`, health and the metrics.
    public var counts: VirtualTouchscreenCounts {
        VirtualTouchscreenCounts(framesWritten: framesWritten, writeFailures: writeFailures, fingersDropped: fingersDropped,
                                 fingersCancelled: fingersCancelled, lastWriteErrno: writeFailures > 0 ? lastWriteErrno : nil, isFailing: isFailing)
    }

    /// Cancels what is shown and removes the device from every reader.
    public func destroy() {
        guard isOpen else { return }
        cancelAll()
        if let uinput { libevdev_uinput_destroy(uinput) }
        Glibc.close(descriptor)
        uinput = nil
        isOpen = false
    }

    /// The events in one `write(2)`: the kernel takes them in order and ignores their times.
    private func write() {
        guard isOpen, !events.isEmpty else { return }
        raw.removeAll(keepingCapacity: true)
        for event in events { raw.append(input_event(time: timeval(), type: event.type, code: event.code, value: event.value)) }
        let bytes = raw.count * MemoryLayout<input_event>.stride
        let written = raw.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, bytes) }
        if written == bytes {
            framesWritten += events.count { $0.type == EventType.synchronization }
            isFailing = false
        } else {
            writeFailures += 1
            lastWriteErrno = written < 0 ? errno : 0
            isFailing = true
        }
    }
}

/// What a virtual touchscreen did: frames the apps were shown, writes uinput refused (a
/// finger the apps then never see, or never see lift), fingers left out for want of a slot,
/// and fingers shown and then cancelled (a gesture took them, a lock, a reload).
public struct VirtualTouchscreenCounts: Sendable, Equatable {
    public var framesWritten = 0
    public var writeFailures = 0
    public var fingersDropped = 0
    public var fingersCancelled = 0
    /// The last refused write's errno (0: written short); nil when none was refused.
    public var lastWriteErrno: Int32?
    /// Whether the last write was refused.
    public var isFailing = false

    public init(framesWritten: Int = 0, writeFailures: Int = 0, fingersDropped: Int = 0, fingersCancelled: Int = 0,
                lastWriteErrno: Int32? = nil, isFailing: Bool = false) {
        self.framesWritten = framesWritten
        self.writeFailures = writeFailures
        self.fingersDropped = fingersDropped
        self.fingersCancelled = fingersCancelled
        self.lastWriteErrno = lastWriteErrno
        self.isFailing = isFailing
    }

    /// The counts of a device that was made anew (a reload changed its area) added to those of
    /// the one before: the counts of an output since motiond started, as counters are.
    public func adding(_ newer: VirtualTouchscreenCounts) -> VirtualTouchscreenCounts {
        VirtualTouchscreenCounts(framesWritten: framesWritten + newer.framesWritten, writeFailures: writeFailures + newer.writeFailures,
                                 fingersDropped: fingersDropped + newer.fingersDropped, fingersCancelled: fingersCancelled + newer.fingersCancelled,
                                 lastWriteErrno: newer.lastWriteErrno ?? lastWriteErrno, isFailing: newer.isFailing)
    }

    /// Why the last refused write was refused, in words; nil when none was.
    public var lastWriteError: String? {
        lastWriteErrno.map { $0 == 0 ? "written short" : String(cString: strerror($0)) }
    }
}

/// Why a virtual touchscreen could not be made: said in the log and in health, while the
/// panel stays ungrabbed and everything else goes on.
public enum VirtualTouchscreenError: Error, CustomStringConvertible, Sendable, Equatable {
    case cannotOpen(path: String, errno: Int32)
    case notUinput(path: String, errno: Int32)
    case tooOld(version: Int)
    case cannotCreate(errno: Int32)

    public var description: String {
        switch self {
        case .cannotOpen(let path, let code) where code == ENOENT || code == ENODEV:
            return "\(path) does not exist: load the uinput module (modprobe uinput; /etc/modules-load.d/motiond.conf)"
        case .cannotOpen(let path, let code) where code == EACCES || code == EPERM:
            return "no permission to open \(path): motiond's user needs it (the motiond package's udev rule gives its group rw)"
        case .cannotOpen(let path, let code):
            return "cannot open \(path): \(String(cString: strerror(code)))"
        case .notUinput(let path, let code):
            return "\(path) is not uinput (\(String(cString: strerror(code))))"
        case .tooOld(let version):
            return "the kernel's uinput is version \(version); a virtual touchscreen needs 5 (Linux 4.5) to carry its size"
        case .cannotCreate(let code):
            return "uinput refused the device: \(String(cString: strerror(code)))"
        }
    }

    /// A short name for a metric's or health's label.
    public var kind: String {
        switch self {
        case .cannotOpen(_, let code) where code == ENOENT || code == ENODEV: return "no_uinput"
        case .cannotOpen(_, let code) where code == EACCES || code == EPERM: return "permission_denied"
        case .cannotOpen, .notUinput: return "cannot_open"
        case .tooOld: return "uinput_too_old"
        case .cannotCreate: return "cannot_create"
        }
    }
}
