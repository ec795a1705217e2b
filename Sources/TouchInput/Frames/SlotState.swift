import TouchModel

/// Where a slot's contact is in its life: one state per slot, as libinput keeps one per
/// touch, and one function for every change (``transition(_:_:)``).
enum SlotState: Equatable {
    /// No contact.
    case empty
    /// A contact that landed since the last frame: the next frame reports it `began`.
    case began(id: Int32)
    /// A contact down and reported; whether it moved since the last frame.
    case down(id: Int32, moved: Bool)
    /// A palm: tracked by the kernel, hidden from the frames until it lifts.
    case palm(id: Int32)

    /// What happens to a slot.
    enum Event: Equatable {
        /// `ABS_MT_TRACKING_ID` ≥ 0, other than the slot's: a new contact (a palm if the
        /// tool says so). `lost`: during a resync, where an old contact ends by being lost.
        case land(id: Int32, palm: Bool, lost: Bool)
        /// `ABS_MT_TRACKING_ID` −1; `lost` as for `land`.
        case lift(lost: Bool)
        /// A position changed.
        case move
        /// `ABS_MT_TOOL_TYPE` became a palm.
        case palm
        /// The contact is gone without lifting (its id reused elsewhere, events lost, the
        /// device gone).
        case cancel
        /// A frame reported the slot.
        case report
    }

    /// How a contact ended, for the next frame to report where.
    enum Ending: Equatable {
        case none
        case ended
        case cancelled
    }

    /// The slot's life, as a table:
    ///
    /// | state | event | next | the frame reports |
    /// |---|---|---|---|
    /// | empty, palm | land | began (palm if a palm) | `began` |
    /// | began | land | began (palm) | only the new one: the first never happened |
    /// | down | land | began (palm) | `ended` (`cancelled` if lost), then `began` |
    /// | down | move | down, moved | `moved` |
    /// | down | report | down, not moved | `stationary` until it moves |
    /// | began | report | down | (it was reported `began`) |
    /// | down | lift | empty | `ended` (`cancelled` if lost) |
    /// | began, palm | lift | empty | nothing |
    /// | down | palm | palm | `cancelled` |
    /// | began | palm | palm | nothing |
    /// | down | cancel | empty | `cancelled` |
    /// | began, palm | cancel | empty | nothing |
    ///
    /// Any other pair leaves the state as it is.
    static func transition(_ state: SlotState, _ event: Event) -> (next: SlotState, ending: Ending) {
        switch (state, event) {
        case let (.down, .land(id, palm, lost)):
            return (palm ? .palm(id: id) : .began(id: id), lost ? .cancelled : .ended)
        case let (_, .land(id, palm, _)):
            return (palm ? .palm(id: id) : .began(id: id), .none)
        case let (.down(id, _), .move):
            return (.down(id: id, moved: true), .none)
        case let (.down(id, _), .report), let (.began(id), .report):
            return (.down(id: id, moved: false), .none)
        case let (.down, .lift(lost)):
            return (.empty, lost ? .cancelled : .ended)
        case (.began, .lift), (.palm, .lift):
            return (.empty, .none)
        case let (.down(id, _), .palm):
            return (.palm(id: id), .cancelled)
        case let (.began(id), .palm):
            return (.palm(id: id), .none)
        case (.down, .cancel):
            return (.empty, .cancelled)
        case (.began, .cancel), (.palm, .cancel):
            return (.empty, .none)
        default:
            return (state, .none)
        }
    }

    /// The kernel's tracking id, palms included; −1 when empty.
    var trackingID: Int32 {
        switch self {
        case .empty: return -1
        case .began(let id), .down(let id, _), .palm(let id): return id
        }
    }

    /// Whether a frame reports the contact (down, and not a palm).
    var isDown: Bool {
        switch self {
        case .began, .down: return true
        case .empty, .palm: return false
        }
    }
}

/// One slot of a device: everything known of the contact in it, from the kernel's events to
/// the filters' verdict, in device units, as libinput's `struct mt_slot` holds a touch's
/// state, point, hysteresis centre and palm state together. Nothing here is in pixels: the
/// frame maps a contact once, when it is made.
struct Slot {
    /// Where the slot's contact is in its life (``SlotState``).
    var state = SlotState.empty
    /// `ABS_MT_TOOL_TYPE`: per-slot state the kernel sends only when it changes.
    var toolType = ToolType.finger
    /// Whether its contact landed since the last frame, when its tool type may still follow:
    /// the kernel sends a landing's `ABS_MT_TRACKING_ID` before its `ABS_MT_TOOL_TYPE`.
    var landedThisFrame = false
    var x: Int32 = 0
    var y: Int32 = 0
    var pressure: Int32?
    var touchMajor: Int32?
    var touchMinor: Int32?
    /// Set when the panel marked the slot's contact `MT_TOOL_PALM` since the last frame (true:
    /// as it landed, so it never began): counted and noticed with the frame, which knows
    /// where and when, as the palm filter's palms are.
    var markedPalm: Bool?
    /// A contact that ended since the last frame, kept to report where it lifted.
    var ended: (trackingID: Int32, x: Int32, y: Int32, cancelled: Bool)?
    /// What the contact filters know of the contact they follow here; nil when they follow
    /// none. Not always the kernel's contact of this slot: a track re-paired with its finger
    /// moves to the slot that finger is reported in (``ContactFilters``).
    var track: ContactFilters.Track?

    var isDown: Bool { state.isDown }
}

/// A contact of a frame in device units, before the filters judge it and before it is
/// mapped to the screen: the kernel's, or what the filters show of it.
struct SlotContact {
    /// The slot that reports it: whose pressure and size the frame gives it.
    var slot: Int
    var trackingID: Int32
    var phase: TouchPhase
    var x: Int32
    var y: Int32
    /// `ABS_MT_TOUCH_MAJOR` as the frame reports it (nil when the device does not): what the
    /// palm filter reads.
    var touchMajor: Int32?
    /// Whether the frame gives it the slot's pressure and size: a contact the filters cancel
    /// is reported bare, since what it measures is what they refused.
    var measured = true
}
