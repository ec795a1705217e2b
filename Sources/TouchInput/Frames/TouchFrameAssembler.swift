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
/// A new id in a slot whose contact is down, with no −1 between, is that contact lifting and
/// a new one landing, as the kernel's slot protocol says, live as in a replay: libevdev drops
/// such an id, and ``TouchDevice`` gives it back.
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
/// Last, the frame's contacts go through the device's ``ContactFilters`` (stuck contacts,
/// palms, jumps, jitter), so that every reader of frames, live or replayed, sees them filtered
/// the same way; ``ContactFilterSettings/off`` gives the device's own frames. Everything up
/// to here is in device units, in one record per slot (``Slot``): the filters' state of a
/// contact sits beside the kernel's. Only what the frame shows is mapped to the screen, once.
/// After setup, reading events allocates
/// nothing; building a frame reuses the previous frame's storage when its reader let go of it.
public struct TouchFrameAssembler {
    /// The device's description.
    public let description: DeviceDescription
    /// Device units to pixels and millimetres: applied once to each contact, as the frame is
    /// made (``mapped(_:at:)``).
    public private(set) var mapper: CoordinateMapper
    /// The device's filter settings, counts and notices; the filters' state of each contact
    /// is its slot's (``Slot/track``).
    var filters: ContactFilters

