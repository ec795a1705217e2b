import TouchModel
/// Turns a device's stream of kernel events into ``TouchFrame``s: the multitouch protocol B
/// state machine.
///
/// Events update the state of the slot they address; at each `SYN_REPORT` the assembler
/// compares each slot with the last frame and emits a frame with every contact that is down
/// or that ended, each with its ``TouchPhase``.
/// Each slot's life is a ``SlotState``, changed only by ``SlotState/transition(_:_:)``,
/// whose table says what each event does and what the next frame reports:
///
/// | kernel event                          | slot event        |
/// |---------------------------------------|-------------------|
/// | `ABS_MT_TRACKING_ID` ≥ 0, a new id    | `land` (a palm if `ABS_MT_TOOL_TYPE` says so) |
/// | `ABS_MT_TRACKING_ID` −1               | `lift`            |
/// | `ABS_MT_POSITION_X/Y` changes         | `move`            |
/// | `ABS_MT_TOOL_TYPE` = palm             | `palm`            |
/// | its id reused in another slot, a `SYN_DROPPED` nobody resyncs, the device gone | `cancel` |
/// | `SYN_REPORT`                          | `report`          |
///
/// During a `SYN_DROPPED` resync, a contact that ends by `land` or `lift` was lost, and is
/// reported `cancelled` rather than `ended`.
///
/// Any event stream is accepted: slots outside the device's range are ignored, a tracking id
/// still down in another slot ends that contact first (a frame never holds one id twice),
/// and `SYN_DROPPED` may come anywhere. In a frame, contacts that ended come before those
/// down, so an id that ends and begins again within one frame reads in order.
///
/// Protocol A devices (multitouch positions, no slots, contacts separated by `SYN_MT_REPORT`)
/// go through libmtdev first (``ProtocolAConverter``), which gives their contacts slots and
/// tracking ids. Protocol A carries no state, so a `SYN_DROPPED` on such a device cancels its
/// contacts, and the next frame, which lists every contact down, begins them again.
///
/// Single-touch devices (`ABS_X/Y` with `BTN_TOUCH`) are one slot whose tracking id the
/// assembler makes up; on multitouch devices the legacy `ABS_X/Y` and `BTN_TOUCH` are ignored.
///
/// Last, the frame goes through the device's ``ContactFilters`` (stuck contacts, palms,
/// jumps, jitter), so that every reader of frames, live or replayed, sees them filtered the
/// same way; ``ContactFilterSettings/off`` gives the device's own frames.
/// After setup, reading events allocates
/// nothing; building a frame reuses the previous frame's storage when its reader let go of it.
public struct TouchFrameAssembler {
    private struct Slot {
        /// Where the slot's contact is in its life (``SlotState``).
        var state = SlotState.empty
        /// `ABS_MT_TOOL_TYPE`: per-slot state the kernel sends only when it changes.
        var toolType = ToolType.finger
        var x: Int32 = 0
        var y: Int32 = 0
        var pressure: Int32?
        var touchMajor: Int32?
        var touchMinor: Int32?
        /// A contact that ended since the last frame, kept to report where it lifted.
        var ended: (trackingID: Int32, x: Int32, y: Int32, cancelled: Bool)?

        var isDown: Bool { state.isDown }
    }

    /// The device's description.
    public let description: DeviceDescription
    /// Device units to pixels and millimetres.
    public private(set) var mapper: CoordinateMapper {
        didSet { filters.mapper = mapper }
    }
    /// The filters after assembly.
    private var filters: ContactFilters
    /// The filters' settings, kept to resolve them again when the mapping changes.
    private var filterSettings: ContactFilterSettings

    private var slots: [Slot]
    private var currentSlot = 0
    private let isMultitouch: Bool
    private let reportsPressure: Bool
    private let reportsTouchMajor: Bool
    private let reportsTouchMinor: Bool
    private var nextSyntheticID: Int32 = 0
    private var frame = TouchFrame(time: 0, contacts: [])
    /// Between a `SYN_DROPPED` and the `SYN_REPORT` that ends the resync.
    private var resyncing = false
    /// Discarding a raw stream's events after a `SYN_DROPPED` nobody resyncs.
    private var discardingUntilReport = false
    /// libmtdev, for a protocol A device; nil for the rest. A class: an assembler is not
    /// copied once it reads events.
    private let protocolA: ProtocolAConverter?

