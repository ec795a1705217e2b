import TouchModel

/// What the kernel reports of an axis (`struct input_absinfo`).
public struct AxisInfo: Hashable, Sendable, Codable {
    public var value: Int32
    public var minimum: Int32
    public var maximum: Int32
    public var fuzz: Int32
    public var flat: Int32
    /// Units per millimetre; 0 when the device does not say, which many touchscreens don't.
    public var resolution: Int32

    /// Creates an axis description.
    public init(value: Int32 = 0, minimum: Int32, maximum: Int32, fuzz: Int32 = 0, flat: Int32 = 0, resolution: Int32 = 0) {
        self.value = value
        self.minimum = minimum
        self.maximum = maximum
        self.fuzz = fuzz
        self.flat = flat
        self.resolution = resolution
    }

    /// How many units the axis spans, first to last: the range libinput normalises over
    /// (`maximum - minimum + 1`), in Double so that the widest Int32 range cannot overflow.
    public var span: Double { Double(maximum) - Double(minimum) + 1 }

    /// The length of the axis in millimetres, when the resolution is known. In Double: an
    /// Int32 `maximum - minimum` overflows for ranges wider than half of Int32.
    public var lengthInMillimetres: Double? {
        resolution > 0 ? (Double(maximum) - Double(minimum)) / Double(resolution) : nil
    }
}

/// Everything motiond needs to know about an input device, read from libevdev or from the
/// header of an evemu recording.
public struct DeviceDescription: Hashable, Sendable {
    /// The kernel's name for the device.
    public var name: String
    /// The bus (`BUS_USB` 0x03, `BUS_I2C` 0x18, …), vendor, product and version ids.
    public var bus: UInt16 = 0
    public var vendor: UInt16 = 0
    public var product: UInt16 = 0
    public var version: UInt16 = 0
    /// The `INPUT_PROP_*` properties set.
    public var properties: Set<UInt16> = []
    /// For each event type, the codes the device can send.
    public var codes: [UInt16: Set<UInt16>] = [:]
    /// The absolute axes.
    public var axes: [UInt16: AxisInfo] = [:]

    /// Creates a description.
    public init(name: String) {
        self.name = name
    }

    /// Whether the device can send `code` of `type`.
    public func has(_ type: UInt16, _ code: UInt16) -> Bool {
        codes[type]?.contains(code) ?? false
    }

    /// Whether the device has `property`.
    public func has(property: UInt16) -> Bool { properties.contains(property) }

    /// The number of multitouch slots: `ABS_MT_SLOT`'s maximum + 1, the slots libmtdev gives
    /// a protocol A device, or 1 for a device with no multitouch positions. Trust it only in
    /// a description that passed ``validate()``, which caps it.
    public var slotCount: Int {
        if isProtocolA { return ProtocolAConverter.slotCount }
        guard let slots = axes[AbsoluteAxis.slot] else { return 1 }
        return Int(slots.maximum) + 1
    }

    /// Whether the device speaks multitouch protocol A: multitouch positions and no slots,
    /// each frame listing every contact down. motiond reads it through libmtdev.
    public var isProtocolA: Bool {
        isMultitouch && !has(EventType.absolute, AbsoluteAxis.slot)
    }

    /// Whether the device reports multitouch positions.
    public var isMultitouch: Bool {
        has(EventType.absolute, AbsoluteAxis.positionX) && has(EventType.absolute, AbsoluteAxis.positionY)
    }

    /// The axes positions come from: the multitouch ones, or the legacy ones for single touch.
    public var positionAxes: (x: AxisInfo, y: AxisInfo)? {
        let (xCode, yCode) = isMultitouch ? (AbsoluteAxis.positionX, AbsoluteAxis.positionY) : (AbsoluteAxis.x, AbsoluteAxis.y)
        guard let x = axes[xCode], let y = axes[yCode] else { return nil }
        return (x, y)
    }

    /// `ABS_MT_TOUCH_MAJOR`, when the device reports it: the contacts' size.
    public var touchMajorAxis: AxisInfo? {
        has(EventType.absolute, AbsoluteAxis.touchMajor) ? axes[AbsoluteAxis.touchMajor] : nil
    }

    /// The touch surface's size in millimetres, when both resolutions are known.
    public var physicalSize: Size? {
        guard let axes = positionAxes,
              let width = axes.x.lengthInMillimetres, let height = axes.y.lengthInMillimetres else { return nil }
        return Size(width: width, height: height)
    }

    /// What kind of device this is, and whether motiond uses it.
    public var kind: DeviceKind { DeviceKind(self) }
}

/// Whether a device is a touchscreen motiond uses, and if not, what it is and why not.
public enum DeviceKind: Hashable, Sendable {
    /// A multitouch screen: direct, with `ABS_MT_POSITION_X/Y`.
    case multitouchScreen
    /// A single-touch screen: `ABS_X/Y` with `BTN_TOUCH`.
    case singleTouchScreen
    /// Anything else, with what it is and why it is not used.
    case refused(String)

    /// Classifies a device from its capabilities, in the spirit of udev's input_id builtin.
    public init(_ device: DeviceDescription) {
        let absolute = { (code: UInt16) in device.has(EventType.absolute, code) }
        let key = { (code: UInt16) in device.has(EventType.key, code) }
        let hasXY = absolute(AbsoluteAxis.x) && absolute(AbsoluteAxis.y)
        let pointerLike = device.has(property: InputProperty.pointer) || key(KeyCode.toolFinger)

        if key(KeyCode.toolPen) && !device.isMultitouch {
            self = .refused("a graphics tablet or pen (BTN_TOOL_PEN): motiond reads fingers on a touchscreen")
        } else if device.isMultitouch || hasXY {
            if pointerLike && !device.has(property: InputProperty.direct) {
                self = .refused("a touchpad (it moves a pointer: \(device.has(property: InputProperty.pointer) ? "INPUT_PROP_POINTER" : "BTN_TOOL_FINGER") without INPUT_PROP_DIRECT): motiond reads screens that are touched directly")
            } else if device.isMultitouch {
                self = .multitouchScreen
            } else if key(KeyCode.touch) {
                self = .singleTouchScreen
            } else {
                self = .refused("an absolute pointer without BTN_TOUCH (a joystick or a virtual tablet): motiond cannot tell when a finger is down")
            }
        } else if device.has(EventType.relative, RelativeAxis.x) && device.has(EventType.relative, RelativeAxis.y) {
            self = .refused("a mouse or pointing stick (relative motion, REL_X/REL_Y): motiond reads touchscreens")
        } else if key(KeyCode.a) || key(KeyCode.space) {
            self = .refused("a keyboard: motiond reads touchscreens")
        } else {
            self = .refused("not a touch device (no ABS_X/ABS_Y or ABS_MT_POSITION_X/Y axes): motiond reads touchscreens")
        }
    }

    /// Whether motiond reads this device.
    public var isTouchscreen: Bool {
        switch self {
        case .multitouchScreen, .singleTouchScreen: return true
        case .refused: return false
        }
    }
}
