import TouchModel

/// One finger as the virtual touchscreen is to show it in a frame: what `screen.contacts`
/// carries (calibrated, mapped, filtered, re-paired), and whether the apps may have it.
public struct VirtualContact: Hashable, Sendable {
    /// The finger's number, unique while it is down (the engine's).
    public var finger: Int
    public var phase: TouchPhase
    /// Where it is, in screen pixels.
    public var position: Point
    /// False when motiond keeps the touch from the apps: it began on an element that claims
    /// its touches, or a gesture took it after it began (then the apps see it cancelled).
    public var forApps: Bool

    public init(finger: Int, phase: TouchPhase, position: Point, forApps: Bool = true) {
        self.finger = finger
        self.phase = phase
        self.position = position
        self.forApps = forApps
    }
}

/// The part of motiond's screen a virtual touchscreen covers, and the units it reports in.
///
/// The axes count quarter pixels of the area (a finger's position is a fraction of a pixel
/// after calibration, and libinput scales the range to the output's size, so more units
/// than pixels keep that fraction). With the area's size in millimetres, the resolution
/// makes the device's size true, which GNOME maps by and `libinput list-devices` shows.
public struct VirtualTouchscreenGeometry: Hashable, Sendable {
    /// The area of the screen, in pixels; a point outside is held at its edge.
    public var area: Rect
    /// The area's physical size, if known.
    public var sizeMillimetres: Size?
    /// Units a pixel.
    public static let unitsPerPixel = 4.0

    public init(area: Rect, sizeMillimetres: Size? = nil) {
        self.area = area
        self.sizeMillimetres = sizeMillimetres
    }

    /// The largest value of each axis (the smallest is 0): libinput maps `0...maximum` onto the
    /// output's pixels, so `maximum + 1` units span the area.
    public var maximum: (x: Int32, y: Int32) {
        (Self.units(area.size.width) - 1, Self.units(area.size.height) - 1)
    }

    /// Units per millimetre on each axis; 0 (unknown) for both when the size is not known,
    /// since libinput refuses a device with one resolution set and not the other.
    public var resolution: (x: Int32, y: Int32) {
        guard let size = sizeMillimetres, size.width > 0, size.height > 0 else { return (0, 0) }
        let max = maximum
        // Saturating: a size of 1e-300 mm (refused by the configuration, but not by this
        // type) makes units per millimetre no integer can hold.
        func perMillimetre(_ units: Int32, _ millimetres: Double) -> Int32 {
            Swift.max(1, Int32(saturating: ((Double(units) + 1) / millimetres).rounded()))
        }
        return (perMillimetre(max.x, size.width), perMillimetre(max.y, size.height))
    }

    /// A point of the screen in the device's units, held inside the area.
    public func units(of point: Point) -> (x: Int32, y: Int32) {
        let max = maximum
        func axis(_ value: Double, _ origin: Double, _ maximum: Int32) -> Int32 {
            let units = ((value - origin) * Self.unitsPerPixel).rounded(.down)
            return Swift.min(Swift.max(Int32(saturating: units), 0), maximum)
        }
        return (axis(point.x, area.origin.x, max.x), axis(point.y, area.origin.y, max.y))
    }

    private static func units(_ pixels: Double) -> Int32 {
        Swift.max(1, Int32(saturating: (pixels * unitsPerPixel).rounded()))
    }
}

/// Turns the fingers of each frame into the events of a multitouch protocol B touchscreen,
/// as a kernel driver would send them: slots and tracking ids, `BTN_TOUCH` when the first
/// finger lands and the last lifts, and `ABS_X`/`ABS_Y` following the oldest finger for
/// readers of single touch (the kernel makes none of these for a uinput device).
///
/// A finger the apps may not have is cancelled, never lifted, so that no app sees a click:
/// its slot's tool turns `MT_TOOL_PALM` in one frame and the slot is released in the next,
/// which libinput turns into a touch cancel. A new touch in a slot says `MT_TOOL_FINGER`
/// before its tracking id, since libinput reads the tool the slot has then and would ignore
/// a touch that still says palm.
///
/// A slot released in a frame is taken again only in a later one, as a kernel driver frees
/// slots: libinput reads a release and a new tracking id in one frame as a second touch down
/// in the slot, drops the new touch, and moves the old one to it. A finger landing in a frame
/// takes a slot free before it; when the only slots left are those released in it, the finger
/// lands in a frame of its own, right after.
///
/// A finger shown since it landed stays shown until it lifts or is cancelled; one kept from
/// the apps at its landing is never shown, even if its claim ends.
public struct VirtualTouchEncoder: Sendable {
    /// What a slot holds while a finger is shown in it.
    private struct Shown: Sendable {
        var finger: Int
        /// When it landed among the fingers shown: the oldest drives `ABS_X`/`ABS_Y`.
        var order: Int
        var units: (x: Int32, y: Int32)
    }