    /// How many times events were lost (`SYN_DROPPED`).
    public private(set) var droppedReports = 0

    /// Creates an assembler for a touchscreen.
    ///
    /// - Precondition: the device has position axes (``DeviceKind/isTouchscreen``) and its
    ///   description is valid (``DeviceDescription/validate()``): live devices and recordings
    ///   are checked before they get here.
    public init(description: DeviceDescription, mapping: OutputMapping = OutputMapping(), filters: ContactFilterSettings = ContactFilterSettings()) {
        precondition(description.positionAxes != nil, "\(description.name) has no position axes")
        precondition(description.problems.isEmpty, "\(description.name): \(description.problems)")
        self.description = description
        // Millimetres only where the device's size is believed (PanelGeometry): every reader
        // of this mapper measures in what the filters measure in.
        let resolved = ResolvedContactFilters(filters, device: description, mapping: mapping)
        self.mapper = CoordinateMapper(geometry: resolved.geometry, mapping: mapping)
        self.filterSettings = filters
        self.protocolA = description.isProtocolA ? ProtocolAConverter(description: description) : nil
        let description = protocolA?.slotted ?? description
        self.isMultitouch = description.isMultitouch
        let absolute = description.codes[EventType.absolute] ?? []
        self.reportsPressure = absolute.contains(isMultitouch ? AbsoluteAxis.multitouchPressure : AbsoluteAxis.pressure)
        self.reportsTouchMajor = absolute.contains(AbsoluteAxis.touchMajor)
        self.reportsTouchMinor = absolute.contains(AbsoluteAxis.touchMinor)
        self.slots = Array(repeating: Slot(), count: isMultitouch ? Swift.max(description.slotCount, 1) : 1)
        self.frame.contacts.reserveCapacity(slots.count * 2)
        self.filters = ContactFilters(resolved, mapper: mapper, slots: slots.count)
    }

    /// The filters as they apply to this device: thresholds in its units, and why any is off.
    public var resolvedFilters: ResolvedContactFilters { filters.resolved }

    /// Changes the filters' settings (a reload); contacts down stay followed.
    public mutating func setFilters(_ settings: ContactFilterSettings) {
        filterSettings = settings
        resolve(mapping: mapper.mapping)
    }

    /// Changes where the device's touches land (a reload, a calibration); applies from the
    /// next frame. The output's shape takes part in whether the panel's size is believed.
    public mutating func setMapping(_ mapping: OutputMapping) {
        resolve(mapping: mapping)
    }

    /// The filters and the mapper for the settings and `mapping`, in the device's believed size.
    private mutating func resolve(mapping: OutputMapping) {
        let resolved = ResolvedContactFilters(filterSettings, device: description, mapping: mapping)
        filters.resolved = resolved
        mapper = CoordinateMapper(geometry: resolved.geometry, mapping: mapping)
    }

    /// How often each filter acted on this device.
    public var filterCounts: ContactFilters.Counts {
        var counts = filters.counts
        counts.lastLifts = protocolA?.suppliedLastLifts ?? 0
        return counts
    }

    /// What the filters did since the last call, for the log.
    public mutating func takeFilterNotices() -> [ContactFilters.Notice] { filters.takeNotices() }

    /// When a contact down now would be stuck if nothing moves (on the events' clock), for
    /// a reader that waits for input to wake then and call ``expire(at:)``.
    public var nextDeadline: Double? { filters.nextDeadline }

    /// Cancels the contacts that stayed put until `time`; nil when none did.
    public mutating func expire(at time: Double) -> TouchFrame? { filters.expire(at: time) }

    /// The contacts down now.
    public var activeContactCount: Int { slots.reduce(0) { $0 + ($1.isDown ? 1 : 0) } }

