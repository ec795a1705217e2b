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
    /// How the compositor turns the output: the device's axes are the output's unturned ones.
    public var transform: OutputTransform
    /// Units a pixel.
    public static let unitsPerPixel = 4.0

    public init(area: Rect, sizeMillimetres: Size? = nil, transform: OutputTransform = .normal) {
        self.area = area
        self.sizeMillimetres = sizeMillimetres
        self.transform = transform
    }

    /// The area as the device's axes span it, in pixels: turned back where the output is turned.
    public var deviceSize: Size { transform.deviceSize(of: area.size) }

    /// The largest value of each axis (the smallest is 0): libinput maps `0...maximum` onto the
    /// output's pixels, so `maximum + 1` units span the area.
    public var maximum: (x: Int32, y: Int32) {
        (Self.units(deviceSize.width) - 1, Self.units(deviceSize.height) - 1)
    }

    /// Units per millimetre on each axis; 0 (unknown) for both when the size is not known,
    /// since libinput refuses a device with one resolution set and not the other.
    public var resolution: (x: Int32, y: Int32) {
        guard let size = sizeMillimetres.map(transform.deviceSize(of:)), size.width > 0, size.height > 0 else { return (0, 0) }
        let max = maximum
        // Saturating: a size of 1e-300 mm (refused by the configuration, but not by this
        // type) makes units per millimetre no integer can hold.
        func perMillimetre(_ units: Int32, _ millimetres: Double) -> Int32 {
            Swift.max(1, Int32(saturating: ((Double(units) + 1) / millimetres).rounded()))
        }
        return (perMillimetre(max.x, size.width), perMillimetre(max.y, size.height))
    }

    /// A point of the screen in the device's units, held inside the area, turned back into
    /// the output's unturned frame.
    public func units(of point: Point) -> (x: Int32, y: Int32) {
        let max = maximum
        let onDevice = transform.devicePoint(of: Point(x: point.x - area.origin.x, y: point.y - area.origin.y), in: area.size)
        func axis(_ value: Double, _ maximum: Int32) -> Int32 {
            let units = (value * Self.unitsPerPixel).rounded(.down)
            return Swift.min(Swift.max(Int32(saturating: units), 0), maximum)
        }
        return (axis(onDevice.x, max.x), axis(onDevice.y, max.y))
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
/// A finger the apps may no longer have ends as ``ending`` says, so that no app sees a click:
/// - ``CancelledTouchEnding/cancel``: its slot's tool turns `MT_TOOL_PALM` in one frame and
///   the slot is released in the next, which libinput turns into a touch cancel. A new touch
///   in a slot says `MT_TOOL_FINGER` before its tracking id, since libinput reads the tool the
///   slot has then and would ignore a touch that still says palm.
/// - ``CancelledTouchEnding/withdraw``: it is slid out of a tap's slop and held still before
///   it lifts (``Withdrawal``), over frames of its own that ``advance(to:into:)`` writes at
///   ``nextDeadline``; its slot stays taken until it has lifted.
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
        /// Where it landed: what a withdrawal needs to know whether it was a tap or a drag.
        var landing: (x: Int32, y: Int32)
        /// Set once motiond took the finger away: the slot shows the withdrawal, no longer
        /// the finger.
        var withdrawal: Withdrawal?
    }

    public let geometry: VirtualTouchscreenGeometry
    /// How a finger the apps saw begin ends when motiond takes it away.
    public var ending: CancelledTouchEnding
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
    /// Fingers that landed while a withdrawal was under way, where they are now (`ended` once
    /// they lifted), and where they landed: they land once it has lifted, so that no app takes
    /// a finger landing and one being withdrawn for two fingers together (a pinch, a
    /// two-finger scroll). A jump's new part lands so, 0.2 s late, where the finger is then; a
    /// tap in that time comes late, whole; a finger that moved and lifted in that time is not
    /// shown (landed and lifted at once where it ended, it would be a tap there).
    private var held: [(contact: VirtualContact, landing: Point)] = []

    /// Fingers that landed with every slot taken, and were not shown.
    public private(set) var fingersDropped = 0
    /// Fingers shown and then cancelled.
    public private(set) var fingersCancelled = 0

    /// The most fingers a virtual touchscreen shows: more than hands on a table reach.
    public static let defaultSlotCount = 20

    public init(geometry: VirtualTouchscreenGeometry, slotCount: Int = VirtualTouchEncoder.defaultSlotCount, ending: CancelledTouchEnding = .cancel) {
        precondition(slotCount > 0, "a touchscreen has at least one slot")
        self.geometry = geometry
        self.ending = ending
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
    /// `time` is the frame's, on the clock ``nextDeadline`` is on.
    public mutating func encode(_ contacts: [VirtualContact], at time: Double, into events: inout [InputEvent]) {
        let start = events.count
        for contact in contacts {
            if let slot = slot(of: contact.finger) {
                update(slot, with: contact, at: time, into: &events)
            } else if let index = held.firstIndex(where: { $0.contact.finger == contact.finger }) {
                follow(held: index, with: contact)
            }
        }
        let withdrawing = isWithdrawing
        for contact in contacts where contact.phase == .began && contact.forApps && slot(of: contact.finger) == nil {
            if withdrawing {
                if !held.contains(where: { $0.contact.finger == contact.finger }) { held.append((contact, contact.position)) }
            } else if let slot = freeSlot() {
                land(contact, in: slot, into: &events)
            } else if released.count + cancelling.count > waiting.count {
                waiting.append(contact)
            } else {
                fingersDropped += 1
            }
        }
        endFrame(since: start, into: &events)
    }

    /// Ends the fingers among `fingers` that are shown: a gesture took them between their
    /// frames.
    public mutating func cancel(fingers: [Int], at time: Double, into events: inout [InputEvent]) {
        let start = events.count
        for finger in fingers {
            if let slot = slot(of: finger) { takeAway(slot, at: time, into: &events) }
        }
        held.removeAll { fingers.contains($0.contact.finger) }
        endFrame(since: start, into: &events)
    }

    /// Ends every finger shown: for a lock, a device going away. The apps see no touch
    /// lifted where it was, whatever ``ending`` is; with `as` given, that ending instead
    /// (a device about to be removed cannot wait for a withdrawal).
    public mutating func cancelAll(at time: Double, as ending: CancelledTouchEnding? = nil, into events: inout [InputEvent]) {
        let start = events.count
        held.removeAll()
        for slot in slots.indices where slots[slot] != nil {
            if ending == .cancel || (ending == nil && self.ending == .cancel) {
                turnPalm(slot, into: &events)
            } else if slots[slot]!.withdrawal == nil {
                withdraw(slot, at: time, into: &events)
            }
        }
        endFrame(since: start, into: &events)
    }

    /// When a withdrawal next has a frame to write (``advance(to:into:)``); nil when none is
    /// under way.
    public var nextDeadline: Double? {
        var next: Double?
        for shown in slots {
            if let deadline = shown?.withdrawal?.deadline, deadline < next ?? .infinity { next = deadline }
        }
        return next
    }

    /// Writes what the withdrawals under way have due by `time`: a step of a slide, or a lift.
    public mutating func advance(to time: Double, into events: inout [InputEvent]) {
        let start = events.count
        for slot in slots.indices {
            guard var withdrawal = slots[slot]?.withdrawal else { continue }
            if let units = withdrawal.step(at: time) {
                slots[slot]!.withdrawal = withdrawal
                move(slot, to: units, into: &events)
            } else if withdrawal.liftsBy(time) {
                lift(slot, into: &events)
            }
        }
        endFrame(since: start, into: &events)
        if !held.isEmpty && !isWithdrawing { landHeld(into: &events) }
    }

    /// Whether a withdrawal is under way.
    private var isWithdrawing: Bool { slots.contains { $0?.withdrawal != nil } }

    /// A finger held back while a withdrawal was under way, as it moves, lifts or is taken.
    private mutating func follow(held index: Int, with contact: VirtualContact) {
        guard contact.forApps, contact.phase != .cancelled else { return held.removeAll { $0.contact.finger == contact.finger } }
        held[index].contact.position = contact.position
        if contact.phase == .ended { held[index].contact.phase = .ended }
    }

    /// Lands the fingers held back, now that no withdrawal is under way: those that lifted
    /// meanwhile lift in the next frame, a tap come late.
    private mutating func landHeld(into events: inout [InputEvent]) {
        var start = events.count
        var liftedSlots: [Int] = []
        for (contact, landing) in held {
            let lifted = contact.phase == .ended
            if lifted && contact.position.distance(to: landing) > Withdrawal.tapSlop { continue }
            guard let slot = freeSlot() else { fingersDropped += 1; continue }
            land(contact, in: slot, into: &events)
            if lifted { liftedSlots.append(slot) }
        }
        held.removeAll(keepingCapacity: true)
        endFrame(since: start, into: &events)
        start = events.count
        for slot in liftedSlots { lift(slot, into: &events) }
        endFrame(since: start, into: &events)
    }

    private mutating func update(_ slot: Int, with contact: VirtualContact, at time: Double, into events: inout [InputEvent]) {
        switch contact.phase {
        case .began, .moved, .stationary:
            guard contact.forApps else { return takeAway(slot, at: time, into: &events) }
            let units = geometry.units(of: contact.position)
            guard units != slots[slot]!.units else { return }
            move(slot, to: units, into: &events)
        case .ended where contact.forApps:
            lift(slot, into: &events)
        case .ended, .cancelled:
            takeAway(slot, at: time, into: &events)
        }
    }

    private mutating func move(_ slot: Int, to units: (x: Int32, y: Int32), into events: inout [InputEvent]) {
        select(slot, into: &events)
        if units.x != slots[slot]!.units.x { emit(AbsoluteAxis.positionX, units.x, into: &events) }
        if units.y != slots[slot]!.units.y { emit(AbsoluteAxis.positionY, units.y, into: &events) }
        slots[slot]!.units = units
    }

    private mutating func lift(_ slot: Int, into events: inout [InputEvent]) {
        select(slot, into: &events)
        emit(AbsoluteAxis.trackingID, -1, into: &events)
        slots[slot] = nil
        released.append(slot)
    }

    /// Ends a finger motiond took from the apps, as ``ending`` says.
    private mutating func takeAway(_ slot: Int, at time: Double, into events: inout [InputEvent]) {
        switch ending {
        case .cancel: turnPalm(slot, into: &events)
        case .withdraw: withdraw(slot, at: time, into: &events)
        }
    }

    /// Begins the slot's withdrawal, and shows its first step now.
    private mutating func withdraw(_ slot: Int, at time: Double, into events: inout [InputEvent]) {
        let shown = slots[slot]!
        let others = slots.indices.compactMap { other in other != slot && slots[other]?.withdrawal == nil ? slots[other]?.units : nil }
        var withdrawal = Withdrawal(from: shown.units, landing: shown.landing, at: time, geometry: geometry, others: others)
        fingersCancelled += 1
        if let first = withdrawal.step(at: time) {
            slots[slot]!.withdrawal = withdrawal
            move(slot, to: first, into: &events)
        } else if withdrawal.liftsBy(time) {
            lift(slot, into: &events)
        } else {
            slots[slot]!.withdrawal = withdrawal
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
        slots[slot] = Shown(finger: contact.finger, order: landings, units: units, landing: units)
        landings += 1
    }

    /// The slot showing `finger`, if it is shown (and not being withdrawn: the finger is no
    /// longer the slot's).
    private func slot(of finger: Int) -> Int? {
        slots.firstIndex { $0?.finger == finger && $0?.withdrawal == nil }
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
