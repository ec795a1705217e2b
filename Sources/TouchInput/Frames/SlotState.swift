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
