import CEvdev
// mtdev.h includes <linux/input.h> too, and Swift credits CMtdev with `input_event`.
import CMtdev
import Glibc

/// The kernel's side of a virtual touchscreen: a uinput device made through libevdev, which
/// a compositor takes for a touchscreen (udev's `input_id` tags it `ID_INPUT_TOUCHSCREEN`):
/// `BTN_TOUCH`, `ABS_X`/`ABS_Y` and the multitouch axes, `INPUT_PROP_DIRECT`, and no mouse
/// button, which would tag it a mouse too. Closing it destroys the device, which removes it
/// from every reader; should motiond die, the kernel does so as it closes the descriptor.
final class UinputDevice: VirtualDeviceWriter {
    let node: String
    let syspath: String
    /// The kernel's device; nil for one that writes to a test's descriptor.
    private var uinput: OpaquePointer?
    private let descriptor: Int32
    private var isOpen = true
    /// A frame's events as the kernel's structs: kept between frames so that writing one
    /// allocates nothing.
    private var raw: [input_event] = []

    /// Makes the device named `name`, plugged in at `phys`, covering `geometry`. Fails with the
    /// reason: no uinput, no permission, a kernel too old to give the device its resolution.
    init(name: String, phys: String, geometry: VirtualTouchscreenGeometry, slotCount: Int, uinputPath: String) throws(VirtualTouchscreenError) {
        let descriptor = open(uinputPath, O_RDWR | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { throw .cannotOpen(path: uinputPath, errno: errno) }
        let version = motiond_uinput_version(descriptor)
        guard version >= 5 else {
            Glibc.close(descriptor)
            throw version < 0 ? .notUinput(path: uinputPath, errno: -version) : .tooOld(version: Int(version))
        }
        let template = Self.template(name: name, geometry: geometry, slotCount: slotCount)
        defer { libevdev_free(template) }
        // The phys goes to uinput itself, before the device is made: libevdev's template
        // carries one, but libevdev does not pass it on. The kernel copies the string.
        let phys = motiond_uinput_set_phys(descriptor, phys)
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
        self.descriptor = descriptor
        self.uinput = uinput
        self.node = libevdev_uinput_get_devnode(uinput).map { String(cString: $0) } ?? ""
        self.syspath = libevdev_uinput_get_syspath(uinput).map { String(cString: $0) } ?? ""
        raw.reserveCapacity(16 * slotCount)
    }

    /// A device that is none of the kernel's: what it is given goes to `descriptor` (a pipe's
    /// end, which it closes) as the kernel's structs, for a test to read the bytes uinput
    /// would be written.
    init(writingTo descriptor: Int32) {
        self.descriptor = descriptor
        self.node = ""
        self.syspath = ""
    }

    deinit { close() }

    /// The device as libevdev is to make it (its phys is set apart).
    private static func template(name: String, geometry: VirtualTouchscreenGeometry, slotCount: Int) -> OpaquePointer {
        let device = libevdev_new()!
        libevdev_set_name(device, name)
        libevdev_set_id_bustype(device, 0x06)  // BUS_VIRTUAL
        libevdev_set_id_vendor(device, Int32(VirtualTouchscreen.vendor))
        libevdev_set_id_product(device, Int32(VirtualTouchscreen.product))
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

    /// The events in one `write(2)`, each stamped `time`. A kernel from 6.5 on gives the apps
    /// that stamp when it is on the monotonic clock, in the 10 s before now; an older one, or
    /// a stamp of 0, gets the time of the write (docs/virtual-touchscreen.md, Time).
    func write(_ events: [InputEvent], stamped time: Double?) -> Int32? {
        guard isOpen else { return EBADF }
        raw.removeAll(keepingCapacity: true)
        let stamp = time.map(Self.kernelTime(of:)) ?? timeval()
        for event in events { raw.append(input_event(time: stamp, type: event.type, code: event.code, value: event.value)) }
        let bytes = raw.count * MemoryLayout<input_event>.stride
        let written = raw.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, bytes) }
        if written == bytes { return nil }
        return written < 0 ? errno : 0
    }

    /// `seconds` as the kernel's `timeval`, to the nearest microsecond (a panel's stamp, read
    /// as a double, comes back as it was); 0, which the kernel replaces with now, for a time
    /// that is not a positive number.
    static func kernelTime(of seconds: Double) -> timeval {
        guard seconds.isFinite, seconds > 0, seconds < 1e12 else { return timeval() }
        let micros = Int64((seconds * 1_000_000).rounded())
        return timeval(tv_sec: Int(micros / 1_000_000), tv_usec: Int(micros % 1_000_000))
    }

    func close() {
        guard isOpen else { return }
        if let uinput { libevdev_uinput_destroy(uinput) }
        Glibc.close(descriptor)
        uinput = nil
        isOpen = false
    }
}