    /// By slot number: the kernel's state of each contact and the filters'.
    var slots: [Slot]
    private var currentSlot = 0
    private let isMultitouch: Bool
    private let reportsPressure: Bool
    private let reportsTouchMajor: Bool
    private let reportsTouchMinor: Bool
    private var nextSyntheticID: Int32 = 0
    /// The frame's contacts as the kernel's events left them, in device units.
    private var reported: [SlotContact] = []
    /// The same after the filters: what the frame shows.
    var shown: [SlotContact] = []
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
        self.filters = ContactFilters(filters, device: description, mapping: mapping)
        // Millimetres only where the device's size is believed (PanelGeometry): every reader
        // of this mapper measures in what the filters measure in.
        self.mapper = CoordinateMapper(geometry: self.filters.resolved.geometry, mapping: mapping)
        self.protocolA = description.isProtocolA ? ProtocolAConverter(description: description) : nil
        let description = protocolA?.slotted ?? description
        self.isMultitouch = description.isMultitouch
        let absolute = description.codes[EventType.absolute] ?? []
        self.reportsPressure = absolute.contains(isMultitouch ? AbsoluteAxis.multitouchPressure : AbsoluteAxis.pressure)
        self.reportsTouchMajor = absolute.contains(AbsoluteAxis.touchMajor)
        self.reportsTouchMinor = absolute.contains(AbsoluteAxis.touchMinor)
        self.slots = Array(repeating: Slot(), count: isMultitouch ? Swift.max(description.slotCount, 1) : 1)
        // A jump reports two contacts for one slot: room for that, so frames never grow it.
        self.reported.reserveCapacity(slots.count * 2)
        self.shown.reserveCapacity(slots.count * 2)
        self.frame.contacts.reserveCapacity(slots.count * 2)
    }

    /// The filters as they apply to this device: thresholds in its units, and why any is off.
    public var resolvedFilters: ResolvedContactFilters { filters.resolved }

    /// Changes where the device's touches land and how its contacts are filtered (a reload,
    /// a calibration); applies from the next frame, and the contacts down stay followed. The
    /// output's shape takes part in whether the panel's size is believed, so the filters are
    /// resolved again with the mapping.
    public mutating func configure(mapping: OutputMapping, filters settings: ContactFilterSettings) {
        filters.configure(settings, device: description, mapping: mapping)
        mapper = CoordinateMapper(geometry: filters.resolved.geometry, mapping: mapping)
    }

    /// How often each filter acted on this device, since it was opened.
    public var filterCounts: ContactFilters.Counts { filters.counts }

    /// What the filters did since the last call, for the log and the metrics: what they
    /// noticed, and their counts when these changed.
    public mutating func takeFilterReport() -> ContactFilters.Report { filters.takeReport() }

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
        let suppliedLift = protocolA.convert(event) { converted in
            if let frame = consumeProtocolB(converted) { completed = frame }
        }
        if suppliedLift { filters.counts.lastLifts += 1 }
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
            if value == ToolType.palm {
                switch slots[currentSlot].state {
                case .began: slots[currentSlot].markedPalm = true
                case .down: slots[currentSlot].markedPalm = slots[currentSlot].markedPalm ?? false
                case .empty, .palm: break
                }
                apply(.palm, to: currentSlot)
            } else if slots[currentSlot].landedThisFrame, case .palm(let id) = slots[currentSlot].state {
                // A finger landing where a palm lifted was judged by the palm's tool type,
                // which its own, sent after its id, now replaces.
                slots[currentSlot].state = .began(id: id)
                slots[currentSlot].markedPalm = nil
            }
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
            slots[index].landedThisFrame = true
            if slots[index].toolType == ToolType.palm { slots[index].markedPalm = true }
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

    /// The frame the slots report at `time`, filtered and mapped; nil when nothing in it is
    /// left to report.
    private mutating func makeFrame(at time: Double) -> TouchFrame? {
        noticeMarkedPalms(at: time)
        collectContacts()
        guard !reported.isEmpty else { return nil }
        guard filters.isActive else { return mapped(reported, at: time) }
        filter(reported, at: time)
        return mapped(shown, at: time)
    }

    /// Counts in `filtered.palms` and notices (for the log) each contact the panel marked
    /// `MT_TOOL_PALM` since the last frame, as the palm filter does those it finds by size:
    /// one the panel cancelled would otherwise be cancelled unseen. A contact the filters
    /// already ignore (a palm by size first) is not counted twice.
    private mutating func noticeMarkedPalms(at time: Double) {
        for index in slots.indices {
            guard let fromLanding = slots[index].markedPalm else { continue }
            slots[index].markedPalm = nil
            if let track = slots[index].track, track.state == .ignored { continue }
            let id = slots[index].track?.outputID ?? slots[index].state.trackingID
            filters.counts.palms += 1
            filters.notices.append(ContactFilters.Notice(kind: .markedPalm(fromLanding: fromLanding), trackingID: id,
                                                         position: mapper.pixels(x: slots[index].x, y: slots[index].y), time: time))
        }
    }

    /// Gathers the frame's contacts into `reported`: first those that ended, then those down,
    /// so that an id that ends and begins again within one frame reads in order.
    ///
    /// Each contact is made from stored properties alone: a method of the assembler called
    /// while appending to one of its arrays had the optimizer copy the whole assembler, with
    /// a retain of everything it holds, for each contact.
    private mutating func collectContacts() {
        reported.removeAll(keepingCapacity: true)
        for index in slots.indices {
            guard let ended = slots[index].ended else { continue }
            let touchMajor = reportsTouchMajor ? slots[index].touchMajor ?? 0 : nil
            reported.append(SlotContact(slot: index, trackingID: ended.trackingID, phase: ended.cancelled ? .cancelled : .ended,
                                        x: ended.x, y: ended.y, touchMajor: touchMajor))
            slots[index].ended = nil
        }
        for index in slots.indices {
            slots[index].landedThisFrame = false
            let state = slots[index].state
            let phase: TouchPhase
            switch state {
            case .began: phase = .began
            case .down(_, let moved): phase = moved ? .moved : .stationary
            case .empty, .palm: continue
            }
            let touchMajor = reportsTouchMajor ? slots[index].touchMajor ?? 0 : nil
            reported.append(SlotContact(slot: index, trackingID: state.trackingID, phase: phase,
                                        x: slots[index].x, y: slots[index].y, touchMajor: touchMajor))
            apply(.report, to: index)
        }
    }

    /// The frame of `contacts` at `time`, each mapped to the screen: the one place device
    /// units become pixels and millimetres. Nil when there is none.
    mutating func mapped(_ contacts: [SlotContact], at time: Double) -> TouchFrame? {
        guard !contacts.isEmpty else { return nil }
        frame.time = time
        frame.contacts.removeAll(keepingCapacity: true)
        for contact in contacts {
            frame.contacts.append(TouchContact(
                slot: contact.slot, trackingID: contact.trackingID, phase: contact.phase, deviceX: contact.x, deviceY: contact.y,
                position: mapper.pixels(x: contact.x, y: contact.y),
                millimetres: mapper.millimetres(x: contact.x, y: contact.y),
                pressure: contact.measured && reportsPressure ? slots[contact.slot].pressure ?? 0 : nil,
                touchMajor: contact.measured ? contact.touchMajor : nil,
                touchMinor: contact.measured && reportsTouchMinor ? slots[contact.slot].touchMinor ?? 0 : nil
            ))
        }
        return frame
    }
}