    public let geometry: VirtualTouchscreenGeometry
    /// How many fingers the device shows at once.
    public let slotCount: Int
    private var slots: [Shown?]
    /// The slot the kernel's last `ABS_MT_SLOT` selected; -1 before the first.
    private var selected: Int32 = -1
    private var nextTrackingID: Int32 = 0
    private var landings = 0
    /// What `ABS_X`/`ABS_Y` last said, so that they are sent only when they change.
    private var pointer: (x: Int32, y: Int32)?
    private var touching = false
    /// Slots whose finger turned palm this frame, released in the next.
    private var cancelling: [Int] = []
    /// Slots whose finger lifted this frame: not free until the next.
    private var released: [Int] = []
    /// Fingers that landed this frame with only released slots left, to land in the next.
    private var waiting: [VirtualContact] = []

    /// Fingers that landed with every slot taken, and were not shown.
    public private(set) var fingersDropped = 0
    /// Fingers shown and then cancelled.
    public private(set) var fingersCancelled = 0

    /// The most fingers a virtual touchscreen shows: more than hands on a table reach.
    public static let defaultSlotCount = 20

    public init(geometry: VirtualTouchscreenGeometry, slotCount: Int = VirtualTouchEncoder.defaultSlotCount) {
        precondition(slotCount > 0, "a touchscreen has at least one slot")
        self.geometry = geometry
        self.slotCount = slotCount
        self.slots = Array(repeating: nil, count: slotCount)
        cancelling.reserveCapacity(slotCount)
        released.reserveCapacity(slotCount)
        waiting.reserveCapacity(slotCount)
    }

    /// Whether a finger is shown.
    public var isTouching: Bool { touching }

    /// Appends the events of one frame to `events`: none when it changes nothing the device
    /// shows, one frame (ending in `SYN_REPORT`) usually, another when fingers are cancelled,
    /// and another when fingers land with only the slots released in the frame left.
    ///
    /// The fingers shown are moved, lifted and cancelled first, and those new land after, so
    /// that a landing knows every slot the frame releases, wherever it is in `contacts`.
    public mutating func encode(_ contacts: [VirtualContact], into events: inout [InputEvent]) {
        let start = events.count
        for contact in contacts {
            if let slot = slot(of: contact.finger) { update(slot, with: contact, into: &events) }
        }
        for contact in contacts where contact.phase == .began && contact.forApps && slot(of: contact.finger) == nil {
            if let slot = freeSlot() {
                land(contact, in: slot, into: &events)
            } else if released.count + cancelling.count > waiting.count {
                waiting.append(contact)
            } else {
                fingersDropped += 1
            }
        }
        endFrame(since: start, into: &events)
    }

    /// Cancels the fingers among `fingers` that are shown: a gesture took them between
    /// their frames.
    public mutating func cancel(fingers: [Int], into events: inout [InputEvent]) {
        let start = events.count
        for finger in fingers {
            if let slot = slot(of: finger) { turnPalm(slot, into: &events) }
        }
        endFrame(since: start, into: &events)
    }

    /// Cancels every finger shown: for a lock, a device going away, a stop. The apps see
    /// each touch cancelled, none lifted.
    public mutating func cancelAll(into events: inout [InputEvent]) {
        let start = events.count
        for slot in slots.indices where slots[slot] != nil { turnPalm(slot, into: &events) }
        endFrame(since: start, into: &events)
    }

    private mutating func update(_ slot: Int, with contact: VirtualContact, into events: inout [InputEvent]) {
        switch contact.phase {
        case .began, .moved, .stationary:
            guard contact.forApps else { return turnPalm(slot, into: &events) }
            let units = geometry.units(of: contact.position)
            guard units != slots[slot]!.units else { return }
            select(slot, into: &events)
            if units.x != slots[slot]!.units.x { emit(AbsoluteAxis.positionX, units.x, into: &events) }
            if units.y != slots[slot]!.units.y { emit(AbsoluteAxis.positionY, units.y, into: &events) }
            slots[slot]!.units = units
        case .ended where contact.forApps:
            select(slot, into: &events)
            emit(AbsoluteAxis.trackingID, -1, into: &events)
            slots[slot] = nil
            released.append(slot)
        case .ended, .cancelled:
            turnPalm(slot, into: &events)
        }
    }