    /// Whether the device speaks multitouch protocol A, read through libmtdev.
    public var isProtocolA: Bool { protocolA != nil }

    /// Feeds one event; returns a frame when the event is a `SYN_REPORT` that ends a frame
    /// with at least one contact in it.
    public mutating func consume(_ event: InputEvent) -> TouchFrame? {
        guard let protocolA else { return consumeProtocolB(event) }
        if discardingUntilReport || (event.type == EventType.synchronization && event.code == SynchronizationCode.dropped) {
            // Protocol A carries no state to resync: after a drop nothing reaches libmtdev
            // until the frame ends, and it starts afresh, so the next frame begins every
            // contact it lists.
            if event.type == EventType.synchronization && event.code == SynchronizationCode.report {
                protocolA.reset()
                currentSlot = 0  // where a fresh libmtdev starts without saying so
            }
            return consumeProtocolB(event)
        }
        // A local, not a stored property: a second reference to the frame would make the next
        // frame copy its contacts instead of reusing their storage.
        var completed: TouchFrame?
        protocolA.convert(event) { converted in
            if let frame = consumeProtocolB(converted) { completed = frame }
        }
        return completed
    }

    private mutating func consumeProtocolB(_ event: InputEvent) -> TouchFrame? {
        switch event.type {
        case EventType.synchronization:
            return synchronize(event)
        case _ where discardingUntilReport:
            return nil
        case EventType.absolute:
            if isMultitouch { multitouchAxis(event.code, event.value) } else { singleTouchAxis(event.code, event.value) }
        case EventType.key where !isMultitouch && event.code == KeyCode.touch:
            singleTouchButton(down: event.value != 0)
        default:
            break
        }
        return nil
    }

    /// Marks the start of a resync after `SYN_DROPPED`, as libevdev delivers it: the events
    /// that follow, up to ``endResync()``, bring the slots to the device's state now.
    /// Contacts that ended during the gap are reported `cancelled`, new ones `began`.
    public mutating func beginResync() {
        droppedReports += 1
        if protocolA != nil {
            // Nothing to resync: what libevdev replays is not a protocol A frame.
            discardingUntilReport = true
            return
        }
        resyncing = true
        discardingUntilReport = false
    }

    /// Marks the end of the resync: the device's state is current again.
    public mutating func endResync() {
        resyncing = false
    }

    /// Ends every contact as cancelled, for a device that went away. Returns the frame to
    /// deliver, or nil when no finger was down.
    public mutating func cancelAll(at time: Double) -> TouchFrame? {
        endEverything()
        resyncing = false
        discardingUntilReport = false
        return makeFrame(at: time)
    }

    // MARK: Events

    private mutating func synchronize(_ event: InputEvent) -> TouchFrame? {
        switch event.code {
        case SynchronizationCode.report:
            if discardingUntilReport {
                // A raw stream with no one to resync it: whatever was down is unknown now,
                // so end it rather than leave it stuck.
                discardingUntilReport = false
                endEverything()
            }
            return makeFrame(at: event.time)
        case SynchronizationCode.dropped:
            droppedReports += 1
            discardingUntilReport = true
            return nil
        default:
            return nil
        }
    }

    private mutating func multitouchAxis(_ code: UInt16, _ value: Int32) {
        if code == AbsoluteAxis.slot {
            currentSlot = Int(value)
            return
        }
        // A slot outside the device's range (a firmware bug) is ignored rather than trusted.
        guard slots.indices.contains(currentSlot) else { return }
        switch code {
        case AbsoluteAxis.trackingID:
            setTrackingID(value, in: currentSlot)
        case AbsoluteAxis.positionX:
            if slots[currentSlot].x != value { slots[currentSlot].x = value; apply(.move, to: currentSlot) }
        case AbsoluteAxis.positionY:
            if slots[currentSlot].y != value { slots[currentSlot].y = value; apply(.move, to: currentSlot) }
        case AbsoluteAxis.multitouchPressure:
            slots[currentSlot].pressure = value
        case AbsoluteAxis.touchMajor:
            slots[currentSlot].touchMajor = value
        case AbsoluteAxis.touchMinor:
            slots[currentSlot].touchMinor = value
        case AbsoluteAxis.toolType:
            slots[currentSlot].toolType = value
            if value == ToolType.palm { apply(.palm, to: currentSlot) }
        default:
            break
        }
    }

