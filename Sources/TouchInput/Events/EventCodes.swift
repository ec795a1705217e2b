// The kernel's input event codes that motiond reads (linux/input-event-codes.h). They are
// part of the kernel ABI and never change, so the pure parts of TouchInput (frame assembly,
// recordings) use these constants and need no C headers.

/// Event types (`EV_*`).
public enum EventType {
    public static let synchronization: UInt16 = 0x00
    public static let key: UInt16 = 0x01
    public static let relative: UInt16 = 0x02
    public static let absolute: UInt16 = 0x03
    public static let miscellaneous: UInt16 = 0x04
    public static let `switch`: UInt16 = 0x05
    /// The largest event type (`EV_MAX`).
    public static let max: UInt16 = 0x1f

    /// The largest code of an event type (`SYN_MAX`, `KEY_MAX`, `ABS_MAX`…): what the kernel
    /// can report, and so the longest bit mask a description may hold. Types the kernel
    /// leaves undefined get the smallest maximum of a defined one's mask word, 63.
    public static func maximumCode(of type: UInt16) -> UInt16 {
        switch type {
        case synchronization: return 0x0f
        case key: return KeyCode.max
        case relative: return 0x0f
        case absolute: return AbsoluteAxis.max
        case miscellaneous: return 0x07
        case `switch`: return 0x10
        case 0x11: return 0x0f  // EV_LED
        case 0x12: return 0x07  // EV_SND
        case 0x14: return 0x01  // EV_REP
        case 0x15: return 0x7f  // EV_FF
        default: return 0x3f
        }
    }

    /// The bytes of the kernel's bit mask for codes up to `maximum`: whole 64-bit words, as
    /// `EVIOCGBIT` fills them and evemu writes them.
    public static func maskBytes(upTo maximum: UInt16) -> Int { (Int(maximum) / 64 + 1) * 8 }

    /// A kernel bit mask of `bytes` bytes with `bits` set (bit n in byte n / 8); bits past
    /// the end are left out.
    static func mask(_ bits: Set<UInt16>, bytes: Int) -> [UInt8] {
        var mask = [UInt8](repeating: 0, count: bytes)
        for bit in bits where Int(bit) / 8 < bytes {
            mask[Int(bit) / 8] |= 1 << (bit % 8)
        }
        return mask
    }
}

/// `EV_SYN` codes.
public enum SynchronizationCode {
    /// The end of one consistent frame of events.
    public static let report: UInt16 = 0
    /// Multitouch protocol A: the end of one contact's data within a frame.
    public static let multitouchReport: UInt16 = 2
    /// The kernel's buffer overflowed: events were lost and the state must be resynced.
    public static let dropped: UInt16 = 3
}

/// `EV_ABS` codes.
public enum AbsoluteAxis {
    public static let x: UInt16 = 0x00
    public static let y: UInt16 = 0x01
    public static let pressure: UInt16 = 0x18
    public static let slot: UInt16 = 0x2f
    public static let touchMajor: UInt16 = 0x30
    public static let touchMinor: UInt16 = 0x31
    public static let widthMajor: UInt16 = 0x32
    public static let orientation: UInt16 = 0x34
    public static let positionX: UInt16 = 0x35
    public static let positionY: UInt16 = 0x36
    public static let toolType: UInt16 = 0x37
    public static let trackingID: UInt16 = 0x39
    public static let multitouchPressure: UInt16 = 0x3a
    /// The largest axis code (`ABS_MAX`).
    public static let max: UInt16 = 0x3f

    /// The kernel's name for an axis, for descriptions and errors.
    public static func name(_ code: UInt16) -> String {
        switch code {
        case x: return "ABS_X"
        case y: return "ABS_Y"
        case 0x02: return "ABS_Z"
        case pressure: return "ABS_PRESSURE"
        case 0x19: return "ABS_DISTANCE"
        case slot: return "ABS_MT_SLOT"
        case touchMajor: return "ABS_MT_TOUCH_MAJOR"
        case touchMinor: return "ABS_MT_TOUCH_MINOR"
        case widthMajor: return "ABS_MT_WIDTH_MAJOR"
        case 0x33: return "ABS_MT_WIDTH_MINOR"
        case orientation: return "ABS_MT_ORIENTATION"
        case positionX: return "ABS_MT_POSITION_X"
        case positionY: return "ABS_MT_POSITION_Y"
        case toolType: return "ABS_MT_TOOL_TYPE"
        case 0x38: return "ABS_MT_BLOB_ID"
        case trackingID: return "ABS_MT_TRACKING_ID"
        case multitouchPressure: return "ABS_MT_PRESSURE"
        case 0x3b: return "ABS_MT_DISTANCE"
        case 0x3c: return "ABS_MT_TOOL_X"
        case 0x3d: return "ABS_MT_TOOL_Y"
        default: return "ABS_0x" + String(code, radix: 16)
        }
    }
}

/// `EV_KEY` codes that tell devices apart.
public enum KeyCode {
    public static let a: UInt16 = 30
    public static let space: UInt16 = 57
    public static let leftButton: UInt16 = 0x110
    public static let toolPen: UInt16 = 0x140
    public static let toolFinger: UInt16 = 0x145
    public static let touch: UInt16 = 0x14a
    /// The largest key code (`KEY_MAX`).
    public static let max: UInt16 = 0x2ff
}

/// `EV_REL` codes.
public enum RelativeAxis {
    public static let x: UInt16 = 0x00
    public static let y: UInt16 = 0x01
}

/// Device properties (`INPUT_PROP_*`).
public enum InputProperty {
    /// The device needs a pointer on screen (touchpads).
    public static let pointer: UInt16 = 0x00
    /// The device is a screen touched directly.
    public static let direct: UInt16 = 0x01
    /// The number of properties (`INPUT_PROP_CNT`).
    public static let count: UInt16 = 0x20
}

/// Values of `ABS_MT_TOOL_TYPE`.
public enum ToolType {
    public static let finger: Int32 = 0
    public static let pen: Int32 = 1
    public static let palm: Int32 = 2
}

/// One kernel input event, with its timestamp in seconds.
public struct InputEvent: Hashable, Sendable {
    /// When the kernel stamped the event, in seconds (the monotonic clock once motiond asks for it).
    public var time: Double
    /// The event type, `EV_*`.
    public var type: UInt16
    /// The code within the type.
    public var code: UInt16
    /// The value.
    public var value: Int32

    /// Creates an event.
    public init(time: Double, type: UInt16, code: UInt16, value: Int32) {
        self.time = time
        self.type = type
        self.code = code
        self.value = value
    }
}
