/// Where a contact is in its life, in one frame.
public enum TouchPhase: String, Hashable, Sendable, Codable {
    /// The finger landed in this frame.
    case began
    /// The finger moved in this frame.
    case moved
    /// The finger is down and did not move.
    case stationary
    /// The finger lifted in this frame; its position is where it lifted.
    case ended
    /// The contact is over but did not lift normally: a palm, events lost in a
    /// `SYN_DROPPED`, or a device unplugged. Gestures using it should cancel, not complete.
    case cancelled

    /// Whether the contact is still down after this frame.
    public var isActive: Bool { self == .began || self == .moved || self == .stationary }
}

/// One finger on the panel, as of one frame.
public struct TouchContact: Hashable, Sendable {
    /// The multitouch slot (0 for single-touch devices).
    public var slot: Int
    /// The kernel's tracking id, unique while the finger is down.
    public var trackingID: Int32
    /// What happened to the contact in this frame.
    public var phase: TouchPhase
    /// The position in device units, as reported (possibly outside the axis range).
    public var deviceX: Int32
    public var deviceY: Int32
    /// The position in screen pixels.
    public var position: Point
    /// The position in millimetres, screen-oriented; nil when the device has no resolution.
    public var millimetres: Point?
    /// `ABS_MT_PRESSURE` (or `ABS_PRESSURE`), when the device reports it.
    public var pressure: Int32?
    /// `ABS_MT_TOUCH_MAJOR`, the contact's long axis in device units, when reported.
    public var touchMajor: Int32?
    /// `ABS_MT_TOUCH_MINOR`, when reported.
    public var touchMinor: Int32?

    /// Creates a contact.
    public init(
        slot: Int, trackingID: Int32, phase: TouchPhase, deviceX: Int32, deviceY: Int32,
        position: Point, millimetres: Point? = nil, pressure: Int32? = nil,
        touchMajor: Int32? = nil, touchMinor: Int32? = nil
    ) {
        self.slot = slot
        self.trackingID = trackingID
        self.phase = phase
        self.deviceX = deviceX
        self.deviceY = deviceY
        self.position = position
        self.millimetres = millimetres
        self.pressure = pressure
        self.touchMajor = touchMajor
        self.touchMinor = touchMinor
    }
}

/// Every contact of one device at one `SYN_REPORT`: what gesture recognizers consume.
public struct TouchFrame: Hashable, Sendable {
    /// The frame's timestamp, in seconds, from the kernel's event time.
    public var time: Double
    /// The contacts that are down, and those that ended or were cancelled in this frame.
    public var contacts: [TouchContact]

    /// Creates a frame.
    public init(time: Double, contacts: [TouchContact]) {
        self.time = time
        self.contacts = contacts
    }

    /// The contacts still down after this frame.
    public var activeContacts: [TouchContact] { contacts.filter { $0.phase.isActive } }
}