    private mutating func setTrackingID(_ value: Int32, in index: Int) {
        guard value != slots[index].state.trackingID else { return }
        if value >= 0, let other = slots.indices.first(where: { $0 != index && slots[$0].state.trackingID == value }) {
            // One id is one contact: firmware that reuses an id still down elsewhere loses
            // the older contact, as if that finger had been lost.
            apply(.cancel, to: other)
        }
        // Any other id ends the contact in the slot: −1 by lifting, a new id by replacing it.
        if value >= 0 {
            apply(.land(id: value, palm: slots[index].toolType == ToolType.palm, lost: resyncing), to: index)
        } else {
            apply(.lift(lost: resyncing), to: index)
        }
    }

    /// Moves a slot along its life; a contact that ends is kept for the next frame to report.
    private mutating func apply(_ event: SlotState.Event, to index: Int) {
        let before = slots[index].state
        let (next, ending) = SlotState.transition(before, event)
        if ending != .none {
            slots[index].ended = (before.trackingID, slots[index].x, slots[index].y, ending == .cancelled)
        }
        slots[index].state = next
    }

    private mutating func singleTouchAxis(_ code: UInt16, _ value: Int32) {
        switch code {
        case AbsoluteAxis.x:
            if slots[0].x != value { slots[0].x = value; apply(.move, to: 0) }
        case AbsoluteAxis.y:
            if slots[0].y != value { slots[0].y = value; apply(.move, to: 0) }
        case AbsoluteAxis.pressure:
            slots[0].pressure = value
        default:
            break
        }
    }

    private mutating func singleTouchButton(down: Bool) {
        if down && !slots[0].isDown {
            setTrackingID(nextSyntheticID, in: 0)
            nextSyntheticID = nextSyntheticID == Int32.max ? 0 : nextSyntheticID + 1
        } else if !down && slots[0].isDown {
            setTrackingID(-1, in: 0)
        }
    }

    /// Cancels every contact and forgets every slot.
    private mutating func endEverything() {
        for index in slots.indices { apply(.cancel, to: index) }
    }

    // MARK: Frames

    private mutating func makeFrame(at time: Double) -> TouchFrame? {
        frame.time = time
        frame.contacts.removeAll(keepingCapacity: true)
        for index in slots.indices {
            if let ended = slots[index].ended {
                frame.contacts.append(contact(index, id: ended.trackingID, phase: ended.cancelled ? .cancelled : .ended, x: ended.x, y: ended.y))
                slots[index].ended = nil
            }
        }
        for index in slots.indices {
            let slot = slots[index]
            let phase: TouchPhase
            switch slot.state {
            case .began: phase = .began
            case .down(_, let moved): phase = moved ? .moved : .stationary
            case .empty, .palm: continue
            }
            frame.contacts.append(contact(index, id: slot.state.trackingID, phase: phase, x: slot.x, y: slot.y))
            apply(.report, to: index)
        }
        guard !frame.contacts.isEmpty else { return nil }
        return filters.isActive ? filters.filter(frame) : frame
    }

    private func contact(_ index: Int, id: Int32, phase: TouchPhase, x: Int32, y: Int32) -> TouchContact {
        let slot = slots[index]
        return TouchContact(
            slot: index, trackingID: id, phase: phase, deviceX: x, deviceY: y,
            position: mapper.pixels(x: x, y: y),
            millimetres: mapper.millimetres(x: x, y: y),
            pressure: reportsPressure ? slot.pressure ?? 0 : nil,
            touchMajor: reportsTouchMajor ? slot.touchMajor ?? 0 : nil,
            touchMinor: reportsTouchMinor ? slot.touchMinor ?? 0 : nil
        )
    }
}
