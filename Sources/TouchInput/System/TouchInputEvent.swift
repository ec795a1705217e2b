import TouchModel

/// What the input side says of the touchscreens, in one type from where it happens to the
/// daemon: ``TouchInputHub`` reports it, the daemon's input thread hands it to the event loop
/// as it is, a replay makes the same events, and the daemon takes them whole (its state, its
/// clients and its metrics from one switch, its log from another). Everything a device read
/// says carries the device's ``DeviceIdentity``; a node the hub does not read (skipped) has
/// only its node.
public enum TouchInputEvent: Sendable {
    /// A touchscreen was opened and is being read: what it is, and how it is used.
    case added(DeviceIdentity, DeviceDescription, DeviceSetup)
    /// A reload changed how an open touchscreen maps, filters, or whether it is grabbed.
    case reconfigured(DeviceIdentity, DeviceSetup)
    /// A frame from a device; `readAt`, for a panel's frame, is when the input thread read the
    /// event that completed it (the monotonic clock): where motiond's own part of the latency
    /// to the apps begins (a virtual touchscreen's write ends it). Nil for frames not read
    /// from a panel (a replay's, a test's), which time nothing.
    case frame(TouchFrame, from: DeviceIdentity, readAt: Double? = nil)
    /// A contact filter acted on a contact (once per contact and decision, for the log).
    case filtered(DeviceIdentity, ContactFilters.Notice)
    /// A device's filter counts changed; these are its totals since it was opened.
    case filterCounts(DeviceIdentity, ContactFilters.Counts)
    /// The kernel dropped a device's events (`SYN_DROPPED`) and it was resynced; `total`
    /// counts the drops since the device was opened.
    case eventsDropped(DeviceIdentity, total: Int)
    /// A touchscreen is no longer read, for `why`; its contacts were cancelled first, in a
    /// last frame.
    case removed(DeviceIdentity, why: Removal = .unplugged)
    /// A device was found but is not read: not selected, not a touchscreen, not openable,
    /// or its description is invalid.
    case skipped(node: String, reason: TouchInputHub.SkipReason)
    /// A device that was skipped went away.
    case skippedRemoved(node: String)

    /// Why a touchscreen is no longer read: its clients and its state forget it alike, but
    /// an operator reading the log wants to tell a panel that was unplugged (or failed) from
    /// one that motiond let go of.
    public enum Removal: Sendable {
        /// It went away: unplugged.
        case unplugged
        /// Reading it failed (`errno`), though it was not unplugged: a driver's or a fake
        /// node's fault, which the operator needs named.
        case failed(errno: Int32)
        /// A reload's configuration no longer selects it.
        case deselected
        /// motiond is stopping.
        case stopped
    }
}