    private mutating func land(_ contact: VirtualContact, in slot: Int, into events: inout [InputEvent]) {
        let units = geometry.units(of: contact.position)
        select(slot, into: &events)
        emit(AbsoluteAxis.toolType, ToolType.finger, into: &events)
        emit(AbsoluteAxis.trackingID, nextTrackingID, into: &events)
        emit(AbsoluteAxis.positionX, units.x, into: &events)
        emit(AbsoluteAxis.positionY, units.y, into: &events)
        nextTrackingID = nextTrackingID == UInt16.max.asInt32 ? 0 : nextTrackingID + 1
        slots[slot] = Shown(finger: contact.finger, order: landings, units: units)
        landings += 1
    }

    /// The slot showing `finger`, if it is shown.
    private func slot(of finger: Int) -> Int? {
        slots.firstIndex { $0?.finger == finger }
    }

    /// A slot free for a new finger: empty, and not released in this frame.
    private func freeSlot() -> Int? {
        slots.indices.first { slots[$0] == nil && !cancelling.contains($0) && !released.contains($0) }
    }

    private mutating func turnPalm(_ slot: Int, into events: inout [InputEvent]) {
        guard !cancelling.contains(slot) else { return }
        select(slot, into: &events)
        emit(AbsoluteAxis.toolType, ToolType.palm, into: &events)
        cancelling.append(slot)
        fingersCancelled += 1
    }

    /// Ends the frame begun at `start`, if it holds anything: `BTN_TOUCH` and `ABS_X`/`ABS_Y`,
    /// `SYN_REPORT`; then the frame that releases the slots turned palm, and the frame that
    /// lands the fingers waiting for a slot, each in a slot released in an earlier frame.
    private mutating func endFrame(since start: Int, into events: inout [InputEvent]) {
        guard events.count > start else { return }
        finishFrame(into: &events)
        released.removeAll(keepingCapacity: true)
        if !cancelling.isEmpty {
            for slot in cancelling {
                select(slot, into: &events)
                emit(AbsoluteAxis.trackingID, -1, into: &events)
                slots[slot] = nil
            }
            cancelling.removeAll(keepingCapacity: true)
            finishFrame(into: &events)
        }
        guard !waiting.isEmpty else { return }
        for contact in waiting {
            // Every slot counted for it was released by now.
            land(contact, in: freeSlot()!, into: &events)
        }
        waiting.removeAll(keepingCapacity: true)
        finishFrame(into: &events)
    }

    /// `BTN_TOUCH` if it changed, the oldest finger not being cancelled on `ABS_X`/`ABS_Y`,
    /// `SYN_REPORT`. A slot turning palm still holds its touch until it is released, as
    /// libinput's own tests send it: `BTN_TOUCH` goes up with the release.
    private mutating func finishFrame(into events: inout [InputEvent]) {
        let anyDown = slots.contains { $0 != nil }
        if anyDown != touching {
            touching = anyDown
            events.append(InputEvent(time: 0, type: EventType.key, code: KeyCode.touch, value: touching ? 1 : 0))
        }
        var oldest: Shown?
        for slot in slots.indices where !cancelling.contains(slot) {
            if let shown = slots[slot], oldest.map({ shown.order < $0.order }) ?? true { oldest = shown }
        }
        if let oldest, pointer.map({ $0 != oldest.units }) ?? true {
            if pointer?.x != oldest.units.x { events.append(InputEvent(time: 0, type: EventType.absolute, code: AbsoluteAxis.x, value: oldest.units.x)) }
            if pointer?.y != oldest.units.y { events.append(InputEvent(time: 0, type: EventType.absolute, code: AbsoluteAxis.y, value: oldest.units.y)) }
            pointer = oldest.units
        }
        events.append(InputEvent(time: 0, type: EventType.synchronization, code: SynchronizationCode.report, value: 0))
    }

    private mutating func select(_ slot: Int, into events: inout [InputEvent]) {
        guard selected != Int32(slot) else { return }
        selected = Int32(slot)
        emit(AbsoluteAxis.slot, Int32(slot), into: &events)
    }

    private func emit(_ axis: UInt16, _ value: Int32, into events: inout [InputEvent]) {
        events.append(InputEvent(time: 0, type: EventType.absolute, code: axis, value: value))
    }
}

private extension UInt16 {
    var asInt32: Int32 { Int32(self) }
}
