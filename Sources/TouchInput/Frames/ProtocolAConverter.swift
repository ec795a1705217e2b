import CMtdev
import Glibc

/// Turns multitouch protocol A into protocol B through libmtdev, as libinput does.
///
/// Protocol A panels (older N-trig, eGalax and Hanvon firmware) have no slots: each frame
/// lists every contact down, one after another, each ended by `SYN_MT_REPORT`, usually with
/// no tracking id. libmtdev matches each frame's contacts to the last frame's and gives them
/// slots and tracking ids, so ``TouchFrameAssembler`` reads such a panel like any other.
///
/// libmtdev holds state (the contacts it is tracking), so this is a class. It converts
/// events handed to it and never reads a device, so live devices and recordings take the
/// same path.
public final class ProtocolAConverter {
    /// The most contacts read from one protocol A frame; the rest of the frame is dropped.
    ///
    /// libmtdev tracks at most 32 contacts, and a frame of 32 or more makes it loop forever
    /// (libmtdev 1.1.6, measured), so a firmware bug or a hostile recording must not reach it.
    /// Touchscreens report ten or so.
    public static let maximumContacts = 31

    /// The slots libmtdev numbers its contacts in.
    public static let slotCount = 32

    /// The description protocol B events from this converter fit: the device's own, with the
    /// slots and tracking ids libmtdev adds.
    let slotted: DeviceDescription

    private let description: DeviceDescription
    private var mtdev: UnsafeMutablePointer<mtdev>
    private var contactsInFrame = 0
    /// Whether this frame carried any multitouch axis (a contact not yet ended by
    /// `SYN_MT_REPORT` still counts as something said).
    private var axesInFrame = false
    private var event = input_event()

    /// Creates a converter for a protocol A device, configured from its description.
    init(description: DeviceDescription) {
        self.description = description
        self.mtdev = Self.makeMtdev(for: description)
        var slotted = description
        slotted.codes[EventType.absolute, default: []].formUnion([AbsoluteAxis.slot, AbsoluteAxis.trackingID])
        slotted.axes[AbsoluteAxis.slot] = AxisInfo(value: 0, minimum: 0, maximum: Int32(Self.slotCount - 1), fuzz: 0, flat: 0, resolution: 0)
        slotted.axes[AbsoluteAxis.trackingID] = AxisInfo(value: 0, minimum: 0, maximum: 65535, fuzz: 0, flat: 0, resolution: 0)
        self.slotted = slotted
    }

    // mtdev_delete alone frees only the struct: the state mtdev_init allocated would leak.
    deinit { mtdev_close_delete(mtdev) }

    /// Converts one event, calling `emit` with each protocol B event it completes (a frame's
    /// worth at each `SYN_REPORT`). Returns whether it lifted the last contact for firmware
    /// that ended its last touch without the empty `SYN_MT_REPORT`: counted with the
    /// device's filters (``ContactFilters/Counts/lastLifts``).
    @discardableResult
    func convert(_ input: InputEvent, _ emit: (InputEvent) -> Void) -> Bool {
        switch (input.type, input.code) {
        case (EventType.synchronization, SynchronizationCode.report):
            if contactsInFrame == 0 && !axesInFrame {
                // A frame with no contact at all means every finger lifted, but libmtdev only
                // hears that from an empty SYN_MT_REPORT, which the kernel's documentation asks
                // for and some firmware (an N-trig of 2011) never sends: its last finger
                // would stay down forever. Say it for the firmware.
                put(EventType.synchronization, SynchronizationCode.multitouchReport, 0, at: input.time, emit)
                var lifted = false
                put(input.type, input.code, input.value, at: input.time) { event in
                    if event.type == EventType.absolute && event.code == AbsoluteAxis.trackingID && event.value < 0 { lifted = true }
                    emit(event)
                }
                contactsInFrame = 0
                axesInFrame = false
                return lifted
            }
            contactsInFrame = 0
            axesInFrame = false
        case (EventType.synchronization, SynchronizationCode.multitouchReport):
            contactsInFrame += 1
            guard contactsInFrame <= Self.maximumContacts else { return false }
        case (EventType.absolute, AbsoluteAxis.touchMajor...AbsoluteAxis.multitouchPressure):
            // libmtdev's own codes (not ABS_MT_SLOT, which a protocol A device never sends).
            axesInFrame = true
            guard contactsInFrame < Self.maximumContacts else { return false }
        default:
            // Nothing else is multitouch: single-touch emulation the assembler ignores on a
            // multitouch device, and codes libmtdev's tables do not cover.
            return false
        }
        put(input.type, input.code, input.value, at: input.time, emit)
        return false
    }

    /// Puts one event into libmtdev and emits what it gives back.
    private func put(_ type: UInt16, _ code: UInt16, _ value: Int32, at time: Double, _ emit: (InputEvent) -> Void) {
        // libmtdev reads no times: what it emits, it emits at the SYN_REPORT being put, so
        // that event's time (exact, not rounded to microseconds) stamps them all.
        event.type = type
        event.code = code
        event.value = value
        mtdev_put_event(mtdev, &event)
        while mtdev_empty(mtdev) == 0 {
            mtdev_get_event(mtdev, &event)
            emit(InputEvent(time: time, type: event.type, code: event.code, value: event.value))
        }
    }

    /// Forgets every contact: after a `SYN_DROPPED` the next frame, which lists every contact
    /// down (protocol A carries no state), starts them afresh.
    func reset() {
        mtdev_close_delete(mtdev)
        mtdev = Self.makeMtdev(for: description)
        contactsInFrame = 0
        axesInFrame = false
    }

    private static func makeMtdev(for description: DeviceDescription) -> UnsafeMutablePointer<mtdev> {
        guard let mtdev = mtdev_new(), mtdev_init(mtdev) == 0 else {
            fatalError("libmtdev cannot allocate its state")
        }
        // With ABS_MT_TRACKING_ID (protocol A with contact tracking), libmtdev keeps the
        // firmware's contacts apart by it.
        for code in AbsoluteAxis.touchMajor...AbsoluteAxis.multitouchPressure {
            guard let axis = description.axes[code], description.has(EventType.absolute, code) else { continue }
            mtdev_set_mt_event(mtdev, Int32(code), 1)
            mtdev_set_abs_minimum(mtdev, Int32(code), axis.minimum)
            mtdev_set_abs_maximum(mtdev, Int32(code), axis.maximum)
            mtdev_set_abs_fuzz(mtdev, Int32(code), axis.fuzz)
            mtdev_set_abs_resolution(mtdev, Int32(code), axis.resolution)
        }
        return mtdev
    }
}
